# SPDX-License-Identifier: MIT
"""The same MALA chain as mcmc_jax.py, in PyTorch: each step calls the
rosenbrock plugin through tessera.torch (apply forward, vjp in backward).
With the same seed it draws the same random numbers, so the two chains
agree.

The chain keeps its full trace as it goes, as an analysis would: every
state, and the plugin's outputs of every proposal (its value, from apply,
and its gradient, from vjp: tensors over what the plugin returned). The
cost of a step at the start and at the end of the run is reported: holding
the results of earlier steps must not slow later ones.

    python bindings/python/examples/mcmc_torch.py [--steps N] [--dim D] [--mode worker]
"""

from __future__ import annotations

import time

import numpy as np
import torch

import tessera
import tessera.torch
from mcmc_common import A, B, arguments, random_numbers, report, start


def make_value_and_grad(rosen: tessera.Component):
    def value_and_grad(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        x = x.detach().requires_grad_(True)
        value = tessera.torch.apply(rosen, {"x": x, "a": A, "b": B})["value"]
        (grad,) = torch.autograd.grad(-value, x)
        return value.detach(), -value.detach(), grad
    return value_and_grad


def run_chain(rosen: tessera.Component, x0: np.ndarray, noise: np.ndarray, log_u: np.ndarray,
              step_size: float) -> tuple[np.ndarray, int, list[float], dict[str, list]]:
    """The chain, the number accepted, the seconds of each step and the
    trace kept: states, and the plugin's value and gradient of every
    proposal."""
    value_and_grad = make_value_and_grad(rosen)

    def log_q(to, frm, grad_frm):
        return -torch.sum((to - frm - step_size * grad_frm) ** 2) / (4.0 * step_size)

    x = torch.from_numpy(x0.copy())
    _, logp, grad = value_and_grad(x)
    trace: dict[str, list] = {"x": [], "value": [], "grad": []}
    step_seconds = []
    accepted = 0
    scale = float(np.sqrt(2.0 * step_size))
    clock = time.perf_counter
    t = clock()
    for xi, lu in zip(torch.from_numpy(noise), log_u):
        proposal = x + step_size * grad + scale * xi
        value_new, logp_new, grad_new = value_and_grad(proposal)
        log_alpha = logp_new - logp + log_q(x, proposal, grad_new) - log_q(proposal, x, grad)
        if lu < float(log_alpha):
            x, logp, grad = proposal, logp_new, grad_new
            accepted += 1
        trace["x"].append(x)
        trace["value"].append(value_new)
        trace["grad"].append(grad_new)
        now = clock()
        step_seconds.append(now - t)
        t = now
    chain = torch.stack(trace["x"]).numpy() if trace["x"] else np.empty((0, len(x0)))
    return chain, accepted, step_seconds, trace


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    noise, log_u = random_numbers(args.seed, args.steps, args.dim)
    with tessera.load(args.plugin, args.mode) as rosen:
        t0 = time.perf_counter()
        chain, accepted, step_seconds, trace = run_chain(rosen, start(args.dim), noise, log_u,
                                                         args.step_size)
        seconds = time.perf_counter() - t0
        held = (f"{len(trace['x'])} states, and the plugin's value and gradient of each of "
                f"{len(trace['value'])} proposals")
        report(f"PyTorch ({args.mode}, autograd)", chain, accepted, seconds, step_seconds, held)


if __name__ == "__main__":
    main()
