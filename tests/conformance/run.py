#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Conformance with tesseract-core: each example's regression cases
(test_cases/*.json) run by `tessera test` (inproc and worker mode) and by
`tesseract-runtime test` on the same cases, run with the same packages:
from the environment Tessera builds from the example's
tesseract_requirements.txt, or, where this machine's package registries
cannot give them (an --index-url elsewhere), with the host's Python for
both sides, which the table says.

Prints a table (example, mode, cases passed/total by Tessera, cases passed
by tesseract-runtime) and exits 1 when Tessera fails a case that
tesseract-runtime passes. Examples that need what this host cannot give
(Docker, conda, Fortran, a GPU) are listed as skipped with the reason.

  run.py --tessera build/bin/tessera --examples build/third_party/tesseract-examples
         [--short] [--modes inproc,worker] [--no-reference]
         [--option KEY=VALUE ...] [EXAMPLE ...]

--short runs a few quick examples in inproc mode only (the ctest form);
the long form (every example, both modes) belongs in bench/. --option
passes a component option to `tessera test` (start_timeout_ms=180000 on a
loaded machine; python_env=none to use this host's Python as
tesseract-runtime does, where building an example's environment needs a
network this host lacks).
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

EXAMPLES = [
    "binref_passthrough", "empty", "helloworld", "meshstats", "meshstats_finitediff",
    "metrics", "pip_custom_step", "pylock", "qp_solve", "univariate",
    "univariate_gradient_fallbacks", "vectoradd", "vectoradd_jax", "vectoradd_torch",
]
SHORT = ["vectoradd", "univariate", "helloworld", "empty"]
SKIPPED = {
    "_gpu_cupy": "needs a GPU", "_gpu_jax": "needs a GPU", "_gpu_torch": "needs a GPU",
    "cuda": "needs a GPU", "conda": "needs conda", "fortran_enzyme": "needs Fortran (Enzyme)",
    "fortran_heat": "needs Fortran", "_matlab_springmass": "needs MATLAB",
    "_multi-tesseract": "needs Docker (several containers)",
    "inherit_base_image_packages": "needs Docker (a base image's packages)",
    "pyvista-arm64": "needs Docker on arm64", "userhandling": "needs Docker (users)",
    "dataloader": "needs Docker (mounted data)", "file_io": "needs Docker (volume mounts)",
    "localpackage": "needs Docker (a local package in the image)",
    "package_data": "needs Docker (package data in the image)",
    "py310": "needs Docker (Python 3.10 image)", "required_files": "needs Docker (files in the image)",
    "tesseractreference": "needs Docker (another Tesseract)",
}
LINE = re.compile(r"^(PASS|FAIL) (\S+)")


def tessera_run(tessera, folder, mode, timeout, options=()):
    """{case file name: passed?} from `tessera test`, or an error text."""
    args = [tessera, "test", "--mode", mode]
    for o in options:
        args += ["--option", o]
    try:
        p = subprocess.run(args + [folder], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "timed out"
    verdicts = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            verdicts[m.group(2)] = m.group(1) == "PASS"
    if not verdicts:
        return None, (p.stderr.strip().splitlines() or ["no output"])[0][:160]
    return verdicts, [l for l in p.stdout.splitlines() if l.startswith("FAIL")]


ENV_LINE = re.compile(r"Python environment (/\S+)")


def example_environment(tessera, folder, timeout, options=()):
    """(environment folder or None, why not) for an example with
    requirements: the one Tessera builds from them (and reuses), found in
    its log. None when the example has none or it cannot be built here
    (e.g. its requirements name an index this machine cannot reach)."""
    if not os.path.exists(os.path.join(folder, "tesseract_requirements.txt")):
        return None, None
    args = [tessera, "schema", "--mode", "worker", "--option", "log_level=info"]
    for o in options:
        args += ["--option", o]
    try:
        p = subprocess.run(args + [folder], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, "building its environment timed out"
    m = ENV_LINE.search(p.stderr)
    if p.returncode == 0 and m:
        return m.group(1), None
    lines = [l for l in p.stderr.splitlines() if "error" in l.lower()] or p.stderr.splitlines()
    return None, "its environment could not be built: " + (lines[-1] if lines else "?")[:200]


def reference_run(folder, case, timeout, environment=None):
    """tesseract-runtime's status for one case: passed, failed or error;
    the environment's tesseract-runtime when there is one, so that both
    sides run with the same packages."""
    env = dict(os.environ, TESSERACT_API_PATH=os.path.join(folder, "tesseract_api.py"))
    runtime = shutil.which("tesseract-runtime")
    if environment and os.access(os.path.join(environment, "bin", "tesseract-runtime"), os.X_OK):
        runtime = os.path.join(environment, "bin", "tesseract-runtime")
    if runtime is None:
        return "unavailable"
    try:
        p = subprocess.run([runtime, "test", "@" + case], capture_output=True, text=True,
                           timeout=timeout, env=env, cwd=tempfile.gettempdir())
    except subprocess.TimeoutExpired:
        return "timed out"
    try:
        return json.loads(p.stdout.strip().splitlines()[-1])["status"]
    except (ValueError, IndexError, KeyError):
        return "error"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tessera", required=True)
    ap.add_argument("--examples", required=True)
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--modes", default="inproc,worker")
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    if not os.path.isdir(a.examples):
        print(f"skipped: no examples at {a.examples} (scripts/fetch_tesseract_examples.sh)")
        return 0
    names = a.names or (SHORT if a.short else EXAMPLES)
    modes = ["inproc"] if a.short else a.modes.split(",")
    regressions = 0
    print(f"{'example':32s} {'mode':7s} {'tessera':>9s} {'tesseract':>10s}  notes")
    for name in names:
        folder = os.path.join(os.path.abspath(a.examples), name)
        cases_dir = os.path.join(folder, "test_cases")
        if not os.path.isdir(cases_dir):
            print(f"{name:32s} {'-':7s} {'-':>9s} {'-':>10s}  skipped: no test_cases")
            continue
        cases = sorted(f for f in os.listdir(cases_dir) if f.endswith(".json"))
        options = list(a.option)
        environment, no_env = (None, None)
        if "worker" in modes:
            environment, no_env = example_environment(a.tessera, folder, a.timeout, options)
        if no_env:
            # The rule: where this machine's registries cannot give
            # the example's requirements, both sides use the host's Python.
            options.append("python_env=none")
            print(f"{name:32s} {'-':7s} {'-':>9s} {'-':>10s}  host Python: {no_env}")
        ref = {}
        if not a.no_reference:
            ref = {c: reference_run(folder, os.path.join(cases_dir, c), a.timeout, environment)
                   for c in cases}
        ref_passed = sum(1 for s in ref.values() if s == "passed")
        ref_col = f"{ref_passed}/{len(cases)}" if ref else "-"
        for mode in modes:
            verdicts, notes = tessera_run(a.tessera, folder, mode, a.timeout, options)
            if verdicts is None:
                verdicts, notes = {}, [notes]
            passed = sum(verdicts.values())
            worse = [c for c in cases if ref.get(c) == "passed" and not verdicts.get(c, False)]
            regressions += len(worse)
            note = "; ".join(n[:160] for n in notes[:2]) if notes else ""
            print(f"{name:32s} {mode:7s} {passed:>4d}/{len(cases):<4d} {ref_col:>10s}  "
                  f"{'REGRESSION ' + ','.join(worse) + ' ' if worse else ''}{note}")
    if not a.names and not a.short:
        for name, why in sorted(SKIPPED.items()):
            print(f"{name:32s} {'-':7s} {'-':>9s} {'-':>10s}  skipped: {why}")
    print(f"{regressions} case(s) tesseract-runtime passes that Tessera fails")
    return 1 if regressions else 0


if __name__ == "__main__":
    sys.exit(main())
