#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-call time of ``jax.jit(jax.hessian(f))`` against ``jax.jit(jax.grad(f))``
for rosenbrock in-process, with the cost of one hvp call measured in the same
run.

``jax.hessian`` is ``jacfwd(jacrev(f))``: one apply, one vjp and a batch of
n hvp calls (one per basis tangent, run by the library as one batched call).
The baseline is the jitted gradient (apply + vjp) of the same function at the
same point, and the hvp endpoint's own cost is that of ``Component.hvp``
called from C through the library (tsr_call_run through ctypes on one
prepared call object, so no Python is in it). The budget:

    hessian <= 3 x grad + n x hvp

    python3 bench/bench_hessian_jax.py [--quick] [--csv PATH]

Prints a table and writes CSV (default: build/bench/results/hessian_jax.csv).
Medians of interleaved batches; the machine's noise moves them by tens of
percent. Exit status 0 whatever the verdicts (this is a report, not a test).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
TSR_FLOAT64 = 12
TSR_EP_HVP = 5
GRAD_FACTOR = 3.0


class TsrArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 16)]


def c_hvp(component, x, v) -> tuple[Callable[[], int], Callable[[], None]]:
    """One hvp call object of the component, prepared once: run() is a
    bare tsr_call_run through ctypes (the endpoint's own cost)."""
    import tessera._ext
    lib = ctypes.CDLL(tessera._ext.__file__)
    vp, cp, ip = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    for name, args, res in (("tsr_call_new", [vp, ip], vp), ("tsr_call_free", [vp], None),
                            ("tsr_call_set_input", [vp, cp, ctypes.POINTER(TsrArray)], ip),
                            ("tsr_call_set_seed", [vp, cp, ctypes.POINTER(TsrArray)], ip),
                            ("tsr_call_set_tangent", [vp, cp, ctypes.POINTER(TsrArray)], ip),
                            ("tsr_call_set_wrt", [vp, ctypes.POINTER(cp), ctypes.c_int32,
                                                  ctypes.POINTER(cp), ctypes.c_int32], ip),
                            ("tsr_call_run", [vp], ip), ("tsr_call_errmsg", [vp], cp)):
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    call = lib.tsr_call_new(ctypes.c_void_p(component._address), TSR_EP_HVP)
    keep = []

    def arr(values):
        import numpy as np
        a = np.array(values, dtype=np.float64, order="C")  # 0-d stays 0-d
        keep.append(a)
        t = TsrArray(a.ctypes.data, TSR_FLOAT64, a.ndim)
        for d, s in enumerate(a.shape):
            t.shape[d] = s
        return ctypes.byref(t)

    ins, outs = (cp * 1)(b"x"), (cp * 1)(b"value")
    rcs = [lib.tsr_call_set_wrt(call, ins, 1, outs, 1),
           lib.tsr_call_set_input(call, b"x", arr(x)), lib.tsr_call_set_input(call, b"a", arr(1.0)),
           lib.tsr_call_set_input(call, b"b", arr(100.0)),
           lib.tsr_call_set_seed(call, b"value", arr(1.0)),
           lib.tsr_call_set_tangent(call, b"x", arr(v))]
    if any(rcs) or lib.tsr_call_run(call) != 0:
        raise RuntimeError(f"hvp call: {lib.tsr_call_errmsg(call).decode()}")
    return (lambda: lib.tsr_call_run(call)), (lambda: lib.tsr_call_free(call))


def per_call(fns: dict[str, Callable[[], object]], calls: int,
             batches: int) -> dict[str, list[float]]:
    """Seconds per call of each function in every batch, batches interleaved
    and their order rotated so that drift hits all alike."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for b in range(batches):
        for name in names[b % len(names):] + names[:b % len(names)]:
            fn = fns[name]
            t0 = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - t0) / calls)
    return times


def rows(quick: bool) -> list[dict]:
    import jax
    import jax.numpy as jnp
    import numpy as np

    import tessera
    import tessera.jax

    jax.config.update("jax_enable_x64", True)
    out = []
    comp = tessera.load(BUILD / "plugins" / "rosenbrock.so", "inproc")
    try:
        for n in (2, 10, 100):
            def f(x):
                return tessera.jax.apply(comp, {"x": x, "a": 1.0, "b": 100.0})["value"]

            x = jnp.linspace(-1.0, 1.5, n)
            grad = jax.jit(jax.grad(f))
            hess = jax.jit(jax.hessian(f))
            grad(x).block_until_ready()
            h = np.asarray(hess(x))
            if not np.allclose(h, h.T):
                raise RuntimeError("the Hessian is not symmetric")
            run, free = c_hvp(comp, np.asarray(x), np.ones(n))
            try:
                calls = max(20, int((200 if n <= 10 else 50) * (0.2 if quick else 1.0)))
                batches = 5 if quick else 15
                t = per_call({"grad": lambda: grad(x).block_until_ready(),
                              "hessian": lambda: hess(x).block_until_ready(),
                              "hvp": run}, calls, batches)
            finally:
                free()
            med = {k: statistics.median(v) * 1e6 for k, v in t.items()}
            budget = GRAD_FACTOR * med["grad"] + n * med["hvp"]
            out.append({"n": n, "grad_us": round(med["grad"], 2),
                        "hessian_us": round(med["hessian"], 2), "hvp_c_us": round(med["hvp"], 3),
                        "ratio": round(med["hessian"] / med["grad"], 2),
                        "budget_us": round(budget, 2),
                        "verdict": "PASS" if med["hessian"] <= budget else "OVER"})
            print(f"  measured n={n}", file=sys.stderr)
    finally:
        comp.close()
    return out


def print_table(results: list[dict]) -> None:
    print("\njax.jit(jax.hessian(f)) vs jax.jit(jax.grad(f)), rosenbrock in-process, "
          "median per call (us)")
    head = (f"{'n':>6}{'grad':>12}{'hessian':>12}{'hvp (C)':>12}{'ratio':>8}"
            f"{'budget':>12}  verdict")
    print(head)
    print("-" * len(head))
    for r in results:
        print(f"{r['n']:>6}{r['grad_us']:>12.2f}{r['hessian_us']:>12.2f}{r['hvp_c_us']:>12.3f}"
              f"{r['ratio']:>8.2f}{r['budget_us']:>12.2f}  {r['verdict']}")
    print(f"\nbudget: hessian <= {GRAD_FACTOR:g} x grad + n x hvp (the hvp endpoint's own "
          "cost, from C)")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a third of the batches")
    p.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "hessian_jax.csv")
    args = p.parse_args()
    results = rows(args.quick)
    print_table(results)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    print(f"\nCSV: {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
