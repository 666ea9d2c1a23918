# SPDX-License-Identifier: MIT
"""The MCMC examples run, in-process and in worker mode, and the JAX and
PyTorch chains, fed the same random numbers, reach the same state."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT

EXAMPLES = ROOT / "bindings" / "python" / "examples"


def run_example(name: str, *args: str) -> str:
    env = {**os.environ, "TESSERA_BUILD_DIR": str(BUILD)}
    done = subprocess.run([sys.executable, str(EXAMPLES / name), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout


def summary(text: str) -> dict[str, str]:
    fields = dict(re.findall(r"^\s+(acceptance rate|last state)\s+(.*)$", text, re.M))
    assert set(fields) == {"acceptance rate", "last state"}, text
    return fields


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_the_jax_and_torch_chains_agree(mode):
    # Short chains: long ones part ways once rounding (XLA and PyTorch
    # order their arithmetic differently) flips one accept decision.
    jax_run = summary(run_example("mcmc_jax.py", "--steps", "100", "--mode", mode))
    torch_run = summary(run_example("mcmc_torch.py", "--steps", "100", "--mode", mode))
    assert jax_run == torch_run
    assert 0.2 < float(jax_run["acceptance rate"]) < 0.9


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_newton_trust_ncg_through_hvp_agrees_with_hand_written_derivatives(mode):
    out = run_example("newton_trust_ncg.py", "--mode", mode, "--dim", "6")
    assert "agree: same iterations, same minimum" in out
    counts = dict(re.findall(r"(\w+) (\d+)", out.split("endpoint calls:")[1]))
    assert int(counts["hvp"]) > 0 and int(counts["vjp"]) > 0, out


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_emcee_through_umbridge_agrees_with_the_same_sampler_by_hand(mode):
    out = run_example("umbridge_emcee.py", "--mode", mode, "--steps", "1500")
    assert "the two posteriors agree with each other and with the exact moments" in out, out
    rows = dict(re.findall(r"^\s+(E\[x0\]|Var\[x0\]|E\[x1\]|Var\[x1\])\s+(.*)$", out, re.M))
    assert set(rows) == {"E[x0]", "Var[x0]", "E[x1]", "Var[x1]"}, out
