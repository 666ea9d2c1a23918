#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes the C API and plugin ABI reference pages from the public headers.

docs/reference/c-api.md comes from tessera.h, payload.h and gradcheck.h;
docs/reference/plugin-abi.md from plugin.h. Each page follows its header:
the header's opening comment, its "---- section ----" markers as headings,
and every declaration (function, type, TSR_ macro) with the comment block
that ends on the line right above it. Declarations that follow one another
with no blank line and no comment of their own share the block above the
first of them.

The comment of a function (TSR_API, or static inline tsr_*) is structured:
its text says what it does, and three lines start with a label:
    Thread:     who may call it, and when
    Ownership:  who owns each pointer passed or returned (required when the
                signature has a pointer beyond the first parameter, or
                returns one)
    Returns:    what it returns (required unless it returns void)
A label's text may run on over the lines that follow it.

  scripts/gen_c_reference.py            rewrite both pages
  scripts/gen_c_reference.py --check    exit 1, saying why, when a function
                                        (of the headers or cmake/libtessera.map)
                                        lacks its comment or a required line,
                                        or a committed page differs from what
                                        the headers give
"""
import argparse
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
PAGES = {
    "docs/reference/c-api.md": (
        "C API reference",
        "The host API: opening components, calls, payloads and gradient checks.",
        ["tessera.h", "payload.h", "gradcheck.h"],
    ),
    "docs/reference/plugin-abi.md": (
        "Plugin ABI reference",
        "What a plugin sees: <tessera/plugin.h>, the only header a plugin needs.",
        ["plugin.h"],
    ),
}
LABELS = ("Thread", "Ownership", "Returns")
SECTION = re.compile(r"^/\* -{3,} (.*?) -+ \*/\s*$")


class Decl:
    def __init__(self, kind, names, code, comment, line):
        self.kind, self.names, self.code, self.comment, self.line = kind, names, code, comment, line


def strip_comment(lines):
    """The text of a /* ... */ block, without the comment markers."""
    text = "\n".join(lines)
    text = re.sub(r"^\s*/\*+", "", text, count=1)
    text = re.sub(r"\*+/\s*$", "", text)
    out = []
    for ln in text.split("\n"):
        ln = re.sub(r"^\s*\* ?", "", ln) if re.match(r"^\s*\*(?!/)", ln) else ln.strip()
        out.append(ln.rstrip())
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def func_name(code):
    m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", code)
    return m.group(1) if m else None


def parse(path):
    """Top comment, and a list of ('section', title) and Decl items."""
    lines = path.read_text().split("\n")
    items, top, i, pending, pending_end = [], None, 0, None, -2
    last_decl_end = -2
    while i < len(lines):
        ln = lines[i]
        s = ln.strip()
        m = SECTION.match(s)
        if m:
            items.append(("section", m.group(1)))
            pending = None
            i += 1
            continue
        if s.startswith("/*"):
            j = i
            while "*/" not in lines[j]:
                j += 1
            block = strip_comment(lines[i:j + 1])
            if top is None and i < 5 and "SPDX" in s:
                pass
            elif top is None and not items:
                top = block
            else:
                pending, pending_end = block, j
            i = j + 1
            continue
        start = None
        if s.startswith("TSR_API"):
            start = "func"
        elif s.startswith("static inline") and re.search(r"\btsr_\w+\s*\(", s):
            start = "inline"
        elif s.startswith("typedef") or re.match(r"^(struct|enum)\s+tsr_\w+\s*\{", s):
            start = "type"
        elif re.match(r"^#\s*define\s+TSR_\w+", s):
            start = "define"
        if not start:
            if s.startswith("#if") or s.startswith("#endif") or s.startswith("__attribute__"):
                if pending_end == i - 1:
                    pending_end = i   # a comment still belongs to what follows these
            elif s and not s.startswith("#") and s not in ("}", "extern \"C\" {"):
                pending = None
            i += 1
            continue
        j = i
        if start == "func":
            while ";" not in lines[j]:
                j += 1
            code = "\n".join(lines[i:j + 1])
            code = re.sub(r"\s*/\*.*?\*/\s*$", "", code)
            names = [func_name(code.replace("TSR_API", ""))]
        elif start == "inline":
            sig = []
            while "{" not in lines[j]:
                sig.append(lines[j])
                j += 1
            sig.append(lines[j].split("{")[0].rstrip() + ";")
            depth = lines[j].count("{") - lines[j].count("}")
            while depth > 0:
                j += 1
                depth += lines[j].count("{") - lines[j].count("}")
            code = "\n".join(sig)
            names = [func_name(code.replace("static inline", ""))]
        elif start == "type":
            depth = 0
            while True:
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0 and ";" in lines[j]:
                    break
                j += 1
            code = "\n".join(lines[i:j + 1])
            m2 = re.search(r"(\w+)\s*(\)\s*\(.*\))?\s*;\s*(/\*.*\*/)?\s*$", code)
            fp = re.search(r"\(\s*\*\s*(\w+)\s*\)", code.split("\n")[0])
            names = [fp.group(1) if fp else (m2.group(1) if m2 else "?")]
        else:
            while lines[j].rstrip().endswith("\\"):
                j += 1
            code = "\n".join(lines[i:j + 1])
            names = [re.match(r"^#\s*define\s+(\w+)", s).group(1)]
        trailing = None
        mt = re.search(r"/\*(.*?)\*/\s*$", lines[i]) if start in ("func", "define") and j == i else None
        if mt:
            trailing = [mt.group(1).strip()]
        joined = (last_decl_end == i - 1 and items and isinstance(items[-1], Decl)
                  and pending_end < last_decl_end and items[-1].kind == start and trailing is None)
        if joined:
            prev = items[-1]
            if names[0] not in prev.names:
                prev.names += names
                prev.code += "\n" + code
        elif start == "define" and items and isinstance(items[-1], Decl) and names[0] in items[-1].names:
            pass  # the same macro in another #if branch
        else:
            comment = pending if pending_end == i - 1 else None
            if trailing:
                comment = (comment or []) + trailing
            items.append(Decl(start, names, code, comment, i + 1))
        pending = None
        last_decl_end = j
        i = j + 1
    return top or [], items


def labels_of(comment):
    """{label: text} for the structured lines, and the description lines."""
    found, desc, cur = {}, [], None
    for ln in comment or []:
        m = re.match(r"^\s*(Thread|Ownership|Returns):\s*(.*)$", ln)
        if m:
            cur = m.group(1)
            found[cur] = m.group(2)
        elif cur and ln.strip() and (ln.startswith(" ") or not ln[:1].isupper()):
            found[cur] += " " + ln.strip()
        else:
            cur = None
            desc.append(ln)
    return found, desc


def needs(code, name):
    sig = code.split(name, 1)
    ret, params = sig[0], sig[1] if len(sig) > 1 else ""
    req = ["Thread"]
    if not re.search(r"\bvoid\s*$", ret.replace("TSR_API", "").replace("static inline", "").strip()) \
            or "*" in ret:
        req.append("Returns")
    plist = params.strip()[1:].rsplit(")", 1)[0].split(",")
    if "*" in ret or any("*" in p for p in plist[1:]):
        req.append("Ownership")
    return req


def check(headers_dir, map_path):
    problems, documented = [], set()
    for h in sorted(headers_dir.glob("*.h")):
        _, items = parse(h)
        for d in items:
            if not isinstance(d, Decl) or d.kind not in ("func", "inline"):
                continue
            for name in d.names:
                if d.kind == "inline" and not name.startswith("tsr_"):
                    continue
                documented.add(name)
                where = f"{h.relative_to(ROOT)}:{d.line}: {name}"
                if not d.comment:
                    problems.append(f"{where}: no comment block right above it")
                    continue
                found, _ = labels_of(d.comment)
                one = [c for c in d.code.split("\n\n") if name in c]
                code = d.code if not one else one[0]
                part = next((ln for ln in re.split(r";\s*\n", code) if re.search(rf"\b{name}\s*\(", ln)), code)
                for label in needs(part, name):
                    if not found.get(label, "").strip():
                        problems.append(f"{where}: its comment lacks a '{label}:' line")
    for name in re.findall(r"^\s+(tsr_\w+);", map_path.read_text(), re.M):
        if name not in documented:
            problems.append(f"cmake/libtessera.map: {name}: exported but no documented declaration in a header")
    return problems


def esc(text):
    return re.sub(r"([\\`*_<>\[\]#|])", r"\\\1", text)


def render_text(lines):
    """Comment text as Markdown: indented parts (tables, lists) stay preformatted."""
    if not lines:
        return ""
    if any(re.match(r"^ {2,}\S", ln) for ln in lines):
        return "```text\n" + "\n".join(lines) + "\n```\n"
    paras, cur = [], []
    for ln in lines:
        if ln.strip():
            cur.append(ln.strip())
        elif cur:
            paras.append(" ".join(cur))
            cur = []
    if cur:
        paras.append(" ".join(cur))
    return "\n\n".join(esc(p) for p in paras) + "\n"


def render(page, title, intro, headers, headers_dir):
    out = [f"# {title}", "",
           f"{esc(intro)} Generated by `scripts/gen_c_reference.py` from the comments of "
           + ", ".join(f"`include/tessera/{h}`" for h in headers)
           + "; do not edit by hand: edit the header and run the script (ctest `c_reference` "
           "fails when this page is stale).", ""]
    for h in headers:
        top, items = parse(headers_dir / h)
        out += [f"## <tessera/{h}>".replace("<", "&lt;").replace(">", "&gt;"), "", render_text(top)]
        for it in items:
            if not isinstance(it, Decl):
                out += [f"### {esc(it[1].capitalize())}", ""]
                continue
            label = ", ".join(f"`{n}`" for n in it.names)
            out += [f"#### {label}", "", "```c", it.code.strip("\n"), "```", ""]
            if it.comment:
                found, desc = labels_of(it.comment)
                out.append(render_text(desc))
                for lab in LABELS:
                    if lab in found:
                        out.append(f"- **{lab}:** {esc(found[lab].strip())}")
                if any(lab in found for lab in LABELS):
                    out.append("")
    text = "\n".join(out)
    return re.sub(r"\n{3,}", "\n\n", text).rstrip() + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--root", default=str(ROOT))
    args = ap.parse_args()
    root = pathlib.Path(args.root)
    headers_dir = root / "include" / "tessera"
    problems = check(headers_dir, root / "cmake" / "libtessera.map")
    for page, (title, intro, headers) in PAGES.items():
        text = render(page, title, intro, headers, headers_dir)
        dest = root / page
        if args.check:
            if not dest.exists() or dest.read_text() != text:
                problems.append(f"{page}: stale; run scripts/gen_c_reference.py and commit it")
        else:
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_text(text)
    for p in problems:
        print(("FAIL: " if args.check else "warning: ") + p)
    return 1 if problems and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
