# SPDX-License-Identifier: MIT
"""Parallel MALA chains on a Dask cluster, with a convergence summary.

Target: pi(x) ∝ exp(-rosenbrock(x; a=1, b=5)) in two dimensions (the
"banana" of mcmc_jax.py). Each chain is one Dask task: it asks its worker
for the component (tessera.dask.worker_component: opened once per worker
process, shared by every chain the worker runs) and takes its steps there,
one apply and one vjp per step, each an in-process call. Chains start from
scattered points with their own seeds; at the end the split R-hat of each
coordinate says whether they agree. The same chains run serially in this
process must give the same states, to the bit.

    python bindings/python/examples/dask_mala_chains.py [--chains 8] [--steps 50000] [--workers N]
"""

from __future__ import annotations

import time

import numpy as np
from distributed import Client

import tessera.dask
from dask_common import arguments, make_cluster, plugin

A, B, EPS = 1.0, 5.0, 0.05


def run_chain(spec: tessera.dask.ComponentSpec, seed: int, steps: int) -> tuple[np.ndarray, int]:
    """One MALA chain: x' = x + eps grad log pi(x) + sqrt(2 eps) xi, accepted
    with the Metropolis-Hastings ratio. Returns the states and the number
    of accepted proposals."""
    rosen = tessera.dask.worker_component(spec)
    rng = np.random.default_rng(seed)

    def logp_grad(x):
        inputs = {"x": x, "a": A, "b": B}
        value = float(rosen.apply(inputs)["value"])
        grad = rosen.vjp(inputs, ["x"], ["value"], {"value": 1.0})["x"]
        return -value, -grad

    def log_q(to, frm, grad_frm):
        return -np.sum((to - frm - EPS * grad_frm) ** 2) / (4 * EPS)

    # Scattered over the banana, not in its far tails, where the gradient
    # is so steep that every proposal overshoots and the chain never moves.
    x0 = rng.uniform(-1.0, 2.5)
    x = np.array([x0, x0 ** 2 + rng.uniform(-1.0, 1.0)])
    logp, grad = logp_grad(x)
    chain, accepted = np.empty((steps, 2)), 0
    for i in range(steps):
        proposal = x + EPS * grad + np.sqrt(2 * EPS) * rng.standard_normal(2)
        logp_new, grad_new = logp_grad(proposal)
        log_alpha = logp_new - logp + log_q(x, proposal, grad_new) - log_q(proposal, x, grad)
        if np.log(rng.uniform()) < log_alpha:
            x, logp, grad = proposal, logp_new, grad_new
            accepted += 1
        chain[i] = x
    return chain, accepted


def split_rhat(chains: np.ndarray) -> np.ndarray:
    """Split R-hat per coordinate of chains shaped (chains, draws, dim):
    each chain cut in halves, the between-halves variance against the
    within, near 1 when the chains have mixed."""
    half = chains.shape[1] // 2
    parts = np.concatenate([chains[:, :half], chains[:, half:2 * half]])
    n = parts.shape[1]
    within = parts.var(axis=1, ddof=1).mean(axis=0)
    between = n * parts.mean(axis=1).var(axis=0, ddof=1)
    return np.sqrt(((n - 1) / n * within + between / n) / within)


def main() -> None:
    args = arguments(__doc__.split("\n\n")[0], chains=8, steps=50000)
    seeds = list(range(args.chains))
    with make_cluster(args.workers) as cluster, Client(cluster) as client:
        rosen = tessera.dask.load(client, plugin("rosenbrock"), args.mode)
        t0 = time.perf_counter()
        futures = client.map(run_chain, [rosen.spec] * len(seeds), seeds,
                             [args.steps] * len(seeds), pure=False)
        results = client.gather(futures)
        cluster_s = time.perf_counter() - t0
        opens = rosen.opens()
        rosen.close()

    t0 = time.perf_counter()
    serial = [run_chain(rosen.spec, seed, args.steps) for seed in seeds]
    serial_s = time.perf_counter() - t0
    same = all(np.array_equal(c, s) for (c, _), (s, _) in zip(results, serial))

    chains = np.stack([c for c, _ in results])
    kept = chains[:, args.steps // 2:]          # the first half is burn-in
    rhat = split_rhat(kept)
    rate = sum(a for _, a in results) / (args.chains * args.steps)
    print(f"MALA on rosenbrock (a={A}, b={B}, dim 2): {args.chains} chains of {args.steps} "
          f"steps, one apply + one vjp per step, mode {args.mode}")
    print(f"  on the cluster   {cluster_s:.2f} s, {len(opens)} workers "
          f"(component opens per worker: {sorted(set(opens.values()))})")
    print(f"  serially here    {serial_s:.2f} s; same states: {'yes' if same else 'NO'}")
    print(f"  acceptance rate  {rate:.3f}")
    print(f"  mean             {np.array2string(kept.mean(axis=(0, 1)), precision=3)} "
          f"(exact: [1.0, 1.5])")
    print(f"  split R-hat      {np.array2string(rhat, precision=3)} "
          f"({'converged' if np.all(rhat < 1.05) else 'not yet: run longer chains'}, < 1.05)")
    if not same:
        raise SystemExit("the chains on the cluster differ from the serial ones")


if __name__ == "__main__":
    main()
