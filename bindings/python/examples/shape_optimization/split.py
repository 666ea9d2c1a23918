# SPDX-License-Identifier: MIT
"""The study's table from its per-round times: the endpoints timed inside
each step, the glue (the step minus them, never negative), each mode's
speed-up over tesseract-core, and what a pool of more workers would give
(no JAX here: the tests check these on given numbers)."""

from __future__ import annotations

import paired

CALLS = ("geometry apply", "geometry vjp (FD)", "solver apply", "solver vjp (adjoint)")
GLUE = "JAX glue and transport"
POOL = "tessera worker pool"
BASELINE = "tesseract-core"


def inside_split(step_ms: list, calls_ms: dict) -> dict:
    """One mode's figures from its per-round times: the step, each endpoint
    timed inside that same step, and the glue = step minus those, per round.
    The endpoint calls of a step run one after the other inside its
    interval (each needs the one before), so their sum cannot exceed it: a
    negative glue means the figures are not from the same steps."""
    for name in CALLS:
        if len(calls_ms[name]) != len(step_ms):
            raise ValueError(f"{name}: {len(calls_ms[name])} rounds, the step {len(step_ms)}")
    glue = [t - sum(calls_ms[name][r] for name in CALLS) for r, t in enumerate(step_ms)]
    if min(glue) < 0:
        raise ValueError(f"the endpoints took longer than the step in a round "
                         f"({min(glue):.3f} ms of glue): not timed inside the same steps")
    split = {name: paired.summarise(calls_ms[name]) for name in CALLS}
    split[GLUE] = paired.summarise(glue)
    split["step"] = paired.summarise(step_ms)
    return split


def speed_up(base_ms: list, ms: list) -> paired.Spread:
    """base's step over this mode's, round by round."""
    return paired.summarise([b / t for b, t in zip(base_ms, ms, strict=True)])


def pool_projection(steps: dict, columns: int, cores: int) -> dict:
    """What a pool of `cores` workers would give, from this run's figures,
    if each worker had a core of its own: the geometry's vjp is 1 + 2 c
    apply calls for c columns (the base point, then two per column), each
    costing what the pool's own geometry apply costs inside the step, and
    they split across lanes as 1 + 2 ceil(c / N); the rest of the pool's
    step (solver, glue, the geometry's apply) stays serial (Amdahl).
    steps: {mode: split} with POOL and BASELINE."""
    pool, base = steps[POOL], steps[BASELINE]
    per_eval = pool["geometry apply"].median
    serial = pool["step"].median - pool["geometry vjp (FD)"].median
    n = min(cores, columns)
    step_n = serial + per_eval * (1 + 2 * -(-columns // n))
    one = serial + per_eval * (1 + 2 * columns)
    return {"cores": cores, "per_evaluation_ms": per_eval, "serial_ms": serial,
            "serial_fraction": serial / one, "step_ms": step_n,
            "speed_up_over_" + BASELINE: base["step"].median / step_n}
