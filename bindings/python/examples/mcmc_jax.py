# SPDX-License-Identifier: MIT
"""MALA on the Rosenbrock "banana" in JAX: the chain is a jitted
jax.lax.scan, and every step calls the rosenbrock plugin through Tessera's
XLA FFI handler (value and gradient: the plugin's apply and vjp), with no
Python per step.

The scan runs in ten segments, each continuing from the state the previous
one ended in, so that the cost of a step can be reported at the start and
at the end of the run; the full trace (every state, and the value and
gradient at every state) is kept as it grows.

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

    def step_kept(state, randoms):
        state, (x, accept) = step(state, randoms)
        return state, (x, state[1], state[2], accept)

    @jax.jit
    def begin(x0):
        logp, grad = value_and_grad(x0)
        return x0, logp, grad

    @jax.jit
    def segment(state, noise, log_u):
        """Steps from state; the trace of (x, log density, gradient, accepted)."""
        return jax.lax.scan(step_kept, state, (noise, log_u))

    return begin, segment


SEGMENTS = 10


def run_chain(begin, segment, x0, noise, log_u):
    """The chain in SEGMENTS pieces (compiled before the clock starts): the
    trace, the seconds per step of each piece, and the total seconds."""
    bounds = np.linspace(0, len(noise), SEGMENTS + 1).astype(int)
    pieces = [(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
    for n in {hi - lo for lo, hi in pieces}:   # compile every length used
        jax.block_until_ready(segment(begin(x0), noise[:n], log_u[:n]))
    trace = []
    per_step = []
    t0 = time.perf_counter()
    state = begin(x0)
    for lo, hi in pieces:
        t = time.perf_counter()
        state, kept = segment(state, noise[lo:hi], log_u[lo:hi])
        jax.block_until_ready(kept)
        per_step += [(time.perf_counter() - t) / (hi - lo)] * (hi - lo)
        trace.append(kept)
    seconds = time.perf_counter() - t0
    return trace, per_step, seconds


def main() -> None:
    args = arguments(__doc__.splitlines()[0])
    noise, log_u = random_numbers(args.seed, args.steps, args.dim)
    with tessera.load(args.plugin, args.mode) as rosen:
        begin, segment = make_chain(rosen, args.step_size)
        x0, noise, log_u = jnp.asarray(start(args.dim)), jnp.asarray(noise), jnp.asarray(log_u)
        trace, per_step, seconds = run_chain(begin, segment, x0, noise, log_u)
        xs = np.concatenate([np.asarray(t[0]) for t in trace])
        accepted = sum(int(t[3].sum()) for t in trace)
        held = (f"{len(xs)} states, with the log density and gradient at each, "
                f"in {len(trace)} segments")
        report(f"JAX ({args.mode}, jit + lax.scan)", xs, accepted, seconds, per_step, held)


if __name__ == "__main__":
    main()
