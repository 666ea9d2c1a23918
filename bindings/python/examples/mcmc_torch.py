# SPDX-License-Identifier: MIT
"""The same MALA chain as mcmc_jax.py, in PyTorch: each step calls the
rosenbrock plugin through tessera.torch (apply forward, vjp in backward).
With the same seed it draws the same random numbers, so the two chains
agree.

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
    def value_and_grad(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x = x.detach().requires_grad_(True)
        value = tessera.torch.apply(rosen, {"x": x, "a": A, "b": B})["value"]
        logp = -value
        (grad,) = torch.autograd.grad(logp, x)
        return logp.detach(), grad
    return value_and_grad


def run_chain(rosen: tessera.Component, x0: np.ndarray, noise: np.ndarray, log_u: np.ndarray,
              step_size: float) -> tuple[np.ndarray, int]:
    value_and_grad = make_value_and_grad(rosen)

    def log_q(to, frm, grad_frm):
        return -torch.sum((to - frm - step_size * grad_frm) ** 2) / (4.0 * step_size)

    x = torch.from_numpy(x0.copy())
    logp, grad = value_and_grad(x)
    chain = np.empty((len(noise), len(x0)))
    accepted = 0
    scale = float(np.sqrt(2.0 * step_size))
    for k, (xi, lu) in enumerate(zip(torch.from_numpy(noise), log_u)):
        proposal = x + step_size * grad + scale * xi
        logp_new, grad_new = value_and_grad(proposal)
        log_alpha = logp_new - logp + log_q(x, proposal, grad_new) - log_q(proposal, x, grad)
        if lu < float(log_alpha):
            x, logp, grad = proposal, logp_new, grad_new
            accepted += 1
        chain[k] = x.numpy()
    return chain, accepted


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    noise, log_u = random_numbers(args.seed, args.steps, args.dim)
    with tessera.load(args.plugin, args.mode) as rosen:
        t0 = time.perf_counter()
        chain, accepted = run_chain(rosen, start(args.dim), noise, log_u, args.step_size)
        seconds = time.perf_counter() - t0
        report(f"PyTorch ({args.mode}, autograd)", chain, accepted, seconds)


if __name__ == "__main__":
    main()
