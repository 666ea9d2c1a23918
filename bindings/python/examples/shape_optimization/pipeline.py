# SPDX-License-Identifier: MIT
"""The differentiable pipeline and its optimiser.

    bars --geometry--> sdf --sigmoid (JAX)--> rho --solver--> compliance

The two components are reached through an ``apply(component, inputs)``
function: ``tessera.jax.apply`` for Tessera's components (in-process, in a
worker, or a served URL), tesseract-jax's ``apply_tesseract`` for
tesseract-core's. ``jax.grad`` of the pipeline calls the solver's adjoint
vjp and the geometry's finite-difference vjp.

The volume constraint mean(rho) <= volume_fraction is kept by an augmented
Lagrangian; its multiplier is updated after every step, the penalty grows
slowly. Adam moves the bar end points, with a step length that decays so
that the design settles."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import jax
import jax.numpy as jnp
import numpy as np

from problem import Problem, density_from_sdf

ApplyFn = Callable[[object, dict], dict]


def make_pipeline(apply: ApplyFn, geometry, solver, p: Problem):
    """(compliance, volume) of a design, as a JAX function of the bars."""
    def forward(bars):
        sdf = apply(geometry, p.geometry_inputs(bars))["sdf"]
        rho = density_from_sdf(sdf, p, xp=jnp)
        compliance = apply(solver, p.solver_inputs(rho))["compliance"]
        return compliance, jnp.mean(rho)
    return forward


@dataclass
class History:
    compliance: list[float] = field(default_factory=list)
    volume: list[float] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    bars: np.ndarray | None = None
    multipliers: tuple[float, float, float] = (0.0, 0.0, 1.0)   # lam, mu, c0 at the end


@dataclass(frozen=True)
class Settings:
    steps: int = 120
    learning_rate: float = 0.4        # element widths per step, Adam's scale ...
    decay: float = 0.975              # ... shrinking by this factor every step
    beta1: float = 0.9
    beta2: float = 0.999
    penalty: float = 20.0             # augmented Lagrangian's initial penalty
    penalty_growth: float = 1.03
    penalty_max: float = 1e3


def make_step(forward, p: Problem, jit: bool = True):
    """value_and_grad of L = c/c0 + psi(g), g = volume/volume_fraction - 1,
    psi the augmented Lagrangian term of an inequality: called as
    step(bars, lam, mu, c0) -> ((L, (c, volume)), dL/dbars)."""
    def loss(bars, lam, mu, c0):
        c, v = forward(bars)
        g = v / p.volume_fraction - 1.0
        psi = jnp.where(g >= -lam / mu, lam * g + 0.5 * mu * g * g, -0.5 * lam * lam / mu)
        return c / c0 + psi, (c, v)

    value_and_grad = jax.value_and_grad(loss, has_aux=True)
    return jax.jit(value_and_grad) if jit else value_and_grad


def optimise(step_fn, forward, bars0: np.ndarray, p: Problem, s: Settings,
             log: Callable[[str], None] | None = None) -> History:
    """Adam on the augmented Lagrangian of make_step."""
    bars = jnp.asarray(bars0)
    m = jnp.zeros_like(bars)
    v2 = jnp.zeros_like(bars)
    lam, mu = 0.0, s.penalty
    c0 = float(forward(bars)[0])
    h = History()
    for k in range(1, s.steps + 1):
        t0 = time.perf_counter()
        (_, (c, vol)), grad = step_fn(bars, lam, mu, c0)
        grad = np.asarray(grad)     # waits for the step to finish
        h.step_seconds.append(time.perf_counter() - t0)
        h.compliance.append(float(c))
        h.volume.append(float(vol))
        m = s.beta1 * m + (1 - s.beta1) * grad
        v2 = s.beta2 * v2 + (1 - s.beta2) * grad * grad
        step = s.learning_rate * s.decay ** (k - 1) * (m / (1 - s.beta1 ** k)) / (
            jnp.sqrt(v2 / (1 - s.beta2 ** k)) + 1e-8)
        bars = bars - step
        g = float(vol) / p.volume_fraction - 1.0
        lam = max(0.0, lam + mu * g)
        mu = min(s.penalty_max, mu * s.penalty_growth)
        if log and (k == 1 or k % 10 == 0 or k == s.steps):
            log(f"  step {k:4d}  compliance {float(c):10.4f}  volume {float(vol):.4f}  "
                f"({h.step_seconds[-1] * 1e3:.1f} ms)")
    h.bars = np.asarray(bars)
    h.multipliers = (lam, mu, c0)
    return h
