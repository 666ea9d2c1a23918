#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-call cost of the Python bindings, over a bare ctypes call of the
same C function and over the same call made from C, all measured in the
same run.

Every row calls the noop plugin (y = x, float64) through one face of the
bindings and, interleaved with it, calls ``tsr_call_run`` through ctypes on
a call object of the same component prepared once (input bound, same size,
in memory from tsr_component_alloc). The ctypes call goes into the very library the
extension links (tessera._ext exports the tsr_* functions), so both sides
run the same C code; "over ctypes" is what the binding adds above that
call: converting the inputs, choosing a call object, building the result
arrays (and, for JAX, XLA's dispatch; for PyTorch, autograd's). A ctypes
call itself costs more than the call from C, so in-process rows also give
"over C": the binding minus bench_inproc's C loop (its "library" variant,
tsr_call_set_input + tsr_call_run on a reused call, run by this script
before and after the Python rows). The jax fori_loop row (calls inside one
compiled loop, no Python between them) has only the C loop as reference.

The rosenbrock rows give its rank-0 inputs a and b as 0-d arrays, Python
floats, NumPy float64 scalars and Python ints, all interleaved in one run;
their budget is a ratio to the 0-d array row of the same run.

    python3 bench/bench_python.py [--quick] [--csv PATH]

Prints a table and writes CSV (default: build/bench/results/python.csv).
Medians of interleaved batches; the machine's noise moves them by tens of
percent. Exit status 0 whatever the verdicts (this is a report, not a test).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")

# Budgets on what the binding adds over a bare ctypes call (binding - ctypes), microseconds.
BUDGET_US = {("numpy apply", "inproc"): 3.0, ("jax jit", "inproc", 1000): 10.0}
# A scalar for a rank-0 field: at most this times a 0-d array (same run).
BUDGET_SCALAR_VS_0D = 1.5
# Budgets on the ratio binding / ctypes: at 1e6 elements a jitted call
# writes its result straight into XLA's buffer, so it costs what the call
# from C costs (one memcpy of the noop) plus XLA's dispatch.
BUDGET_RATIO = {("jax jit", "inproc", 1_000_000): 1.2}


def c_reference(*csv_texts: str) -> dict[int, list[float]]:
    """bench_inproc's C loop (variant "library": tsr_call_set_input +
    tsr_call_run on a reused call, in C) from its CSVs: n -> the median
    seconds per call of each run."""
    ref: dict[int, list[float]] = {}
    for text in csv_texts:
        for row in csv.DictReader(text.splitlines()):
            if row.get("variant") == "library":
                ref.setdefault(int(row["n"]), []).append(float(row["median_ns"]) * 1e-9)
    return ref


def run_c_reference(path: Path) -> tuple[str, str]:
    """Run bench_inproc --quick once, writing its CSV to path: (CSV text, a
    note when it could not run)."""
    exe = BUILD / "bin" / "bench_inproc"
    try:
        subprocess.run([str(exe), "--quick", "--csv", str(path)], check=True,
                       stdout=subprocess.DEVNULL, timeout=300)
        return path.read_text(), ""
    except (OSError, subprocess.SubprocessError) as e:
        return "", f"bench_inproc did not run ({e}): no figures over C"


def over(binding_s: float, ref_s: float | None) -> float | None:
    """Microseconds the binding takes above a reference (None: no reference)."""
    return None if ref_s is None else (binding_s - ref_s) * 1e6


def verdict(over_ctypes_us: float | None, ratio: float | None, budget_us: float | None,
            budget_ratio: float | None) -> str:
    """PASS / OVER against the budgets that apply (on the figure over a
    ctypes call, and on binding / ctypes); "" when none does."""
    if budget_us is None and budget_ratio is None:
        return ""
    if over_ctypes_us is None or ratio is None:
        return "-"
    ok = ((budget_us is None or over_ctypes_us <= budget_us)
          and (budget_ratio is None or ratio <= budget_ratio))
    return "PASS" if ok else "OVER"


def with_c_reference(results: list[dict], runs: dict[int, list[float]]) -> None:
    """Fill in each in-process noop row's C loop (the mean of its runs at
    that n) and the binding's figure over it; rosenbrock and worker rows,
    and sizes the C loop lacks, keep None."""
    for r in results:
        ref = runs.get(r["n"])
        if r["mode"] != "inproc" or r["variant"].startswith("rosenbrock") or not ref:
            continue
        c_s = statistics.mean(ref)
        r["c_us"] = c_s * 1e6
        r["over_c_us"] = over(r["binding_us"] * 1e-6, c_s)
        r["over_c_noise_us"] = noise_us((r["binding_us"] - r["binding_p10_us"]) * 1e-6,
                                        max(ref) - min(ref))


def noise_us(*spreads_s: float | None) -> float:
    """The noise of a difference, in microseconds: the largest spread of
    either side (a batch median's distance to its p10, or the distance
    between the C loop's runs)."""
    return max((abs(v) for v in spreads_s if v is not None), default=0.0) * 1e6


def us(value: float | None, width: int, noise: float | None = None) -> str:
    """A figure in microseconds, or "-" where there is none; a difference
    (given with its noise) no larger than its noise gets "~" (inside the
    noise: neither its size nor its sign is measured), and so does a
    negative one: every difference here is of a caller over the code it
    calls, which it cannot really undercut (at 10^6 elements the C loop,
    run in its own process, can come out slower than a ctypes call)."""
    if value is None:
        return f"{'-':>{width}}"
    mark = "~" if noise is not None and (abs(value) <= noise or value < 0) else ""
    return f"{f'{value:.2f}{mark}':>{width}}"


class TsrArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 16)]


TSR_FLOAT64 = 12
TSR_EP_APPLY = 0


class CtypesCall:
    """On the binding's own component (one plugin, one worker): tsr_call_new
    and tsr_call_set_input once; then run() is one bare ctypes call of
    tsr_call_run."""

    def __init__(self, lib: ctypes.CDLL, component, n: int,
                 scalars: dict[str, float] | None = None) -> None:
        self.lib = lib
        self.comp = ctypes.c_void_p(component._address)
        # Input memory from tsr_component_alloc: in the arena in worker mode (no copy).
        self.data = lib.tsr_component_alloc(self.comp, max(8 * n, 8))
        ctypes.memset(self.data, 0, max(8 * n, 8))
        self.call = lib.tsr_call_new(self.comp, TSR_EP_APPLY)
        arr = TsrArray(self.data, TSR_FLOAT64, 1)
        arr.shape[0] = n
        if lib.tsr_call_set_input(self.call, b"x", ctypes.byref(arr)) != 0:
            raise RuntimeError("set_input failed")
        # Rank-0 float64 inputs (rosenbrock's a and b), 8 bytes each.
        self.scalars = []
        for name, value in (scalars or {}).items():
            mem = lib.tsr_component_alloc(self.comp, 8)
            ctypes.c_double.from_address(mem).value = value
            self.scalars.append(mem)
            if lib.tsr_call_set_input(self.call, name.encode(),
                                      ctypes.byref(TsrArray(mem, TSR_FLOAT64, 0))) != 0:
                raise RuntimeError("set_input failed")
        self.run = lambda: lib.tsr_call_run(self.call)
        if self.run() != 0:
            raise RuntimeError(lib.tsr_call_errmsg(self.call).decode())

    def close(self) -> None:
        self.lib.tsr_call_free(self.call)
        self.lib.tsr_component_free_buffer(self.comp, self.data)
        for mem in self.scalars:
            self.lib.tsr_component_free_buffer(self.comp, mem)


def ctypes_library() -> ctypes.CDLL:
    import tessera._ext
    lib = ctypes.CDLL(tessera._ext.__file__)
    vp, cp, ip = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
    sigs = {
        "tsr_component_alloc": ([vp, ctypes.c_size_t], vp),
        "tsr_component_free_buffer": ([vp, vp], None), "tsr_call_new": ([vp, ip], vp),
        "tsr_call_free": ([vp], None),
        "tsr_call_set_input": ([vp, cp, ctypes.POINTER(TsrArray)], ip),
        "tsr_call_run": ([vp], ip), "tsr_call_errmsg": ([vp], cp),
    }
    for name, (args, res) in sigs.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, res
    return lib


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


def p10(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def rows(quick: bool) -> list[dict]:
    """Every row; the figures over C are filled in by main once the C loop
    has run after them (with_c_reference)."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    import torch

    import tessera
    import tessera.jax
    import tessera.torch

    jax.config.update("jax_enable_x64", True)
    lib = ctypes_library()
    noop = BUILD / "plugins" / "noop.so"
    rosenbrock = BUILD / "plugins" / "rosenbrock.so"
    scale = 0.2 if quick else 1.0
    out = []

    def measure(variant: str, mode: str, n: int, fn, comp, extra: dict | None = None,
                calls: int = 2000, batches: int = 25, per: int = 1,
                with_ctypes: bool = True) -> None:
        """One row. With per > 1, each call of fn makes `per` plugin calls
        and every time is divided by it. with_ctypes=False: no ctypes
        reference (a Python loop of ctypes calls is no reference for calls
        inside a compiled loop); the C loop is."""
        ref = CtypesCall(lib, comp, n) if with_ctypes else None
        fns = {"binding": fn, **({"ctypes": ref.run} if ref else {}), **(extra or {})}
        for f in fns.values():
            f()
        times = per_call(fns, max(1, int(calls * scale)), max(5, int(batches * scale)))
        times = {k: [t / per for t in v] for k, v in times.items()}
        med = {k: statistics.median(v) for k, v in times.items()}
        if ref:
            ref.close()
        ctypes_s = med.get("ctypes")
        budget = BUDGET_US.get((variant, mode, n), BUDGET_US.get((variant, mode)))
        budget_ratio = BUDGET_RATIO.get((variant, mode, n))
        over_ctypes = over(med["binding"], ctypes_s)
        ratio = None if ctypes_s is None else med["binding"] / ctypes_s
        out.append({
            "variant": variant, "mode": mode, "n": n,
            "binding_us": med["binding"] * 1e6, "binding_p10_us": p10(times["binding"]) * 1e6,
            "ctypes_us": None if ctypes_s is None else ctypes_s * 1e6,
            "ctypes_p10_us": None if ctypes_s is None else p10(times["ctypes"]) * 1e6,
            "c_us": None, "over_ctypes_us": over_ctypes, "over_c_us": None,
            "over_ctypes_noise_us": noise_us(
                med["binding"] - p10(times["binding"]),
                None if ctypes_s is None else ctypes_s - p10(times["ctypes"])),
            "over_c_noise_us": None,
            "ratio": ratio,
            "context": "; ".join(f"{k} {v * 1e6:.2f} us" for k, v in med.items()
                                 if k not in ("binding", "ctypes")),
            "budget_us": budget, "budget_ratio": budget_ratio,
            "verdict": verdict(over_ctypes, ratio, budget, budget_ratio),
        })
        print(f"  measured {variant} {mode} n={n}", file=sys.stderr)

    def measure_scalars(mode: str, comp, n: int = 3) -> None:
        """rosenbrock with a and b given as 0-d arrays, Python floats, NumPy
        float64 scalars and Python ints, interleaved in one run with the
        ctypes reference; a row each, its ratio to the 0-d array row."""
        ref = CtypesCall(lib, comp, n, {"a": 1.0, "b": 100.0})
        x = comp.empty(n)
        x[:] = 0.5
        kinds = {  # a and b given as
            "0-d": {"x": x, "a": np.array(1.0), "b": np.array(100.0)},
            "float": {"x": x, "a": 1.0, "b": 100.0},
            "np.float64": {"x": x, "a": np.float64(1.0), "b": np.float64(100.0)},
            "int": {"x": x, "a": 1, "b": 100},
        }
        fns = {k: (lambda d=d: comp.apply(d)) for k, d in kinds.items()}
        fns["ctypes"] = ref.run
        for f in fns.values():
            f()
        times = per_call(fns, max(1, int(2000 * scale)), max(5, int(25 * scale)))
        med = {k: statistics.median(v) for k, v in times.items()}
        ref.close()
        base = med["0-d"]
        for kind in kinds:
            vs = med[kind] / base
            scalar = kind != "0-d"
            out.append({
                "variant": f"rosenbrock {kind} a, b", "mode": mode, "n": n,
                "binding_us": med[kind] * 1e6, "binding_p10_us": p10(times[kind]) * 1e6,
                "ctypes_us": med["ctypes"] * 1e6, "ctypes_p10_us": p10(times["ctypes"]) * 1e6,
                "c_us": None, "over_ctypes_us": over(med[kind], med["ctypes"]),
                "over_c_us": None,
                "over_ctypes_noise_us": noise_us(med[kind] - p10(times[kind]),
                                                 med["ctypes"] - p10(times["ctypes"])),
                "over_c_noise_us": None, "ratio": med[kind] / med["ctypes"],
                "context": (f"{vs:.2f}x the 0-d a, b row ({base * 1e6:.2f} us), "
                            f"budget {BUDGET_SCALAR_VS_0D}x" if scalar else ""),
                "budget_us": None, "budget_ratio": None,
                "verdict": ("PASS" if vs <= BUDGET_SCALAR_VS_0D else "OVER") if scalar else "",
            })
        print(f"  measured rosenbrock scalars {mode} n={n}", file=sys.stderr)

    for mode in ("inproc", "worker"):
        with tessera.load(rosenbrock, mode) as comp:
            measure_scalars(mode, comp)
        with tessera.load(noop, mode) as comp:
            for n in ((1, 1000) if mode == "inproc" else (1000,)):
                x = comp.empty(n)
                x[:] = 1.0
                d = {"x": x}
                measure("numpy apply", mode, n, lambda: comp.apply(d), comp,
                        {"python call of a no-op": lambda: (lambda v: v)(d)})

            for n in ((1000, 1_000_000, 10_000_000) if mode == "inproc" else (1000,)):
                xj = jnp.ones(n)
                f = jax.jit(lambda v: tessera.jax.apply(comp, {"x": v})["y"])
                g = jax.jit(lambda v: v + 1.0)
                calls, batches = {1000: (2000, 25), 1_000_000: (30, 15)}.get(n, (3, 7))
                measure("jax jit", mode, n, lambda: f(xj).block_until_ready(), comp,
                        {"jax jit of x + 1": lambda: g(xj).block_until_ready()},
                        calls=calls, batches=batches)

            # Inside one compiled loop XLA's dispatch is paid once: what is
            # left per call is the FFI handler, the plugin and the copy out,
            # set beside the same call made in a C loop (no Python between
            # calls on either side).
            loop_calls = 1000
            xj = jnp.ones(1000)
            looped = jax.jit(lambda v: jax.lax.fori_loop(
                0, loop_calls, lambda i, u: tessera.jax.apply(comp, {"x": u})["y"], v))
            measure("jax fori_loop (per call)", mode, 1000,
                    lambda: looped(xj).block_until_ready(), comp,
                    calls=3, batches=15, per=loop_calls, with_ctypes=False)

            t = torch.ones(1000, dtype=torch.float64)
            tg = torch.ones(1000, dtype=torch.float64, requires_grad=True)
            measure("torch apply", mode, 1000, lambda: tessera.torch.apply(comp, {"x": t}), comp)
            measure("torch apply, requires_grad", mode, 1000,
                    lambda: tessera.torch.apply(comp, {"x": tg}), comp)
    return out


def print_table(results: list[dict], c_runs: dict[int, list[float]], notes: list[str]) -> None:
    print("\nPython bindings: noop (y = x, float64), median (and p10) per call over batches, "
          "every figure measured in this run.")
    print("  ctypes us: a bare ctypes call of tsr_call_run on the same component, interleaved "
          "with the binding (rosenbrock rows: its own, with a and b bound)")
    print("  C us: bench_inproc's C loop (tsr_call_set_input + tsr_call_run on a reused call), "
          "in-process rows only, the mean of its runs before and after the rows")
    print("  over ctypes = binding - ctypes; over C = binding - C (a ctypes call itself costs "
          "more than the call from C: see 'ctypes - C' below)")
    print("  jax fori_loop: calls inside one compiled loop, no Python between them: its only "
          "reference is the C loop")
    print("  ~: a difference inside the noise (no larger than either side's median - p10, or "
          "than the spread of the C loop's runs), or negative (a caller cannot undercut the "
          "code it calls): neither its size nor its sign is measured")
    print("  budgets apply to 'over ctypes' (and to binding / ctypes where a ratio is given)")
    head = (f"{'variant':<28}{'mode':<8}{'n':>10}{'binding us':>12}{'(p10)':>9}"
            f"{'ctypes us':>11}{'(p10)':>9}{'C us':>9}{'over ctypes':>13}{'over C':>9}"
            f"{'ratio':>7}{'budget':>9}  verdict")
    print(head)
    print("-" * len(head))
    for r in results:
        budget = (f"{r['budget_us']:.0f} us" if r["budget_us"] is not None else
                  f"{r['budget_ratio']:.1f}x" if r.get("budget_ratio") is not None else "-")
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"{r['variant']:<28}{r['mode']:<8}{r['n']:>10}{r['binding_us']:>12.2f}"
              f"{r['binding_p10_us']:>9.2f}{us(r['ctypes_us'], 11)}{us(r['ctypes_p10_us'], 9)}"
              f"{us(r['c_us'], 9)}{us(r['over_ctypes_us'], 13, r['over_ctypes_noise_us'])}"
              f"{us(r['over_c_us'], 9, r['over_c_noise_us'])}"
              f"{ratio:>7}{budget:>9}  {r['verdict']}")
        if r["context"]:
            print(f"{'':<36}same run: {r['context']}")
    for n, runs in sorted(c_runs.items()):
        ct = [r["ctypes_us"] for r in results
              if r["mode"] == "inproc" and r["n"] == n and r["ctypes_us"] is not None
              and not r["variant"].startswith("rosenbrock")]
        spread = ", ".join(f"{v * 1e6:.3f}" for v in runs)
        c_noise = (max(runs) - min(runs)) * 1e6
        line = f"C loop at n={n}: {statistics.mean(runs) * 1e6:.3f} us (runs: {spread} us)"
        if ct:
            diff = statistics.median(ct) - statistics.mean(runs) * 1e6
            line += (f"; ctypes - C: {us(diff, 0, c_noise)} us "
                     f"(median of the {len(ct)} in-process ctypes references at this n)")
        print(line)
    print("\nTesseract is not measured here: bench/report.py times the same work as a "
          "Tesseract in-process and over HTTP, in the same rounds as Tessera's rows.")
    for note in notes:
        print(f"note: {note}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a fifth of the batches")
    p.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "python.csv")
    args = p.parse_args()
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    c_csv = args.csv.with_name(args.csv.stem + "_c_loop.csv")
    before, note1 = run_c_reference(c_csv)
    results = rows(args.quick)
    after, note2 = run_c_reference(c_csv)
    runs = c_reference(before, after)
    with_c_reference(results, runs)
    print_table(results, runs, [n for n in (note1, note2) if n])
    with args.csv.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(results[0]))
        w.writeheader()
        w.writerows(results)
    print(f"\nCSV: {args.csv} (the C loop's last run: {c_csv})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
