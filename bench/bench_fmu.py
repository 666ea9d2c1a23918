#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""FMUs as components from Python: what a call costs against a baseline
measured in the same run, idle and beside --load N busy processes.

  rhs      vanderpol.fmu#rhs (Model Exchange right-hand side), in-process,
           called as a jax.jit-compiled function of x (Tessera's XLA FFI
           handler): seconds per call. Baseline: the same right-hand side
           written in jax.numpy and jitted (JAX's own dispatch, the floor).
           Budget: at most 10 us per call.
  cosim    a 100-step Co-Simulation trajectory of spring.fmu (t = 0, 0.1,
           ..., 10) through Component.apply in worker mode, against
           fmpy.simulate_fmu(spring.fmu, ...) of the same FMU with the same
           output interval (0.1, so also 100 fmi3DoStep calls): the call a
           user makes, which extracts, reads and instantiates every time.
           Budget: worker mode at least 10x faster. fmpy in its fastest
           documented form (extracted once, the model description read
           once, one instance reset before each run) is measured too and
           its ratio reported beside: both run the FMU's own work (its RK4
           substeps), which bounds that ratio; the table also gives it
           beyond that work: (reused - in-process) / (worker - in-process).
           The trajectories are checked to agree first.
  fd       the Jacobian of a spring trajectory (--fd-points points) with
           respect to k, c, x0, v0 (--fd-inputs) by the library's central
           differences (2 simulations per parameter; the schema fixes the
           output's shape, so no base point), worker mode with workers=2
           against workers=1: the pool runs the columns in parallel.
           Budget: at least 1.7x, judged only where two CPUs are free (on a
           2-core machine: idle). The table gives the bound the split
           allows, n / ceil(n / 2) for n columns: 2x for 4, 1.67x for 5.

Each figure is the median over batches; the variants' batches alternate
in rotating order. Prints a table, writes CSV (default
build/bench/results/fmu_python.csv) and exits 0 whatever the verdicts; 1
when it cannot measure (an FMU missing, a call failing, the trajectories
disagreeing).

    python3 bench/bench_fmu.py [--quick] [--load N] [--csv PATH] [--only rhs,cosim,fd]
                               [--fd-inputs k,c,m,x0,v0] [--rounds N] [--fd-points N]
"""

from __future__ import annotations

import argparse
import csv
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")

BUDGET_RHS_US = 10.0
BUDGET_COSIM_SPEEDUP = 10.0
BUDGET_FD_SPEEDUP = 1.7
FD_WORKERS = 2
SPRING = {"k": 4.0, "c": 0.4, "m": 1.0, "x0": 1.0, "v0": 0.0}
FD_INPUTS = ["k", "c", "x0", "v0"]
VDP_X = (0.7, -1.3)
VDP_T, VDP_MU = 0.25, 1.5
AGREEMENT = 1e-9       # worker mode against fmpy: the same FMU, the same steps


# ---- pure functions of the measured numbers --------------------------------

def at_most(value: float | None, bound: float) -> str:
    if value is None or math.isnan(value):
        return "-"
    return "PASS" if value <= bound else "OVER"


def at_least(value: float | None, bound: float | None) -> str:
    if value is None or bound is None or math.isnan(value):
        return "-"
    return "PASS" if value >= bound else "OVER"


def speedup(baseline_s: float, this_s: float) -> float:
    """How many times faster `this` is than the baseline."""
    return baseline_s / this_s if this_s > 0 else math.nan


def fd_budget(load: int, cpus: int, workers: int = FD_WORKERS) -> float | None:
    """The parallel speed-up is judged only where every worker can have a
    CPU of its own beside the load."""
    return BUDGET_FD_SPEEDUP if cpus - load >= workers else None


def fd_ideal(columns: int, workers: int) -> float:
    """The speed-up the split allows at best: each lane's share of the
    columns (2 applies each, central differences) against all of them on
    one worker."""
    return columns / math.ceil(columns / workers)


def beyond(baseline_s: float, this_s: float, floor_s: float) -> float:
    """baseline / this, each less the floor both share (the FMU's own work)."""
    return speedup(baseline_s - floor_s, this_s - floor_s)


def rounds_median(samples: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) if v else math.nan for k, v in samples.items()}


def alternate(fns: dict[str, Callable[[], object]], rounds: int,
              calls: int) -> dict[str, list[float]]:
    """Each round runs a batch of `calls` calls of every variant, in an
    order that rotates by one every round; seconds per call per batch."""
    names = list(fns)
    for f in fns.values():          # warm: compile, start, fault in
        f()
    out: dict[str, list[float]] = {k: [] for k in names}
    for r in range(rounds):
        for j in range(len(names)):
            name = names[(r + j) % len(names)]
            f = fns[name]
            t0 = time.perf_counter()
            for _ in range(calls):
                f()
            out[name].append((time.perf_counter() - t0) / calls)
    return out


def start_load(n: int, max_s: float) -> list[subprocess.Popen]:
    """n busy processes, each ending after max_s at the latest or once this
    process is gone (no preexec_fn: JAX's threads make fork unsafe)."""
    code = (f"import os, time\nend = time.monotonic() + {max_s}\n"
            f"while time.monotonic() < end and os.getppid() == {os.getpid()}: pass\n")
    procs = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(n)]
    time.sleep(0.1 if n else 0)  # let the scheduler see them
    return procs


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait(timeout=10)


# ---- the measurements ----------------------------------------------------------

def rhs_variants(fmu_dir: Path):
    """Jitted functions of x: through vanderpol.fmu#rhs, and in jax.numpy."""
    import jax
    import jax.numpy as jnp

    import tessera
    import tessera.jax

    vdp = tessera.load(f"{fmu_dir / 'vanderpol.fmu'}#rhs", "inproc")

    @jax.jit
    def through_fmu(x):
        return tessera.jax.apply(vdp, {"t": VDP_T, "x": x, "mu": VDP_MU})["dx"]

    @jax.jit
    def in_jax(x):
        return jnp.stack([x[1], VDP_MU * (1 - x[0] ** 2) * x[1] - x[0]])

    x = jnp.asarray(VDP_X)
    a, b = np.asarray(through_fmu(x)), np.asarray(in_jax(x))
    if not np.allclose(a, b, rtol=1e-13, atol=0):
        raise RuntimeError(f"vanderpol.fmu#rhs gives {a}, the closed form {b}")
    fns = {"tessera jit": lambda: through_fmu(x).block_until_ready(),
           "jax.numpy jit": lambda: in_jax(x).block_until_ready()}
    return vdp, fns


def cosim_variants(fmu_dir: Path, tmp: Path):
    """spring.fmu's 100-step trajectory: worker mode, in-process, fmpy."""
    import fmpy

    import tessera

    spring = fmu_dir / "spring.fmu"
    t = np.linspace(0.0, 10.0, 101)
    inputs = {"t": t, **SPRING}
    comps = {"tessera worker": tessera.load(spring, "worker"),
             "tessera inproc": tessera.load(spring, "inproc")}
    unzipdir = fmpy.extract(str(spring), unzipdir=str(tmp / "spring_fmpy"))
    md = fmpy.read_model_description(unzipdir)
    inst = fmpy.instantiate_fmu(unzipdir, md, "CoSimulation")
    common = dict(start_time=0.0, stop_time=10.0, output_interval=0.1,
                  fmi_type="CoSimulation", start_values=SPRING, output=["x"])

    def fmpy_reused():
        inst.reset()
        return fmpy.simulate_fmu(unzipdir, validate=False, model_description=md,
                                 fmu_instance=inst, **common)

    def fmpy_plain():
        return fmpy.simulate_fmu(str(spring), **common)

    ours = np.asarray(comps["tessera worker"].apply(inputs)["x"])
    for name, res in (("fmpy reused", fmpy_reused()), ("fmpy plain", fmpy_plain())):
        theirs = np.asarray(res["x"])
        if theirs.shape != ours.shape or np.max(np.abs(theirs - ours)) > AGREEMENT:
            diff = np.max(np.abs(theirs - ours)) if theirs.shape == ours.shape else "-"
            raise RuntimeError(f"{name}'s x differs from worker mode's: shapes {theirs.shape} "
                               f"{ours.shape}, max difference {diff}")
    fns = {"tessera worker": lambda: comps["tessera worker"].apply(inputs),
           "tessera inproc": lambda: comps["tessera inproc"].apply(inputs),
           "fmpy reused": fmpy_reused,
           "fmpy plain": fmpy_plain}
    return [*comps.values()], inst, fns


def fd_variants(fmu_dir: Path, points: int, wrt: list[str]):
    import tessera

    spring = fmu_dir / "spring.fmu"
    t = np.linspace(0.0, 10.0, points)
    inputs = {"t": t, **SPRING}
    comps = {w: tessera.load(spring, "worker", workers=w) for w in (1, FD_WORKERS)}
    jac = {w: c.jacobian(inputs, jac_inputs=wrt, jac_outputs=["x"]) for w, c in comps.items()}
    for name in wrt:
        a, b = np.asarray(jac[1]["x"][name]), np.asarray(jac[FD_WORKERS]["x"][name])
        if not np.array_equal(a, b):
            raise RuntimeError(f"d x / d {name}: workers=1 and workers={FD_WORKERS} differ")
    fns = {f"workers={w}": (lambda c=c: c.jacobian(inputs, jac_inputs=wrt, jac_outputs=["x"]))
           for w, c in comps.items()}
    return list(comps.values()), fns


# ---- the table -------------------------------------------------------------------

def num(v: float, prec: int = 2) -> str:
    return "-" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{v:.{prec}f}"


def rows_for(kind: str, load: int, cpus: int, med: dict[str, float],
             samples: dict[str, list[float]], fd_columns: int = len(FD_INPUTS)) -> list[dict]:
    """One row per variant, the figure of merit and verdict on the judged one."""
    rows = []
    for name, s in med.items():
        row = {"bench": kind, "load": load, "cpus": cpus, "variant": name,
               "batches": len(samples[name]), "median_us": s * 1e6,
               "q1_us": float(np.quantile(samples[name], 0.25)) * 1e6,
               "q3_us": float(np.quantile(samples[name], 0.75)) * 1e6,
               "figure": math.nan, "budget": math.nan, "verdict": "",
               "vs_reused": math.nan, "beyond_inproc": math.nan, "ideal": math.nan}
        if kind == "rhs" and name == "tessera jit":
            row.update(figure=s * 1e6, budget=BUDGET_RHS_US, verdict=at_most(s * 1e6,
                                                                              BUDGET_RHS_US))
        elif kind == "cosim" and name == "tessera worker":
            f = speedup(med["fmpy plain"], s)
            row.update(figure=f, budget=BUDGET_COSIM_SPEEDUP,
                       verdict=at_least(f, BUDGET_COSIM_SPEEDUP),
                       vs_reused=speedup(med["fmpy reused"], s),
                       beyond_inproc=beyond(med["fmpy reused"], s, med["tessera inproc"]))
        elif kind == "cosim" and name in ("tessera inproc", "fmpy reused"):
            row.update(figure=speedup(med["fmpy plain"], s),
                       vs_reused=speedup(med["fmpy reused"], s))
        elif kind == "fd" and name == f"workers={FD_WORKERS}":
            f = speedup(med["workers=1"], s)
            b = fd_budget(load, cpus)
            row.update(figure=f, budget=b if b else math.nan, verdict=at_least(f, b),
                       ideal=fd_ideal(fd_columns, FD_WORKERS))
        rows.append(row)
    return rows


FIGURES = {"rhs": "us per call", "cosim": "x fmpy.simulate_fmu", "fd": "x workers=1"}


def print_rows(rows: list[dict]) -> None:
    for r in rows:
        tail = ""
        if not math.isnan(r["figure"]):
            tail = f"{num(r['figure'])} {FIGURES[r['bench']]}"
            if r["verdict"]:
                op = "<=" if r["bench"] == "rhs" else ">="
                tail += ("  not judged" if math.isnan(r["budget"]) else
                         f"  {op} {r['budget']:g} {r['verdict']}")
            if not math.isnan(r["vs_reused"]):
                tail += f"  ({num(r['vs_reused'])}x fmpy reused)"
            if not math.isnan(r["beyond_inproc"]):
                tail += f"  ({num(r['beyond_inproc'])}x beyond in-process)"
            if not math.isnan(r["ideal"]):
                tail += f"  (the split allows {num(r['ideal'])}x)"
        print(f"{r['bench']:5s} {r['load']:4d} {r['variant']:15s} {r['median_us']:11.2f} "
              f"{r['q1_us']:11.2f} {r['q3_us']:11.2f}  {tail}", flush=True)


def write_csv(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["bench"])
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.4f}" if isinstance(v, float) and not math.isnan(v)
                            else "" if isinstance(v, float) else v) for k, v in row.items()})


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--fmu-dir", type=Path, default=BUILD / "fmu",
                   help="where vanderpol.fmu and spring.fmu are (default: build/fmu)")
    p.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "fmu_python.csv")
    p.add_argument("--quick", action="store_true", help="few batches, short runs")
    p.add_argument("--load", type=int, default=os.cpu_count() or 1,
                   help="also beside N busy processes (default: one per CPU; 0: idle only)")
    p.add_argument("--only", default="rhs,cosim,fd", help="comma-separated: rhs, cosim, fd")
    p.add_argument("--rounds", type=int, help="batches per variant (default 30; 5 quick)")
    p.add_argument("--fd-points", type=int, help="trajectory length for fd (default 2001; "
                                                 "201 quick)")
    p.add_argument("--fd-inputs", default=",".join(FD_INPUTS),
                   help="the parameters fd differentiates by (default: %(default)s)")
    args = p.parse_args(argv)
    only = [s.strip() for s in args.only.split(",") if s.strip()]
    for s in only:
        if s not in FIGURES:
            p.error(f"--only: unknown benchmark {s!r}; from rhs, cosim, fd")
    wrt = [s.strip() for s in args.fd_inputs.split(",") if s.strip()]
    if not wrt or any(w not in SPRING for w in wrt):
        p.error(f"--fd-inputs: a comma-separated subset of {', '.join(SPRING)}")
    if args.load < 0:
        p.error("--load takes N >= 0")
    cpus = os.cpu_count() or 1
    rounds = args.rounds or (5 if args.quick else 30)
    fd_points = args.fd_points or (201 if args.quick else 2001)
    calls = {"rhs": 200 if args.quick else 5000, "cosim": 5 if args.quick else 40,
             "fd": 1 if args.quick else 4}
    for name in ("vanderpol.fmu", "spring.fmu"):
        if not (args.fmu_dir / name).exists():
            print(f"bench_fmu.py: {args.fmu_dir / name} does not exist (build the FMUs first)",
                  file=sys.stderr)
            return 1

    import tempfile

    import jax
    jax.config.update("jax_enable_x64", True)
    import tessera

    opened: list = []
    benches: dict[str, dict] = {}
    tmp = tempfile.TemporaryDirectory(prefix="bench-fmu-")
    try:
        if "rhs" in only:
            comp, fns = rhs_variants(args.fmu_dir)
            opened.append(comp)
            benches["rhs"] = fns
        if "cosim" in only:
            comps, _inst, fns = cosim_variants(args.fmu_dir, Path(tmp.name))
            opened += comps
            benches["cosim"] = fns
        if "fd" in only:
            comps, fns = fd_variants(args.fmu_dir, fd_points, wrt)
            opened += comps
            benches["fd"] = fns
    except (tessera.TesseraError, RuntimeError, OSError, ImportError) as e:
        print(f"bench_fmu.py: {e}", file=sys.stderr)
        for c in opened:
            c.close()
        tmp.cleanup()
        return 1

    print(f"== FMUs from Python ({sys.executable}), tessera {tessera.__file__}\n"
          f"   {rounds} batches per variant, alternating; {cpus} CPUs; fd: {fd_points} points, "
          f"{len(wrt)} parameters ({', '.join(wrt)})\n"
          f"   load average {os.getloadavg()[0]:.2f} at the start")
    print(f"{'bench':5s} {'load':>4s} {'variant':15s} {'median us':>11s} {'q1 us':>11s} "
          f"{'q3 us':>11s}  figure  budget")
    rows: list[dict] = []
    loads = [0] + ([args.load] if args.load else [])
    procs: list = []
    try:
        for load in loads:
            procs = start_load(load, 1200)
            for kind, fns in benches.items():
                samples = alternate(fns, rounds, calls[kind])
                new = rows_for(kind, load, cpus, rounds_median(samples), samples, len(wrt))
                print_rows(new)
                rows += new
            stop_load(procs)
            procs = []
    except (tessera.TesseraError, RuntimeError) as e:
        print(f"bench_fmu.py: {e}", file=sys.stderr)
        return 1
    finally:
        stop_load(procs)
        for c in opened:
            c.close()
        tmp.cleanup()

    print(f"   load average {os.getloadavg()[0]:.2f} at the end")
    print("\n== verdicts")
    for r in rows:
        if not r["verdict"]:
            continue
        state = "idle" if r["load"] == 0 else f"beside {r['load']} busy"
        what = {"rhs": f"vanderpol rhs under jax.jit: {num(r['figure'])} us per call <= "
                       f"{BUDGET_RHS_US:g}",
                "cosim": f"spring 100-step trajectory, worker mode {num(r['figure'])}x "
                         f"fmpy.simulate_fmu >= {BUDGET_COSIM_SPEEDUP:g}",
                "fd": f"FD Jacobian, workers={FD_WORKERS} {num(r['figure'])}x workers=1 >= "
                      f"{BUDGET_FD_SPEEDUP:g}"}[r["bench"]]
        verdict = (r["verdict"] if r["verdict"] != "-" else
                   f"- (not judged: fewer than {FD_WORKERS} CPUs free beside the load)")
        print(f"  {what}, {state}: {verdict}")
    write_csv(args.csv, rows)
    print(f"CSV: {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
