# SPDX-License-Identifier: MIT
"""The Dask examples run on a LocalCluster of two workers, small enough to
take seconds, and each checks its cluster results against the same
computation done serially in-process (the example exits non-zero if they
differ): the heat sweep with Dask's progress bar, the ensemble gradient of
1,000 vjps, and parallel MALA chains with their R-hat."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

pytest.importorskip("distributed")

from conftest import BUILD, ROOT  # noqa: E402

EXAMPLES = ROOT / "bindings" / "python" / "examples"


def run_example(name: str, *args: str) -> str:
    env = {**os.environ, "TESSERA_BUILD_DIR": str(BUILD)}
    done = subprocess.run([sys.executable, str(EXAMPLES / name), "--workers", "2", *args],
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_the_heat_sweep_matches_the_serial_sweep(mode):
    out = run_example("dask_heat_sweep.py", "--runs", "100", "--mode", mode)
    assert "100% Completed" in out                   # Dask's progress bar
    assert "largest difference from the serial run: 0.0e+00" in out, out
    assert "component opens per worker: [1]" in out, out


def test_the_ensemble_gradient_matches_the_serial_sum_and_finite_differences():
    out = run_example("dask_ensemble_gradient.py", "--samples", "1000")
    rel = float(re.search(r"against the serial sum\s+relative difference (\S+)", out).group(1))
    assert rel <= 1e-12, out


def test_the_mala_chains_match_the_serial_chains_and_report_rhat():
    out = run_example("dask_mala_chains.py", "--chains", "4", "--steps", "2000")
    assert "same states: yes" in out, out
    rhat = re.search(r"split R-hat\s+\[([^\]]+)\]", out).group(1).split()
    assert len(rhat) == 2 and all(float(r) > 0.9 for r in rhat), out
