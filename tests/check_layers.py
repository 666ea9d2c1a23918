#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The layers of the tree, checked: includes and calls go down, never in a circle.

Usage: check_layers.py SOURCE_DIR BUILD_DIR [--group c|python] [--nm NM]

Layers, lowest first (a file's layer is its top folder):

    codecs, shm  (0)  bytes, knowing no component
    core         (1)  the component model and the backend interface
    worker       (2)  a worker process's side
    backends     (3)  plugin/ manifest/ python/ remote/ worker/
    bindings     (4)  request/ cli/ http/ python/

A *part* is a layer folder (codecs, shm, core with core/gradcheck,
worker) or one folder under backends/ or bindings/ (with its subfolders).

Group "c" (the default) checks every C file under codecs/ shm/ core/
worker/ backends/ bindings/ except bindings/python; group "python" checks
bindings/python: the C sources of the extension (src/ext) and the modules
of the package (src/tessera).

Rules on #include "..." and #include <...> (a header is found beside the
including file, then from the root, include/, the build's include/, then
as a unique path under the six folders, the way CMake's -I finds
tessera_serve.h); a header that is not in the tree (system, Python, XLA)
is not checked:

  I1  include/tessera (and the generated build/include/tessera) is the
      public contract: any file may include it.
  I2  a file includes only its own layer or a lower one.
  I3  a backend never includes another backend's folder.
  I4  a face (bindings/cli, bindings/http, bindings/python) includes only
      the public headers, its own folder, and bindings/http/tessera_serve.h
      (the serve API, for `tessera serve` and tessera.serve).
      bindings/request is compiled into the library: it may include the
      layers below like any library file.
  I5  internal.h and *_internal.h belong to their part: no other part
      includes them.

Rules on calls (and references to data), from the object files of
tessera_objects, tessera_serve, tessera_cli, tessera-worker and
tessera-python (the Python bridge) found under BUILD_DIR, read with nm:
each defined global symbol is mapped to its source file, each undefined
one to the file that defines it in the same program (the program's own
objects first, then the ones it links), giving file -> file edges:

  C1  a file calls only its own layer or a lower one. The one exception:
      core/backends.c, the backend table, names each backend's
      *_backend_ops.
  C2  a backend never calls another backend.
  C3  a face calls the library only through the public API (tsr_*), and
      another face only through the serve API (tessera_serve.h).

Circles:

  K1  the file graph (all call edges above, the whole tree at once, so
      that core/ and core/gradcheck/ count as one; the backend table's
      *_backend_ops edges left out: they register, they do not use) has no
      strongly connected component of more than one file: files that call
      each other both ways are one concern split in two, or two concerns
      tangled; the report names every edge of the component (with its
      symbols) so that one can see which function to move.
  K2  headers do not include each other in a circle.

For the Python extension (its objects are built by pip, not here) the
call graph comes from the sources: a global defined in one src/ext file
(a function or data definition at file level, not static) and named in
another is an edge. For the package, the imports between the modules of
one package folder (tessera/, tessera/dask/, tessera/jax/, ...), read
with ast: top-level and function-level imports both count ("from . import
_x", "from ._x import y", "from tessera._x import y", "import
tessera._x"); "from . import name" where name is not a module of the folder
is an import of the folder's __init__.py when __init__.py binds it (else
it is a compiled module such as tessera._ext, not a file of the folder).

Exit status 0 when every rule holds, 1 with one line per broken rule
(file, line or symbol, the rule), 2 when the check cannot run (no objects
in BUILD_DIR: build first).
"""

import argparse
import ast
import os
import re
import subprocess
import sys

LAYER_DIRS = ("codecs", "shm", "core", "worker", "backends", "bindings")
LEVEL = {"codecs": 0, "shm": 0, "core": 1, "worker": 2, "backends": 3, "bindings": 4}
PUBLIC = -1
FACES = ("bindings/cli", "bindings/http", "bindings/python")
SERVE_API = "bindings/http/tessera_serve.h"
BACKEND_TABLE = "core/backends.c"

# Programs whose objects are read, and what each links after its own
# objects (the symbol a file needs is found there, in this order).
PROGRAMS = {
    "tessera_objects": [],
    "tessera_serve": ["tessera_objects"],
    "tessera_cli": ["tessera_serve", "tessera_objects"],
    "tessera_worker": ["tessera_objects"],
    "tessera_pybridge": ["tessera_objects"],
}
REQUIRED_PROGRAMS = ("tessera_objects", "tessera_serve", "tessera_cli", "tessera_worker")


def part_of(rel):
    """The part a source path belongs to, or None when outside the layers."""
    bits = rel.split("/")
    if bits[0] not in LAYER_DIRS:
        return None
    if bits[0] in ("backends", "bindings") and len(bits) > 2:
        return bits[0] + "/" + bits[1]
    return bits[0]


def level_of(rel):
    if rel.startswith("include/") or rel.startswith("<build>/include/"):
        return PUBLIC
    top = rel.split("/")[0]
    return LEVEL.get(top)


def layer_name(rel):
    return "public" if level_of(rel) == PUBLIC else rel.split("/")[0]


def in_group(rel, group):
    py = rel.startswith("bindings/python/")
    return py if group == "python" else not py


# ---------------------------------------------------------------- sources


def source_files(src):
    """Every .c/.h under the layer folders, relative to src."""
    out = []
    for top in LAYER_DIRS:
        for root, dirs, files in os.walk(os.path.join(src, top)):
            dirs[:] = sorted(d for d in dirs if d not in ("__pycache__", "build"))
            for f in sorted(files):
                if f.endswith((".c", ".h")):
                    out.append(os.path.relpath(os.path.join(root, f), src))
    return out


def strip_c(text):
    """C text with comments, string and character literals blanked (newlines
    kept, so that line numbers hold)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "/" and text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(c + " " * (min(j, n) - i - 1) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


INCLUDE_RE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^">]+)[">]', re.M)


def includes_of(src, rel):
    """(line, spelled, quoted) of every #include of a file."""
    with open(os.path.join(src, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    out = []
    for m in INCLUDE_RE.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        out.append((line, m.group(2), m.group(1) == '"'))
    return out


def resolver(src, build, files):
    by_suffix = {}
    for rel in files:
        bits = rel.split("/")
        for k in range(len(bits)):
            by_suffix.setdefault("/".join(bits[k:]), []).append(rel)

    def resolve(rel, spelled, quoted):
        """The included file as a tree path, "include/..." for the public
        headers, None when not ours; a list when it cannot tell."""
        cands = []
        if quoted:
            cands.append(os.path.normpath(os.path.join(os.path.dirname(rel), spelled)))
        cands.append(os.path.normpath(spelled))
        for c in cands:
            if part_of(c) is not None and os.path.isfile(os.path.join(src, c)):
                return c
        if os.path.isfile(os.path.join(src, "include", spelled)):
            return "include/" + spelled
        if os.path.isfile(os.path.join(build, "include", spelled)):
            return "<build>/include/" + spelled
        hits = by_suffix.get(os.path.normpath(spelled), [])
        if len(hits) == 1:
            return hits[0]
        if len(hits) > 1:
            return hits
        return None

    return resolve


def check_includes(src, build, files, group, problems, header_edges):
    resolve = resolver(src, build, files)
    for rel in files:
        if not in_group(rel, group):
            continue
        pa, la = part_of(rel), level_of(rel)
        for line, spelled, quoted in includes_of(src, rel):
            tgt = resolve(rel, spelled, quoted)
            if tgt is None:
                continue
            where = "%s:%d: #include %s" % (rel, line, spelled)
            if isinstance(tgt, list):
                problems.append("%s: found as %s; include it by its path from the root"
                                % (where, " and ".join(tgt)))
                continue
            if rel.endswith(".h") and tgt.endswith(".h") and part_of(tgt) is not None:
                header_edges.setdefault(rel, {}).setdefault(tgt, []).append(line)
            lb = level_of(tgt)
            if lb == PUBLIC:
                continue                                              # I1
            pb = part_of(tgt)
            if lb > la:
                problems.append("%s (%s, layer %s) from layer %s [I2: a file includes only its "
                                "layer or a lower one]" % (where, tgt, layer_name(tgt),
                                                           layer_name(rel)))
            elif pa != pb and pa.startswith("backends/") and pb.startswith("backends/"):
                problems.append("%s (%s) [I3: a backend never includes another backend's folder]"
                                % (where, tgt))
            elif pa in FACES and pb != pa and tgt != SERVE_API:
                problems.append("%s (%s) [I4: a face includes only the public headers, its own "
                                "folder and %s]" % (where, tgt, SERVE_API))
            elif pb != pa and re.search(r"(^|_)internal\.h$", os.path.basename(tgt)):
                problems.append("%s (%s) [I5: %s is internal to %s/]"
                                % (where, tgt, os.path.basename(tgt), pb))


# ---------------------------------------------------------------- objects


def find_objects(src, build):
    """{program: [(object path, source rel)]} for the programs of PROGRAMS."""
    found = {}
    for root, dirs, files in os.walk(build):
        dirs.sort()
        base = os.path.basename(root)
        if not base.endswith(".dir") or base[:-4] not in PROGRAMS:
            continue
        prog = base[:-4]
        # build/<dir>/CMakeFiles/<prog>.dir/<rest>.o was compiled from <dir>/<rest>
        cmake_files = os.path.dirname(root)
        src_dir = os.path.relpath(os.path.dirname(cmake_files), build)
        objs = found.setdefault(prog, [])
        for r2, d2, f2 in os.walk(root):
            d2.sort()
            for f in sorted(f2):
                if not f.endswith(".c.o"):
                    continue
                rest = os.path.relpath(os.path.join(r2, f), root)[:-2]
                rel = os.path.normpath(os.path.join(src_dir, rest))
                if os.path.isfile(os.path.join(src, rel)):
                    objs.append((os.path.join(r2, f), rel))
        dirs[:] = []
    return found


def read_symbols(nm, objects):
    """{object: (defined set, undefined set)} with one nm for all."""
    paths = [o for objs in objects.values() for o, _ in objs]
    res = subprocess.run([nm, "-P", "-A", "-g"] + paths, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr)
        raise SystemExit(2)
    syms = {p: (set(), set()) for p in paths}
    for line in res.stdout.splitlines():
        head, _, tail = line.rpartition(": ")
        if not head:
            head, _, tail = line.partition(": ")
        bits = tail.split()
        if len(bits) < 2 or head not in syms:
            continue
        name, kind = bits[0], bits[1]
        if kind in ("U", "w", "v"):
            syms[head][1].add(name)
        else:
            syms[head][0].add(name)
    return syms


def call_edges(objects, syms):
    """{(from, to): set of symbols} between source files."""
    definer = {}
    for prog, objs in objects.items():
        d = definer.setdefault(prog, {})
        for o, rel in objs:
            for s in syms[o][0]:
                d.setdefault(s, rel)
    edges = {}
    for prog, objs in objects.items():
        chain = [prog] + PROGRAMS[prog]
        for o, rel in objs:
            for s in syms[o][1]:
                for p in chain:
                    tgt = definer.get(p, {}).get(s)
                    if tgt is not None:
                        if tgt != rel:
                            edges.setdefault((rel, tgt), set()).add(s)
                        break
    return edges


def serve_api_names(src):
    with open(os.path.join(src, SERVE_API), encoding="utf-8") as f:
        return set(re.findall(r"\b([A-Za-z_]\w*)\s*\(", strip_c(f.read())))


def check_calls(src, edges, group, problems):
    api = serve_api_names(src)
    for (a, b), names in sorted(edges.items()):
        if not in_group(a, group):
            continue
        pa, pb, la, lb = part_of(a), part_of(b), level_of(a), level_of(b)
        if pa is None or pb is None:
            continue
        names = sorted(names)
        if lb > la:
            bad = [s for s in names
                   if not (a == BACKEND_TABLE and pb.startswith("backends/")
                           and s.endswith("_backend_ops"))]
            if bad:
                problems.append("%s calls %s: %s [C1: a file calls only its layer or a lower one "
                                "(%s -> %s)]" % (a, b, ", ".join(bad), layer_name(a),
                                                 layer_name(b)))
        elif pa != pb and pa.startswith("backends/") and pb.startswith("backends/"):
            problems.append("%s calls %s: %s [C2: a backend never calls another backend]"
                            % (a, b, ", ".join(names)))
        elif pa in FACES and pb != pa:
            if pb in FACES:
                bad = [s for s in names if s not in api]
                rule = "another face only through %s" % SERVE_API
            else:
                bad = [s for s in names if not s.startswith("tsr_")]
                rule = "the library only through the public API (tsr_*)"
            if bad:
                problems.append("%s calls %s: %s [C3: a face calls %s]"
                                % (a, b, ", ".join(bad), rule))


# ---------------------------------------------------------------- circles


def strongly_connected(nodes, succ):
    """Tarjan's components (iterative), each a sorted list."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            pushed = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                    pushed = True
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            if pushed:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def check_circles(edges, group, problems, what, rule):
    """edges: {(a, b): labels}. One problem per component of > 1 node."""
    succ, nodes = {}, set()
    for a, b in edges:
        if in_group(a, group) and in_group(b, group):
            succ.setdefault(a, set()).add(b)
            nodes.update((a, b))
    for comp in strongly_connected(nodes, succ):
        if len(comp) < 2:
            continue
        members = set(comp)
        lines = ["%s in a circle: %s [%s]" % (what, ", ".join(comp), rule)]
        for (a, b), labels in sorted(edges.items()):
            if a in members and b in members:
                lines.append("    %s -> %s: %s" % (a, b, ", ".join(str(x) for x in sorted(labels))))
        problems.append("\n".join(lines))


# ---------------------------------------------------------------- extension


def ext_edges(src, ext_dir):
    """Call edges between the C files of the extension, from their text."""
    files = sorted(f for f in os.listdir(os.path.join(src, ext_dir)) if f.endswith(".c"))
    defined, idents = {}, {}
    for f in files:
        rel = ext_dir + "/" + f
        with open(os.path.join(src, rel), encoding="utf-8") as fh:
            text = strip_c(fh.read())
        text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)
        toks = re.findall(r"[A-Za-z_]\w*|[{}();=\[\]]", text)
        idents[rel] = set(t for t in toks if t[0].isalpha() or t[0] == "_")
        depth, decl = 0, []
        for t in toks:
            if depth == 0 and t in ("{", ";"):
                if not ({"static", "extern", "typedef"} & set(decl)) and decl:
                    name = None
                    if "=" in decl:
                        k = decl.index("=")
                        name = next((x for x in reversed(decl[:k]) if x[0].isalpha() or x[0] == "_"), None)
                    elif t == "{" and "(" in decl:
                        k = decl.index("(")
                        name = decl[k - 1] if k > 0 else None
                    if name and name not in ("struct", "union", "enum"):
                        defined.setdefault(name, rel)
                decl = []
            else:
                decl.append(t)
            if t == "{":
                depth += 1
            elif t == "}":
                depth -= 1
                if depth == 0:
                    decl = []
    edges = {}
    for rel, ids in idents.items():
        for name in ids:
            tgt = defined.get(name)
            if tgt and tgt != rel:
                edges.setdefault((rel, tgt), set()).add(name)
    return edges


# ---------------------------------------------------------------- Python


def bound_names(path, pkg):
    """Names an __init__.py binds at its top level (not the submodules it
    imports: "from . import _ext" binds a module, not a name of its own)."""
    with open(path, encoding="utf-8") as fh:
        tree = ast.parse(fh.read(), path)
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.ImportFrom) and (
                (node.level == 1 and not node.module) or (not node.level and node.module == pkg)):
            continue
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                names.update(n.id for n in ast.walk(t) if isinstance(n, ast.Name))
    return names


def python_edges(src, pkg_root):
    """Import edges between modules of one package folder."""
    root = os.path.join(src, pkg_root)
    edges = {}
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x != "__pycache__")
        if "__init__.py" not in files:
            continue
        pkg = os.path.relpath(d, os.path.dirname(root)).replace(os.sep, ".")
        mods = {f[:-3] for f in files if f.endswith(".py")}
        init_names = bound_names(os.path.join(d, "__init__.py"), pkg)
        subpkgs = {x for x in dirs if os.path.isfile(os.path.join(d, x, "__init__.py"))}
        here = set(mods) | subpkgs
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            rel = os.path.relpath(os.path.join(d, f), src)
            this = f[:-3]
            with open(os.path.join(d, f), encoding="utf-8") as fh:
                tree = ast.parse(fh.read(), rel)

            def target(name):
                """The module of this folder an absolute dotted name is, or None."""
                if name == pkg:
                    return "__init__"
                if name.startswith(pkg + "."):
                    head = name[len(pkg) + 1:].split(".")[0]
                    if head in mods:
                        return head
                    if head in subpkgs:
                        return None                # another folder
                return None

            for node in ast.walk(tree):
                found = []
                if isinstance(node, ast.Import):
                    for a in node.names:
                        found.append((target(a.name), a.name))
                elif isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = pkg.split(".")
                        if node.level > 1:
                            base = base[:-(node.level - 1)]
                        absmod = ".".join(base + ([node.module] if node.module else []))
                    else:
                        absmod = node.module or ""
                    t = target(absmod)
                    if absmod == pkg:
                        for a in node.names:
                            if a.name in mods:
                                found.append((a.name, "from %s import %s" % (absmod, a.name)))
                            elif a.name in init_names:
                                found.append(("__init__", "from %s import %s" % (absmod, a.name)))
                    elif t is not None:
                        found.append((t, "from %s import ..." % absmod))
                for t, label in found:
                    if t is None or t == this or t not in here:
                        continue
                    tgt = os.path.relpath(os.path.join(d, t + ".py"), src)
                    edges.setdefault((rel, tgt), set()).add("line %d: %s" % (node.lineno, label))
    return edges


# ---------------------------------------------------------------- main


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source_dir")
    ap.add_argument("build_dir")
    ap.add_argument("--group", choices=("c", "python"), default="c")
    ap.add_argument("--nm", default="nm")
    args = ap.parse_args()
    src, build = os.path.abspath(args.source_dir), os.path.abspath(args.build_dir)

    files = source_files(src)
    problems, header_edges = [], {}
    check_includes(src, build, files, args.group, problems, header_edges)
    inc_edges = {(a, b): ["line %d" % x for x in lines]
                 for a, tos in header_edges.items() for b, lines in tos.items()}
    check_circles(inc_edges, args.group, problems, "headers",
                  "K2: headers do not include each other in a circle")

    if args.group == "c":
        objects = find_objects(src, build)
        missing = [p for p in REQUIRED_PROGRAMS if not objects.get(p)]
        if missing:
            sys.stderr.write("check_layers: no object files of %s under %s (build first)\n"
                             % (", ".join(missing), build))
            return 2
        edges = call_edges(objects, read_symbols(args.nm, objects))
        nobj = sum(len(v) for v in objects.values())
    else:
        edges = ext_edges(src, "bindings/python/src/ext")
        nobj = 0
    check_calls(src, edges, args.group, problems)
    # The backend table names the backends below it: an edge of
    # registration, not of use, left out of the circles.
    graph = {(a, b): n for (a, b), n in edges.items()
             if not (a == BACKEND_TABLE and all(s.endswith("_backend_ops") for s in n))}
    check_circles(graph, args.group, problems, "files",
                  "K1: files call each other in a circle")
    if args.group == "python":
        check_circles(python_edges(src, "bindings/python/src/tessera"), args.group, problems,
                      "Python modules", "K1: modules of a package import each other in a circle")

    for p in problems:
        print(p)
    print("check_layers (%s): %d files, %d objects, %d call edges: %s"
          % (args.group, sum(1 for f in files if in_group(f, args.group)), nobj, len(edges),
             "%d broken" % len(problems) if problems else "all rules hold"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
