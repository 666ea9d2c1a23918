#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Parametric shape optimisation through a differentiable FEM solve, the
Tesseract paper's case study, end to end:

    bars --geometry (Python, shapely)--> signed distance field
         --sigmoid (JAX)--> densities --compliance (C, CHOLMOD)--> compliance

jax.grad runs through all of it: the geometry's vjp is finite differences
of its apply (the geometry library is not differentiable), the solver's is
its exact adjoint. Adam moves the bars' end points under a volume
constraint. The same pipeline runs in each way of reaching the components
(backends.py), and a free-form SIMP topology optimisation with the same
solver is the baseline (simp.py).

    python3 study.py                 # full study: 60 x 30 grid, 4-9 minutes on 2 cores
    python3 study.py --small         # the CI form: 24 x 12, Tessera's modes
    python3 study.py --modes "tessera inproc,tesseract-core"

Writes to --out (default build/shape_optimization): designs.png,
history.png, steps.csv, steps.md, summary.json. Exit status 1 if the
optimisation did not lower the compliance, broke the volume constraint, or
the modes disagree."""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import sys
import time
from pathlib import Path

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

import backends  # noqa: E402
import figures  # noqa: E402
import paired  # noqa: E402
import pipeline  # noqa: E402
import simp  # noqa: E402
import split  # noqa: E402
import tessera  # noqa: E402
from problem import FULL, SMALL, Problem, density_from_sdf, initial_bars  # noqa: E402

VOLUME_TOLERANCE = 0.02     # the constraint holds to 2 % of the target at the end
AGREEMENT = 1e-6            # relative difference of compliance histories between modes


def log(text: str) -> None:
    print(text, flush=True)


CALLS, GLUE, POOL, BASELINE = split.CALLS, split.GLUE, split.POOL, split.BASELINE
POOL_AGREEMENT = 1e-4       # its vjp adds the same differences in another order (rounding)


def time_steps(runs: list[dict], p: Problem, rounds: int) -> None:
    """Every mode's jitted step at one design (the first run's final one),
    round by round in rotating order (paired.rounds_ms), each endpoint's
    time read before and after each step (Pair.endpoint_seconds), so that
    the columns are parts of the same steps."""
    h = runs[0]["history"]
    inside = {r["mode"]: {name: [] for name in CALLS} for r in runs}

    def timed_step(r):
        pair, step_fn = r["pair"], r["step_fn"]

        def run():
            before = pair.endpoint_seconds()
            np.asarray(step_fn(h.bars, *h.multipliers)[1])
            after = pair.endpoint_seconds()
            for name in CALLS:
                inside[r["mode"]][name].append((after[name] - before[name]) * 1e3)
        return run

    ms = paired.rounds_ms({r["mode"]: {"step": timed_step(r)} for r in runs}, rounds)
    for r in runs:
        calls = {name: v[1:] for name, v in inside[r["mode"]].items()}   # less the warm-up
        r["rounds_ms"] = {"step": ms[r["mode"]]["step"], **calls}
        r["split"] = split.inside_split(ms[r["mode"]]["step"], calls)
    base = next((r for r in runs if r["mode"] == BASELINE), None)
    for r in runs:
        r["speed_up"] = (split.speed_up(base["rounds_ms"]["step"], r["rounds_ms"]["step"])
                         if base else None)


def run_mode(pair: backends.Pair, p: Problem, settings: pipeline.Settings) -> dict:
    log(f"\n== {pair.mode}: {settings.steps} steps")
    forward = pipeline.make_pipeline(pair.apply, pair.geometry, pair.solver, p)
    step_fn = pipeline.make_step(forward, p)
    h = pipeline.optimise(step_fn, forward, initial_bars(p), p, settings, log=log)
    c_end, v_end = (float(x) for x in forward(h.bars))
    rho_of = {k: density_from_sdf(np.asarray(pair.eager_apply(
        "geometry", p.geometry_inputs(b))["sdf"]), p)
        for k, b in (("start", initial_bars(p)), ("end", h.bars))}
    log(f"  final compliance {c_end:.4f}, volume {v_end:.4f}")
    return {"mode": pair.mode, "pair": pair, "step_fn": step_fn, "history": h,
            "final_compliance": c_end, "final_volume": v_end, "rho": rho_of["end"],
            "rho_initial": rho_of["start"]}


def write_table(results: list[dict], out: Path, rounds: int, load: tuple,
                projection: list) -> str:
    cols = [*CALLS, GLUE, "step"]
    with (out / "steps.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["mode", "figure", "what", "median ms", "q1 ms", "q3 ms", "min ms", "max ms",
                    "rounds"])
        for r in results:
            for name, s in r["split"].items():
                what = ("step minus the endpoints" if name == GLUE else
                        "step" if name == "step" else "inside the step")
                w.writerow([r["mode"], name, what, f"{s.median:.3f}", f"{s.q1:.3f}",
                            f"{s.q3:.3f}", f"{s.lo:.3f}", f"{s.hi:.3f}", s.n])
            if r["speed_up"] is not None:
                s = r["speed_up"]
                w.writerow([r["mode"], f"{BASELINE} step / this step", "ratio",
                            f"{s.median:.3f}", f"{s.q1:.3f}", f"{s.q3:.3f}", f"{s.lo:.3f}",
                            f"{s.hi:.3f}", s.n])
    has_base = any(r["speed_up"] is not None for r in results)
    head = cols + ([f"{BASELINE} step / this step"] if has_base else [])
    lines = ["| mode | " + " | ".join(head) + " |", "|---|" + "---:|" * len(head)]
    for r in results:
        row = [paired.cell(r["split"][c], difference=False) for c in cols]
        if has_base:
            row.append(paired.cell(r["speed_up"], digits=2, difference=False) + "×")
        lines.append(f"| {r['mode']} | " + " | ".join(row) + " |")
    where = "\n".join(f"- {r['mode']}: {backends.RESOURCES[r['mode']]}" for r in results)
    cpus = os.cpu_count()
    text = (f"Milliseconds per optimisation step (jax.value_and_grad, jitted), every mode at "
            f"the same design, {rounds} rounds in rotating order; each endpoint's column is "
            f"its time inside those same steps (Tessera: the component's own per-endpoint "
            f"timing, Component.stats, read before and after each step; tesseract-core, "
            f"which has none: a clock around the Tesseract methods tesseract-jax calls), "
            f"and glue and transport = the step minus the four endpoints, in each round "
            f"(never negative: the calls run one after another inside the step). Each cell: "
            f"the median over rounds (IQR: its interquartile range). Load average (1 min) "
            f"{load[0]:.2f} before, {load[1]:.2f} after the timing, {cpus} CPUs.\n\n"
            + "\n".join(lines) + "\n")
    for pr in projection:
        text += (f"\nProjected for {pr['cores']} cores, {POOL} with workers={pr['cores']}, "
                 f"each worker on a core of its own (from this run's {POOL} row: "
                 f"{pr['per_evaluation_ms']:.2f} ms per geometry apply, "
                 f"{pr['serial_ms']:.1f} ms of the step outside the vjp, "
                 f"{pr['serial_fraction']:.0%} of a one-worker step): step "
                 f"{pr['step_ms']:.1f} ms, {pr['speed_up_over_' + BASELINE]:.2f}× "
                 f"{BASELINE}'s.\n")
    text += ("\nWhat each mode gives the components (float64 arrays, one call at a time "
             "from the host, in every mode):\n\n" + where + "\n")
    (out / "steps.md").write_text(text)
    return text


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--small", action="store_true", help="the CI form: 24 x 12 grid, few steps")
    ap.add_argument("--steps", type=int, help="optimisation steps (default 120; 15 small)")
    ap.add_argument("--simp-steps", type=int, help="SIMP steps (default 80; 20 small)")
    ap.add_argument("--modes", help="comma-separated, from: " + ", ".join(backends.MODES))
    ap.add_argument("--compare-steps", type=int,
                    help="steps run in the modes after the first (default: as many)")
    ap.add_argument("--repeats", type=int, default=25,
                    help="timing rounds: in each, every mode's step, its endpoints timed inside it")
    ap.add_argument("--out", type=Path, default=backends.BUILD / "shape_optimization")
    args = ap.parse_args()

    p = SMALL if args.small else FULL
    steps = args.steps or (15 if args.small else 120)
    modes = ([m.strip() for m in args.modes.split(",")] if args.modes else
             list(backends.MODES[:4] if args.small else backends.MODES))
    for m in modes:
        if m not in backends.MODES:
            ap.error(f"--modes: unknown mode {m!r}; one of {', '.join(backends.MODES)}")
    args.out.mkdir(parents=True, exist_ok=True)
    log(f"grid {p.nx} x {p.ny}, volume fraction {p.volume_fraction}, {steps} steps in "
        f"{modes[0]}, {min(steps, args.compare_steps or steps)} in the others")

    results = []
    with contextlib.ExitStack() as stack:
        for k, mode in enumerate(modes):
            t0 = time.perf_counter()
            pair = stack.enter_context(backends.open_pair(mode, p.fd_step))
            log(f"\n{mode}: opened in {time.perf_counter() - t0:.1f} s")
            n = steps if k == 0 else min(steps, args.compare_steps or steps)
            settings = pipeline.Settings(steps=n, learning_rate=p.learning_rate)
            results.append(run_mode(pair, p, settings))
        log(f"\ntiming every mode at the final design, {args.repeats} rounds")
        load_before = os.getloadavg()[0]
        time_steps(results, p, args.repeats)
        load = (load_before, os.getloadavg()[0])

    main_run = results[0]
    h = main_run["history"]
    failures = []
    c_start = h.compliance[0]
    if not main_run["final_compliance"] < c_start:
        failures.append(f"compliance did not decrease ({c_start:.4f} -> "
                        f"{main_run['final_compliance']:.4f})")
    if main_run["final_volume"] > p.volume_fraction * (1 + VOLUME_TOLERANCE):
        failures.append(f"volume {main_run['final_volume']:.4f} above "
                        f"{p.volume_fraction} (+{VOLUME_TOLERANCE:.0%})")
    agreement = {}
    for r in results[1:]:
        n = len(r["history"].compliance)
        a = np.asarray(h.compliance[:n])
        b = np.asarray(r["history"].compliance)
        diff = float(np.max(np.abs(a - b) / np.abs(a)))
        agreement[r["mode"]] = diff
        if diff > (POOL_AGREEMENT if r["mode"] == POOL else AGREEMENT):
            failures.append(f"{r['mode']}: compliance history differs from {main_run['mode']}'s "
                            f"by {diff:.2e} (relative)")

    log(f"\n== free-form SIMP baseline (optimality criteria), {p.nx} x {p.ny}")
    with tessera.load(backends.SOLVER) as solver:
        base = simp.run(solver, p, steps=args.simp_steps or (20 if args.small else 80), log=log)

    steps_of = {r["mode"]: r["split"] for r in results}
    projection = ([split.pool_projection(steps_of, int(initial_bars(p).size), n)
                   for n in (backends.POOL_WORKERS, 32)]
                  if {POOL, BASELINE} <= set(steps_of) else [])
    table = write_table(results, args.out, args.repeats, load, projection)
    log("\n" + table)
    figures.designs(args.out / "designs.png", p, initial_bars(p), main_run, base)
    figures.history(args.out / "history.png", p, main_run, base)
    summary = {
        "grid": [p.nx, p.ny], "volume_fraction": p.volume_fraction, "steps": steps,
        "initial_compliance": c_start, "final_compliance": main_run["final_compliance"],
        "final_volume": main_run["final_volume"],
        "simp_compliance": base.compliance[-1], "simp_volume": base.volume[-1],
        "agreement_with_" + main_run["mode"]: agreement,
        "ms_per_step": {r["mode"]: {k: v.as_dict() for k, v in r["split"].items()}
                        for r in results},
        "speed_up_over_" + BASELINE: {r["mode"]: r["speed_up"].as_dict() for r in results
                                      if r["speed_up"] is not None},
        "pool_projection": projection,
        "ms_per_step_at": "the final design of " + main_run["mode"],
        "timing_rounds": args.repeats,
        "rounds_ms": {r["mode"]: r["rounds_ms"] for r in results},
        "load_average_1min": {"before": load[0], "after": load[1]},
        "cpus": os.cpu_count(),
        "resources": {r["mode"]: backends.RESOURCES[r["mode"]] for r in results},
        "final_bars": main_run["history"].bars.tolist(),
        "failures": failures,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    log(f"parametric: compliance {c_start:.4f} -> {main_run['final_compliance']:.4f} at volume "
        f"{main_run['final_volume']:.4f}; SIMP: {base.compliance[-1]:.4f} at "
        f"{base.volume[-1]:.4f}")
    log(f"wrote {args.out}/designs.png, history.png, steps.csv, steps.md, summary.json")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
