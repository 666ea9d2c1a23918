#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fails on a broken relative link in README.md or the docs tree.

mkdocs checks the links between pages of docs/, but not README.md, and not
links from the docs to the repository's sources (headers, examples, tests),
which lie outside docs/. This script checks every Markdown link and image
of README.md and docs/**/*.md (outside code): a relative target must exist
in the repository, and a #fragment into a Markdown file (or within one)
must name one of its headings, slugged as mkdocs (Python-Markdown's toc)
slugs them. Links with a scheme (https:, mailto:) are not fetched.

  scripts/check_doc_links.py [ROOT]      exit 1 listing each broken link
"""
import pathlib
import re
import sys
import unicodedata

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def slug(text):
    text = re.sub(r"<[^>]+>", "", text.replace("`", ""))
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("\\", "")
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def prose(path, raw=False):
    """The lines of a Markdown file outside fenced code (blank inside it),
    inline code removed unless raw."""
    out, fence = [], None
    for ln in path.read_text(encoding="utf-8").split("\n"):
        m = re.match(r"^\s*(```+|~~~+)", ln)
        if m:
            if fence is None:
                fence = m.group(1)[:3]
            elif m.group(1).startswith(fence):
                fence = None
            out.append("")
            continue
        out.append("" if fence else ln if raw else re.sub(r"`[^`]*`", "``", ln))
    return out


def anchors(path, cache={}):
    """The ids of a file's headings, as mkdocs gives them (dupes get _1, _2)."""
    if path not in cache:
        seen, names = {}, set()
        for ln in prose(path, raw=True):
            m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", ln)
            if not m:
                continue
            s = slug(m.group(1))
            n = seen.get(s, 0)
            names.add(s if n == 0 else f"{s}_{n}")
            seen[s] = n + 1
        cache[path] = names
    return cache[path]


def check(root):
    files = [root / "README.md"] + sorted((root / "docs").rglob("*.md"))
    problems = []
    for f in files:
        for lineno, ln in enumerate(prose(f), 1):
            for m in LINK.finditer(ln):
                url = m.group(1)
                if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", url):
                    continue
                path, _, frag = url.partition("#")
                target = (f.parent / path).resolve() if path else f
                where = f"{f.relative_to(root)}:{lineno}: {url}"
                if not target.exists():
                    problems.append(f"{where}: no such file")
                elif root.resolve() not in target.resolve().parents and target.resolve() != root.resolve():
                    problems.append(f"{where}: leads outside the repository")
                elif frag and target.suffix == ".md" and frag not in anchors(target):
                    problems.append(f"{where}: no heading '#{frag}' in {target.relative_to(root.resolve())}")
    return problems


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).parent.parent).resolve()
    problems = check(root)
    for p in problems:
        print("FAIL: " + p)
    if not problems:
        print("links: README.md and docs/ have no broken relative link")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
