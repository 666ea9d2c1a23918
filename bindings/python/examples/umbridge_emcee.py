# SPDX-License-Identifier: MIT
"""Sample a Tessera component's posterior with emcee, through UM-Bridge.

The bundled banana plugin (a twisted Gaussian's log-density, sigma and beta
from its configuration) is served by `tessera serve`'s UM-Bridge routes;
umbridge's emcee adapter (`umbridge.emcee.UmbridgeLogProb`) turns the
served model into emcee's log-probability, exactly as it would a model on
a cluster behind UM-Bridge's load balancer. The same sampler is then run
by hand on the same density written in NumPy, from the same start and the
same random numbers, and the two posteriors are compared with each other
and with the exact moments:

    x0 ~ N(0, sigma^2),   x1 | x0 ~ N(-beta (x0^2 - sigma^2), 1)
    so E[x0] = 0, Var[x0] = sigma^2, E[x1] = 0, Var[x1] = 1 + 2 beta^2 sigma^4

    python bindings/python/examples/umbridge_emcee.py [--steps N] [--walkers W] [--mode worker]
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

import emcee
import numpy as np
import umbridge.emcee

import tessera

SIGMA = 1.0
BETA = 0.5


def default_plugin() -> Path:
    build = os.environ.get("TESSERA_BUILD_DIR")
    root = Path(__file__).resolve().parents[3]
    return Path(build or root / "build") / "plugins" / "banana.so"


def log_density_by_hand(x: np.ndarray) -> float:
    u = x[1] + BETA * (x[0] ** 2 - SIGMA**2)
    return -0.5 * x[0] ** 2 / SIGMA**2 - 0.5 * u**2


def run(log_prob, walkers: int, steps: int, seed: int) -> tuple[np.ndarray, float]:
    start = np.random.default_rng(seed).normal(scale=0.1, size=(walkers, 2))
    sampler = emcee.EnsembleSampler(walkers, 2, log_prob)
    sampler.random_state = np.random.RandomState(seed).get_state()
    began = time.perf_counter()
    sampler.run_mcmc(start, steps)
    seconds = time.perf_counter() - began
    return sampler.get_chain(discard=steps // 4, flat=True), seconds


def moments(chain: np.ndarray) -> list[float]:
    return [chain[:, 0].mean(), chain[:, 0].var(), chain[:, 1].mean(), chain[:, 1].var()]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plugin", type=Path, default=default_plugin())
    p.add_argument("--mode", default="inproc", choices=("inproc", "isolated", "worker"))
    p.add_argument("--steps", type=int, default=3000)
    p.add_argument("--walkers", type=int, default=16)
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args()

    banana = tessera.load(args.plugin, args.mode, config={"sigma": str(SIGMA), "beta": str(BETA)})
    with tessera.serve(banana) as server:
        through_umbridge = umbridge.emcee.UmbridgeLogProb(server.url, "banana")
        served, served_s = run(through_umbridge, args.walkers, args.steps, args.seed)
    by_hand, hand_s = run(log_density_by_hand, args.walkers, args.steps, args.seed)
    banana.close()

    exact = [0.0, SIGMA**2, 0.0, 1 + 2 * BETA**2 * SIGMA**4]
    print(f"emcee, {args.walkers} walkers x {args.steps} steps, banana sigma={SIGMA} beta={BETA}")
    print(f"  {'moment':<10} {'UM-Bridge':>10} {'by hand':>10} {'exact':>10}")
    for name, a, b, e in zip(["E[x0]", "Var[x0]", "E[x1]", "Var[x1]"], moments(served),
                             moments(by_hand), exact):
        print(f"  {name:<10} {a:>10.4f} {b:>10.4f} {e:>10.4f}")
    calls = args.walkers * args.steps
    print(f"  log-density calls {calls}: through tessera serve's UM-Bridge routes "
          f"{served_s / calls * 1e6:.0f} us each, by hand in NumPy {hand_s / calls * 1e6:.0f} us")
    # Same start, same random numbers, the same density up to rounding: the
    # chains agree closely, and both estimate the exact moments.
    for a, b, e in zip(moments(served), moments(by_hand), exact):
        assert abs(a - b) < 0.15 * max(1.0, abs(e)), (a, b)
        assert abs(a - e) < 0.3 * max(1.0, abs(e)), (a, e)
    print("  the two posteriors agree with each other and with the exact moments")


if __name__ == "__main__":
    main()
