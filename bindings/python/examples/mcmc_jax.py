# SPDX-License-Identifier: MIT
"""MALA on the Rosenbrock "banana" in JAX: the whole chain is one jitted
jax.lax.scan, and every step calls the rosenbrock plugin in-process through
Tessera's XLA FFI handler (value and gradient: the plugin's apply and vjp),
with no Python per step.

    python bindings/python/examples/mcmc_jax.py [--steps N] [--dim D] [--mode worker]
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import tessera
import tessera.jax
from mcmc_common import A, B, arguments, random_numbers, report, start

jax.config.update("jax_enable_x64", True)


def make_chain(rosen: tessera.Component, step_size: float):
    def log_density(x):
        value = tessera.jax.apply(rosen, {"x": x, "a": A, "b": B})["value"]
        return -value

    value_and_grad = jax.value_and_grad(log_density)

    def log_q(to, frm, grad_frm):
        return -jnp.sum((to - frm - step_size * grad_frm) ** 2) / (4.0 * step_size)

    def step(state, randoms):
        x, logp, grad = state
        noise, log_u = randoms
        proposal = x + step_size * grad + jnp.sqrt(2.0 * step_size) * noise
        logp_new, grad_new = value_and_grad(proposal)
        log_alpha = (logp_new - logp + log_q(x, proposal, grad_new)
                     - log_q(proposal, x, grad))
        accept = log_u < log_alpha
        state = jax.tree.map(lambda new, old: jnp.where(accept, new, old),
                             (proposal, logp_new, grad_new), (x, logp, grad))
        return state, (state[0], accept)

    @jax.jit
    def chain(x0, noise, log_u):
        logp, grad = value_and_grad(x0)
        _, (xs, accepted) = jax.lax.scan(step, (x0, logp, grad), (noise, log_u))
        return xs, accepted.sum()

    return chain


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    noise, log_u = random_numbers(args.seed, args.steps, args.dim)
    with tessera.load(args.plugin, args.mode) as rosen:
        chain = make_chain(rosen, args.step_size)
        x0, noise, log_u = jnp.asarray(start(args.dim)), jnp.asarray(noise), jnp.asarray(log_u)
        chain(x0, noise, log_u)[0].block_until_ready()   # compile (and a first run)
        t0 = time.perf_counter()
        xs, accepted = chain(x0, noise, log_u)
        xs.block_until_ready()
        seconds = time.perf_counter() - t0
        report(f"JAX ({args.mode}, jit + lax.scan)", np.asarray(xs), int(accepted), seconds)


if __name__ == "__main__":
    main()
