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

    python3 study.py                 # full study: 60 x 30 grid, 3-5 minutes on 2 cores
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
import tessera  # noqa: E402
from problem import FULL, SMALL, Problem, density_from_sdf, initial_bars  # noqa: E402

VOLUME_TOLERANCE = 0.02     # the constraint holds to 2 % of the target at the end
AGREEMENT = 1e-6            # relative difference of compliance histories between modes


def log(text: str) -> None:
    print(text, flush=True)


CALLS = ("geometry apply", "geometry vjp (FD)", "solver apply", "solver vjp (adjoint)")
GLUE = "JAX glue and transport"


def step_parts(run: dict, p: Problem, bars: np.ndarray, multipliers: tuple) -> dict:
    """The calls one optimisation step makes, as functions to time: the
    whole jitted step and each endpoint call it makes (eager), at `bars`."""
    pair, step_fn = run["pair"], run["step_fn"]
    g_in = p.geometry_inputs(bars)
    sdf = np.asarray(pair.eager_apply("geometry", g_in)["sdf"])
    s_in = p.solver_inputs(density_from_sdf(sdf, p))
    ones = np.ones_like(sdf)
    return {
        "step": lambda: np.asarray(step_fn(bars, *multipliers)[1]),
        "geometry apply": lambda: pair.eager_apply("geometry", g_in),
        "geometry vjp (FD)": lambda: pair.eager_vjp("geometry", g_in, "bars", "sdf", ones),
        "solver apply": lambda: pair.eager_apply("solver", s_in),
        "solver vjp (adjoint)": lambda: pair.eager_vjp("solver", s_in, "rho", "compliance",
                                                       np.float64(1.0)),
    }


def split_of(ms: dict) -> dict:
    """One mode's figures from its per-round times: each call and the step
    as they are, the glue as the step minus the four calls in each round."""
    split = {name: paired.summarise(ms[name]) for name in (*CALLS, "step")}
    split[GLUE] = paired.paired(ms["step"], *(ms[name] for name in CALLS))
    return split


def against(ms: dict, base: dict) -> dict:
    """Each call and the step of one mode minus the same in the base mode,
    round by round."""
    return {name: paired.paired(ms[name], base[name]) for name in (*CALLS, "step")}


def time_steps(runs: list[dict], p: Problem, rounds: int) -> None:
    """Every mode's step and endpoint calls at one design (the first run's
    final one), round by round: in each round every mode's step and then
    its four calls, in rotating order (paired.rounds_ms)."""
    h = runs[0]["history"]
    groups = {r["mode"]: step_parts(r, p, h.bars, h.multipliers) for r in runs}
    ms = paired.rounds_ms(groups, rounds)
    base = ms[runs[0]["mode"]]
    for r in runs:
        r["rounds_ms"] = ms[r["mode"]]
        r["split"] = split_of(ms[r["mode"]])
        r["against"] = against(ms[r["mode"]], base)


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


def write_table(results: list[dict], out: Path, rounds: int, load: tuple) -> str:
    cols = [*CALLS, GLUE, "step"]
    first = results[0]["mode"]
    with (out / "steps.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["mode", "figure", "what", "median ms", "q1 ms", "q3 ms", "min ms", "max ms",
                    "rounds", "inside the noise"])
        for r in results:
            for kind, figures in (("time", r["split"]), (f"minus {first}", r["against"])):
                if kind != "time" and r["mode"] == first:
                    continue
                for name, s in figures.items():
                    what = "step minus the calls" if name == GLUE else kind
                    w.writerow([r["mode"], name, what, f"{s.median:.3f}", f"{s.q1:.3f}",
                                f"{s.q3:.3f}", f"{s.lo:.3f}", f"{s.hi:.3f}", s.n,
                                "" if what == "time" else int(s.in_noise)])
    lines = ["| mode | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for r in results:
        lines.append(f"| {r['mode']} | " + " | ".join(
            paired.cell(r["split"][c], difference=c == GLUE) for c in cols) + " |")
    diff_cols = [*CALLS, "step"]
    vs = [f"| mode minus {first} | " + " | ".join(diff_cols) + " |",
          "|---|" + "---:|" * len(diff_cols)]
    for r in results[1:]:
        vs.append(f"| {r['mode']} | " + " | ".join(paired.cell(r["against"][c])
                                                     for c in diff_cols) + " |")
    where = "\n".join(f"- {r['mode']}: {backends.RESOURCES[r['mode']]}" for r in results)
    text = (f"Milliseconds per optimisation step (jax.value_and_grad, jitted) and per "
            f"endpoint call (eager), every mode at the same design, {rounds} rounds; in each "
            f"round every mode's step and its four calls, in rotating order. Each cell: the "
            f"median over rounds (IQR: its interquartile range). Glue and transport = the "
            f"step minus the four calls, taken in each round; '~0' marks a difference whose "
            f"median is smaller than its IQR (inside the noise: its sign is not known). "
            f"Load average (1 min) {load[0]:.2f} before, {load[1]:.2f} after the timing, "
            f"{os.cpu_count()} CPUs.\n\n" + "\n".join(lines) + "\n")
    if len(results) > 1:
        text += (f"\nEach mode minus {first}, call by call, the difference taken in each "
                 f"round:\n\n" + "\n".join(vs) + "\n")
    text += ("\nWhat each mode gives the components (float64 arrays, one call at a time, "
             "in every mode):\n\n" + where + "\n")
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
                    help="timing rounds: in each, every mode's step and its four calls")
    ap.add_argument("--out", type=Path, default=backends.BUILD / "shape_optimization")
    args = ap.parse_args()

    p = SMALL if args.small else FULL
    steps = args.steps or (15 if args.small else 120)
    modes = ([m.strip() for m in args.modes.split(",")] if args.modes else
             list(backends.MODES[:3] if args.small else backends.MODES))
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
            pair = stack.enter_context(backends.open_pair(mode))
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
        if diff > AGREEMENT:
            failures.append(f"{r['mode']}: compliance history differs from {main_run['mode']}'s "
                            f"by {diff:.2e} (relative)")

    log(f"\n== free-form SIMP baseline (optimality criteria), {p.nx} x {p.ny}")
    with tessera.load(backends.SOLVER) as solver:
        base = simp.run(solver, p, steps=args.simp_steps or (20 if args.small else 80), log=log)

    table = write_table(results, args.out, args.repeats, load)
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
        "ms_minus_" + main_run["mode"]: {r["mode"]: {k: v.as_dict()
                                                     for k, v in r["against"].items()}
                                         for r in results[1:]},
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
