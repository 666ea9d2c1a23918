#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The docs checks catch what they are there to catch.

Runs scripts/gen_c_reference.py --check and scripts/check_doc_links.py on a
copy of the tree (headers, symbol map, README.md, docs/), first as it is
(both pass), then with one fault each, and fails unless every fault is
refused with a message that names it:
  - a function's comment without its Thread: line, or a pointer-returning
    function's without Ownership:, or a non-void one's without Returns:
  - a new TSR_API function, and a new static inline tsr_ helper, without
    any comment
  - a name in cmake/libtessera.map that no header documents
  - a header comment changed while the committed page was not regenerated
  - a link from README.md to a missing page, to a missing heading, and a
    link inside docs/ to a missing source file
  tests/check_docs_mutations.py ROOT
"""
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(sys.argv[1]).resolve()
failures = []


def run(tree, script):
    args = [sys.executable, str(tree / "scripts" / script)]
    args += ["--check", "--root", str(tree)] if script == "gen_c_reference.py" else [str(tree)]
    p = subprocess.run(args, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def fresh(tmp):
    tree = pathlib.Path(tmp) / "tree"
    if tree.exists():
        shutil.rmtree(tree)
    for d in ("include", "docs", "scripts", "plugins", "bench", "tests", "cmake"):
        if d in ("plugins", "bench", "tests"):   # link targets only: keep them light
            shutil.copytree(ROOT / d, tree / d, ignore=shutil.ignore_patterns("*.bin", "corpus", "regressions"))
        else:
            shutil.copytree(ROOT / d, tree / d)
    for f in ("README.md", "CMakeLists.txt"):
        shutil.copy(ROOT / f, tree / f)
    return tree


def edit(path, old, new):
    text = path.read_text()
    if old not in text:
        failures.append(f"mutation setup: {old!r} not found in {path.name}")
        return
    path.write_text(text.replace(old, new, 1))


def expect(name, tmp, script, mutate, needle):
    tree = fresh(tmp)
    mutate(tree)
    rc, out = run(tree, script)
    if rc == 0 or needle not in out:
        failures.append(f"{name}: rc {rc}, wanted a failure naming {needle!r}; output:\n{out}")
    else:
        print(f"ok: {name}")


with tempfile.TemporaryDirectory() as tmp:
    tree = fresh(tmp)
    for script in ("gen_c_reference.py", "check_doc_links.py"):
        rc, out = run(tree, script)
        if rc != 0:
            failures.append(f"the tree as it is fails {script}:\n{out}")
        else:
            print(f"ok: the tree as it is passes {script}")

    h = lambda t, name: t / "include" / "tessera" / name
    expect("a comment without Thread:", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "tessera.h"), " * Thread: the thread using call; other calls of the component may run at\n",
                          " * Used by one thread; other calls of the component may run at\n"),
           "tsr_call_run: its comment lacks a 'Thread:' line")
    expect("a pointer-returning function without Ownership:", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "payload.h"), " * Ownership: belongs to p and lives as long as it.\n", ""),
           "tsr_payload_seed: its comment lacks a 'Ownership:' line")
    expect("a non-void function without Returns:", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "gradcheck.h"), " * Returns: 1 or 0. */\nTSR_API int tsr_gradcheck_passed",
                          " */\nTSR_API int tsr_gradcheck_passed"),
           "tsr_gradcheck_passed: its comment lacks a 'Returns:' line")
    expect("a new TSR_API function without a comment", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "tessera.h"), "#ifdef __cplusplus\n}\n#endif",
                          "\nTSR_API int tsr_brand_new(tsr_call *call);\n\n#ifdef __cplusplus\n}\n#endif"),
           "tsr_brand_new: no comment block right above it")
    expect("a new inline helper without a comment", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "plugin.h"), "#ifdef __cplusplus\n}\n#endif\n\n#endif /* TESSERA_PLUGIN_H */",
                          "\nstatic inline int tsr_helper_new(tsr_ctx *ctx) {\n    return ctx != 0;\n}\n\n"
                          "#ifdef __cplusplus\n}\n#endif\n\n#endif /* TESSERA_PLUGIN_H */"),
           "tsr_helper_new: no comment block right above it")
    expect("a mapped name no header documents", tmp, "gen_c_reference.py",
           lambda t: edit(t / "cmake" / "libtessera.map", "    tsr_call_cancel;\n",
                          "    tsr_call_cancel;\n    tsr_not_declared;\n"),
           "tsr_not_declared: exported but no documented declaration")
    expect("a comment changed, the page not regenerated", tmp, "gen_c_reference.py",
           lambda t: edit(h(t, "plugin.h"), "The number of elements of an array", "How many elements an array has"),
           "docs/reference/plugin-abi.md: stale")
    expect("a README link to a missing page", tmp, "check_doc_links.py",
           lambda t: edit(t / "README.md", "(docs/guides/modes.md)", "(docs/guides/mode.md)"),
           "README.md:")
    expect("a README link to a missing heading", tmp, "check_doc_links.py",
           lambda t: edit(t / "README.md", "(docs/guides/performance.md#benchmarks)",
                          "(docs/guides/performance.md#benchmark)"),
           "no heading '#benchmark'")
    expect("a docs link to a missing source file", tmp, "check_doc_links.py",
           lambda t: (t / "include" / "tessera" / "plugin.h").unlink(),
           "include/tessera/plugin.h: no such file")

for f in failures:
    print("FAIL: " + f)
sys.exit(1 if failures else 0)
