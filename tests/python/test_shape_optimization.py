# SPDX-License-Identifier: MIT
"""The shape-optimisation study (bindings/python/examples/shape_optimization)
in its small form: jax.grad through the Python geometry component (finite-
difference vjp) and the C compliance solver (adjoint vjp) lowers the
compliance under the volume constraint, in-process, in worker mode and
with both components behind `tessera serve`, all three on the same path; the
SIMP baseline runs with the same solver; the pictures are written. And the
study's paired timing summary (paired.py) on given numbers."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import BUILD, ROOT

EXAMPLE = ROOT / "bindings" / "python" / "examples" / "shape_optimization"
STUDY = EXAMPLE / "study.py"
sys.path.insert(0, str(EXAMPLE))
import paired  # noqa: E402
import split as study  # noqa: E402


def test_the_small_study_lowers_compliance_within_the_volume(tmp_path):
    env = {**os.environ, "TESSERA_BUILD_DIR": str(BUILD)}
    done = subprocess.run([sys.executable, str(STUDY), "--small", "--repeats", "4",
                           "--out", str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["failures"] == []
    assert summary["final_compliance"] < 0.95 * summary["initial_compliance"]
    assert summary["final_volume"] <= summary["volume_fraction"] * 1.02
    agreement = summary["agreement_with_tessera inproc"]
    assert set(agreement) == {"tessera worker", "tessera worker pool", "tessera serve"}
    assert all(d <= 1e-6 for m, d in agreement.items() if m != "tessera worker pool"), agreement
    assert agreement["tessera worker pool"] <= 1e-4, agreement
    # the free-form baseline meets its volume and beats the starting design
    assert abs(summary["simp_volume"] - summary["volume_fraction"]) < 0.01
    assert summary["simp_compliance"] < summary["initial_compliance"]
    for name in ("designs.png", "history.png", "steps.csv", "steps.md"):
        assert (tmp_path / name).stat().st_size > 0, name
    table = (tmp_path / "steps.md").read_text()
    assert "4 rounds" in table and "Load average" in table
    assert "inside those same steps" in table
    # steps.csv: six figures a mode, every one non-negative
    with (tmp_path / "steps.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 4 * 6
    assert all(float(r["min ms"]) >= 0 for r in rows), rows
    modes = ("tessera inproc", "tessera worker", "tessera worker pool", "tessera serve")
    for mode in modes:
        assert all(len(v) == 4 for v in summary["rounds_ms"][mode].values()), mode
        glue = summary["ms_per_step"][mode]["JAX glue and transport"]
        assert glue["rounds"] == 4 and 0 <= glue["min"] <= glue["q1"] <= glue["median"] <= glue["q3"]
    # the pool's geometry vjp was the library's differences, on two workers
    assert summary["resources"]["tessera worker pool"].startswith("the geometry on 2 worker")


def test_glue_is_the_step_minus_the_endpoints_inside_it_round_by_round():
    step = [10.0, 12.0, 11.0]
    calls = {"geometry apply": [1.0, 1.0, 1.0], "geometry vjp (FD)": [6.0, 8.0, 6.5],
             "solver apply": [0.5, 0.5, 0.5], "solver vjp (adjoint)": [0.5, 0.5, 1.0]}
    split = study.inside_split(step, calls)
    assert [split[study.GLUE].lo, split[study.GLUE].median, split[study.GLUE].hi] == [2.0, 2.0, 2.0]
    assert split["step"].median == 11.0 and split["geometry vjp (FD)"].median == 6.5


def test_endpoints_longer_than_their_step_are_refused_not_printed_as_negative_glue():
    calls = {name: [1.0, 1.0] for name in study.CALLS}
    calls["geometry vjp (FD)"] = [5.0, 9.5]
    with pytest.raises(ValueError, match=r"longer than the step.*-2\.500 ms"):
        study.inside_split([10.0, 10.0], calls)
    with pytest.raises(ValueError, match="solver apply: 1 rounds, the step 2"):
        study.inside_split([10.0, 10.0], {**calls, "solver apply": [1.0]})


def test_speed_up_and_the_projection_to_more_cores_on_given_numbers():
    assert study.speed_up([300.0, 200.0], [150.0, 50.0]).median == 3.0
    spread = paired.summarise

    def split(apply, vjp, step):
        return {"geometry apply": spread([apply]), "geometry vjp (FD)": spread([vjp]),
                "step": spread([step])}
    # 32 columns: 65 applies of 4 ms on one worker; 20 ms of the step else
    steps = {study.POOL: split(4.0, 200.0, 220.0), study.BASELINE: split(3.5, 270.0, 300.0)}
    two, many = (study.pool_projection(steps, 32, n) for n in (2, 32))
    assert two["per_evaluation_ms"] == 4.0 and two["serial_ms"] == 20.0
    assert two["step_ms"] == 20.0 + 4.0 * 33
    assert two["speed_up_over_tesseract-core"] == 300.0 / 152.0
    assert many["step_ms"] == 20.0 + 4.0 * 3
    assert many["speed_up_over_tesseract-core"] == 300.0 / 32.0
    assert two["serial_fraction"] == 20.0 / (20.0 + 4.0 * 65)
    # more cores than columns: one column a lane
    assert study.pool_projection(steps, 32, 64)["step_ms"] == many["step_ms"]


def test_the_glue_is_the_median_of_the_per_round_differences_not_of_the_medians():
    # Round by round the step is the calls plus 2 ms; the medians come
    # from different rounds, and their difference would be 23 ms.
    fd = [100.0, 200.0, 102.0, 202.0, 101.0]
    solve = [20.0, 8.0, 8.0, 8.0, 30.0]
    step = [f + s + 2.0 for f, s in zip(fd, solve)]
    assert float(np.median(step) - np.median(fd) - np.median(solve)) == 23.0
    s = paired.paired(step, fd, solve)
    assert (s.median, s.q1, s.q3, s.lo, s.hi, s.n) == (2.0, 2.0, 2.0, 2.0, 2.0, 5)
    assert not s.in_noise
    assert paired.cell(s) == "2.0 (IQR 0.0)"


def test_a_difference_smaller_than_its_spread_is_marked_inside_the_noise():
    s = paired.paired([10.0, 30.0, 5.0, 40.0, 18.0], [20.0, 20.0, 20.0, 20.0, 20.0])
    # differences -10, 10, -15, 20, -2: median -2, quartiles -10 and 10
    assert (s.median, s.q1, s.q3, s.lo, s.hi) == (-2.0, -10.0, 10.0, -15.0, 20.0)
    assert s.in_noise
    assert paired.cell(s) == "~0 (IQR 20.0)"
    # a time is never '~0', however wide its spread
    assert paired.cell(paired.summarise([1.0, 9.0, 2.0, 8.0]), difference=False) == "5.0 (IQR 6.5)"
    assert s.as_dict()["in_noise"] is True


def test_a_real_negative_difference_keeps_its_sign():
    s = paired.summarise([-3.0, -2.5, -2.0, -2.2, -2.8])
    assert s.median == -2.5 and s.iqr == pytest.approx(0.6)
    assert not s.in_noise
    assert paired.cell(s) == "-2.5 (IQR 0.6)"


def test_paired_refuses_lists_of_different_rounds_and_empty_ones():
    with pytest.raises(ValueError, match="subtrahend 1 has 2 rounds, the minuend 3"):
        paired.paired([1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [1.0, 1.0])
    with pytest.raises(ValueError, match="non-empty"):
        paired.summarise([])
    with pytest.raises(ValueError, match="rounds must be at least 1"):
        paired.rounds_ms({"a": {"x": lambda: None}}, 0)


def test_rounds_rotate_the_order_of_modes_and_of_calls_within_them():
    calls = []
    ticks = iter(range(1000))
    groups = {g: {n: (lambda g=g, n=n: calls.append((g, n))) for n in ("step", "a", "b")}
              for g in ("m1", "m2")}
    ms = paired.rounds_ms(groups, 3, clock=lambda: float(next(ticks)))
    warm, timed = calls[:6], calls[6:]
    assert sorted(warm) == sorted(timed[:6])     # every function once before the rounds
    assert timed[:6] == [("m1", "step"), ("m1", "a"), ("m1", "b"),
                         ("m2", "step"), ("m2", "a"), ("m2", "b")]
    assert timed[6:12] == [("m2", "a"), ("m2", "b"), ("m2", "step"),
                           ("m1", "a"), ("m1", "b"), ("m1", "step")]
    assert timed[12:] == [("m1", "b"), ("m1", "step"), ("m1", "a"),
                          ("m2", "b"), ("m2", "step"), ("m2", "a")]
    # each call took one tick of the given clock: 1000 ms a call, 3 rounds each
    assert ms == {g: {n: [1000.0] * 3 for n in ("step", "a", "b")} for g in ("m1", "m2")}
