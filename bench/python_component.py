#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Python components (a Tesseract's tesseract_api.py run by Tessera) against
calling the component's function directly, a memcpy, and tesseract-core's
own in-process client, all measured in the same run, idle and beside CPU
load.

Rows:
  vectoradd       tesseract-core's examples/vectoradd, a and b of 1e3 float32:
                  direct         the module's apply on an InputSchema built once
                  inproc         tessera.load(folder).apply from this Python
                  worker-c       worker mode, one tsr_call_run (ctypes) on a call
                                 prepared once with its inputs in the arena: a C host
                  worker-py      worker mode, Component.apply from this Python
                  tesseract      Tesseract.from_tesseract_api(...).apply
  passthrough     bench/tesseract_noop (y = x), 1e7 float64 in and out:
                  memcpy         np.copyto of the input and of the output: 2 x 80 MB
                  worker-c       as above (input in the arena: no copy in; one out)
                  worker-py      from NumPy memory (one copy in, one out)
                  tesseract      Tesseract.from_tesseract_api
  start           opening vectoradd in worker mode (its environment exists), against
                  a fresh interpreter importing its tesseract_api.py

Budgets (issue "Python components"): worker-c vectoradd <= 30 us; inproc
<= direct + 10 us; worker-c passthrough <= 2 x memcpy; start <= import + 50 ms.

    python3 bench/python_component.py [--quick] [--csv PATH] [--load N]

--load N (default 2) runs the whole set again beside N busy processes.
Prints a table and writes CSV (default build/bench/results/python_component.csv).
Medians of interleaved batches. Exit status 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
EXAMPLES = BUILD / "third_party" / "tesseract-examples"
sys.path.insert(0, str(ROOT / "bench"))

from bench_python import TsrArray, ctypes_library, per_call  # noqa: E402

import tessera  # noqa: E402

# tesseract-core's in-process client writes a run folder per call into its
# output path (the current directory by default).
os.environ.setdefault("TESSERACT_OUTPUT_PATH", tempfile.mkdtemp(prefix="tessera-bench-runs-"))

CODES = {np.dtype(np.float32): 11, np.dtype(np.float64): 12, np.dtype(np.bool_): 1}


class PreparedCall:
    """A C host's call: inputs copied once into tsr_component_alloc memory
    (the arena in worker mode), bound once; run() is one tsr_call_run."""

    def __init__(self, lib, comp: tessera.Component, inputs: dict[str, np.ndarray]) -> None:
        self.lib, self.comp = lib, ctypes.c_void_p(comp._address)
        self.call = lib.tsr_call_new(self.comp, 0)
        self.buffers = []
        for name, value in inputs.items():
            value = np.asarray(value, order="C")  # (ascontiguousarray makes 0-d 1-d)
            mem = lib.tsr_component_alloc(self.comp, max(value.nbytes, 1))
            ctypes.memmove(mem, value.ctypes.data, value.nbytes)
            self.buffers.append(mem)
            arr = TsrArray(mem, CODES[value.dtype], value.ndim)
            for k, n in enumerate(value.shape):
                arr.shape[k] = n
            if lib.tsr_call_set_input(self.call, name.encode(), ctypes.byref(arr)) != 0:
                raise RuntimeError(lib.tsr_call_errmsg(self.call).decode())
        self.run()

    def run(self) -> None:
        if self.lib.tsr_call_run(self.call) != 0:
            raise RuntimeError(self.lib.tsr_call_errmsg(self.call).decode())

    def close(self) -> None:
        self.lib.tsr_call_free(self.call)
        for mem in self.buffers:
            self.lib.tsr_component_free_buffer(self.comp, mem)


def import_module(path: Path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("tesseract_api_bench", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def medians(fns, calls: int, batches: int) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in per_call(fns, calls, batches).items()}


def vectoradd_rows(lib, quick: bool) -> list[tuple[str, str, float]]:
    folder = EXAMPLES / "vectoradd"
    module = import_module(folder / "tesseract_api.py")
    n = 1000
    inputs = {"a": np.linspace(0, 1, n, dtype=np.float32),
              "b": np.linspace(1, 2, n, dtype=np.float32),
              "s": np.array(2.0, dtype=np.float32), "normalize": np.array(False)}
    built = module.InputSchema.model_validate({**inputs, "normalize": False})
    inproc = tessera.load(folder)
    worker = tessera.load(folder, "worker", python_env="none")
    prepared = PreparedCall(lib, worker, inputs)
    from tesseract_core import Tesseract
    ref = Tesseract.from_tesseract_api(str(folder / "tesseract_api.py"))
    fns = {"direct": lambda: module.apply(built), "inproc": lambda: inproc.apply(inputs),
           "worker-c": prepared.run, "worker-py": lambda: worker.apply(inputs)}
    calls, batches = (200, 5) if quick else (2000, 15)
    got = medians(fns, calls, batches)
    got.update(medians({"tesseract": lambda: ref.apply(inputs)}, calls // 20, batches))
    prepared.close()
    inproc.close()
    worker.close()
    return [("vectoradd 1e3", k, v) for k, v in got.items()]


def passthrough_rows(lib, quick: bool) -> list[tuple[str, str, float]]:
    folder = ROOT / "bench" / "tesseract_noop"
    n = 10**6 if quick else 10**7
    x = np.random.default_rng(0).random(n)
    a, b = np.empty_like(x), np.empty_like(x)
    worker = tessera.load(folder, "worker", python_env="none")
    prepared = PreparedCall(lib, worker, {"x": x})
    from tesseract_core import Tesseract
    ref = Tesseract.from_tesseract_api(str(folder / "tesseract_api.py"))

    def memcpy() -> None:
        np.copyto(a, x)
        np.copyto(b, a)

    fns = {"memcpy": memcpy, "worker-c": prepared.run,
           "worker-py": lambda: worker.apply({"x": x}), "tesseract": lambda: ref.apply({"x": x})}
    got = medians(fns, 3, 5 if quick else 11)
    prepared.close()
    worker.close()
    return [(f"passthrough {n:.0e}", k, v) for k, v in got.items()]


def start_rows(quick: bool) -> list[tuple[str, str, float]]:
    folder = EXAMPLES / "vectoradd"
    code = ("import importlib.util as u; s = u.spec_from_file_location('m', %r); "
            "s.loader.exec_module(u.module_from_spec(s))" % str(folder / "tesseract_api.py"))
    imports, starts = [], []
    for _ in range(2 if quick else 5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        imports.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        tessera.load(folder, "worker", python_env="none").close()
        starts.append(time.perf_counter() - t0)
    return [("worker start", "import in a new python", statistics.median(imports)),
            ("worker start", "tessera worker", statistics.median(starts))]


def busy() -> None:
    while True:
        pass


def run_all(lib, quick: bool, load: int) -> list[tuple[str, str, float]]:
    procs = [multiprocessing.Process(target=busy, daemon=True) for _ in range(load)]
    for p in procs:
        p.start()
    try:
        return vectoradd_rows(lib, quick) + passthrough_rows(lib, quick) + start_rows(quick)
    finally:
        for p in procs:
            p.terminate()


def verdicts(rows: dict[tuple[str, str], float]) -> dict[tuple[str, str], str]:
    out = {}
    va = [k for k in rows if k[0].startswith("vectoradd")]
    if va:
        g = va[0][0]
        out[(g, "worker-c")] = "ok" if rows[(g, "worker-c")] <= 30e-6 else "OVER"
        out[(g, "inproc")] = ("ok" if rows[(g, "inproc")] - rows[(g, "direct")] <= 10e-6
                              else "OVER")
    pt = [k for k in rows if k[0].startswith("passthrough")]
    if pt:
        g = pt[0][0]
        out[(g, "worker-c")] = ("ok" if rows[(g, "worker-c")] <= 2 * rows[(g, "memcpy")]
                                else "OVER")
    if ("worker start", "tessera worker") in rows:
        out[("worker start", "tessera worker")] = (
            "ok" if rows[("worker start", "tessera worker")]
            <= rows[("worker start", "import in a new python")] + 0.05 else "OVER")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", type=int, default=2)
    ap.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" /
                    "python_component.csv")
    args = ap.parse_args()
    if not (EXAMPLES / "vectoradd" / "tesseract_api.py").exists():
        sys.exit(f"tesseract-core's examples are not in {EXAMPLES}: "
                 "run scripts/fetch_tesseract_examples.sh")
    lib = ctypes_library()
    table = []
    for load in (0, args.load):
        rows = run_all(lib, args.quick, load)
        base = {}
        for group, variant, seconds in rows:
            base.setdefault(group, seconds)  # the first row of a group is its baseline
        marks = verdicts({(g, v): s for g, v, s in rows})
        for group, variant, seconds in rows:
            table.append({"load": load, "group": group, "variant": variant,
                          "median_us": round(seconds * 1e6, 2),
                          "ratio_to_baseline": round(seconds / base[group], 2),
                          "budget": marks.get((group, variant), "")})
    print(f"{'load':>4}  {'group':<18} {'variant':<24} {'median':>12} {'ratio':>8}  budget")
    for r in table:
        us = r["median_us"]
        text = f"{us / 1000:.1f} ms" if us >= 1000 else f"{us:.1f} us"
        print(f"{r['load']:>4}  {r['group']:<18} {r['variant']:<24} {text:>12} "
              f"{r['ratio_to_baseline']:>7.2f}x  {r['budget']}")
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    print(f"(ratios: to the group's first row, measured in the same run; CSV: {args.csv})")


if __name__ == "__main__":
    main()
