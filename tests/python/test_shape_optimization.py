# SPDX-License-Identifier: MIT
"""The shape-optimisation study (bindings/python/examples/shape_optimization)
in its small form: jax.grad through the Python geometry component (finite-
difference vjp) and the C compliance solver (adjoint vjp) lowers the
compliance under the volume constraint, in-process, in worker mode and
with the geometry behind `tessera serve`, all three on the same path; the
SIMP baseline runs with the same solver; the pictures are written."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from conftest import BUILD, ROOT

STUDY = ROOT / "bindings" / "python" / "examples" / "shape_optimization" / "study.py"


def test_the_small_study_lowers_compliance_within_the_volume(tmp_path):
    env = {**os.environ, "TESSERA_BUILD_DIR": str(BUILD)}
    done = subprocess.run([sys.executable, str(STUDY), "--small", "--repeats", "3",
                           "--out", str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["failures"] == []
    assert summary["final_compliance"] < 0.95 * summary["initial_compliance"]
    assert summary["final_volume"] <= summary["volume_fraction"] * 1.02
    agreement = summary["agreement_with_tessera inproc"]
    assert set(agreement) == {"tessera worker", "tessera serve"}
    assert all(d <= 1e-6 for d in agreement.values()), agreement
    # the free-form baseline meets its volume and beats the starting design
    assert abs(summary["simp_volume"] - summary["volume_fraction"]) < 0.01
    assert summary["simp_compliance"] < summary["initial_compliance"]
    for name in ("designs.png", "history.png", "steps.csv", "steps.md"):
        assert (tmp_path / name).stat().st_size > 0, name
