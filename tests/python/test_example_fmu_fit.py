# SPDX-License-Identifier: MIT
"""The FMU example (bindings/python/examples/fmu_fit/fit.py) in its quick
form: jax.jit(jax.value_and_grad) through spring.fmu in worker mode with
two workers recovers the stiffness and damping the data were made with,
MALA samples around them at a reasonable acceptance rate, and the picture
is written.

Tolerances, relative to the true k = 4, c = 0.4: the fit and the posterior
mean within 3 % for k and 10 % for c. The posterior's own standard
deviation is about 0.2 % of k and 1 % of c, so a run that missed by more
did not converge; the posterior's spread must itself be below those
tolerances, and the loss must end at the noise level."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import BUILD, ROOT

FIT = ROOT / "bindings" / "python" / "examples" / "fmu_fit" / "fit.py"
SPRING = BUILD / "fmu" / "spring.fmu"
TRUE = {"k": 4.0, "c": 0.4}
TOLERANCE = {"k": 0.03, "c": 0.10}     # relative


def run_quick(out, *extra):
    env = {**os.environ, "TESSERA_BUILD_DIR": str(BUILD)}
    return subprocess.run([sys.executable, str(FIT), "--quick", "--out", str(out), *extra],
                          env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.skipif(not SPRING.exists(), reason=f"{SPRING} is not built")
def test_quick_fit_recovers_k_and_c_and_writes_the_figure(tmp_path):
    done = run_quick(tmp_path)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    png = tmp_path / "fit.png"
    assert png.stat().st_size > 10_000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    s = json.loads((tmp_path / "summary.json").read_text())
    assert s["failures"] == []
    assert s["mode"] == "worker" and s["workers"] == 2
    for name, true in TRUE.items():
        assert abs(s["fit"][name] - true) <= TOLERANCE[name] * true, (name, s["fit"])
        mean, std = s["posterior_mean"][name], s["posterior_std"][name]
        assert abs(mean - true) <= TOLERANCE[name] * true, (name, mean)
        assert 0 < std < TOLERANCE[name] * true, (name, std)
    # the loss came down to the noise level: n/2 for n points, within a few sqrt(n)
    assert s["loss_end"] < s["loss_start"] / 50
    assert s["loss_end"] < 0.5 * s["points"] + 5 * s["points"] ** 0.5
    assert 0.25 <= s["acceptance"] <= 0.85
    assert "posterior:" in done.stdout and "acceptance" in done.stdout


def test_a_missing_fmu_is_named_and_fails(tmp_path):
    done = run_quick(tmp_path, "--fmu", str(tmp_path / "absent.fmu"))
    assert done.returncode == 1
    assert "absent.fmu does not exist" in done.stderr
    assert not (tmp_path / "fit.png").exists()
