# SPDX-License-Identifier: MIT
"""What the two MCMC examples share: the target, the sampler's settings, the
random numbers (drawn once with NumPy, so that the JAX and the PyTorch
chains see the same ones and agree), and the command line.

Target: the "banana" density pi(x) ∝ exp(-rosenbrock(x; a, b)), with
a = 1 and b = 5 (the x[0] marginal is N(1, 1/2) and E[x[1]] = 1.5 in two
dimensions), sampled with MALA (the Metropolis-adjusted Langevin algorithm):

    x' = x + eps * grad log pi(x) + sqrt(2 eps) * xi,     xi ~ N(0, I)

accepted with probability min(1, pi(x') q(x | x') / (pi(x) q(x' | x))),
q(y | x) = N(y; x + eps * grad log pi(x), 2 eps I).
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Sequence
from pathlib import Path

import numpy as np

A = 1.0
B = 5.0


def default_plugin() -> Path:
    build = os.environ.get("TESSERA_BUILD_DIR")
    root = Path(__file__).resolve().parents[3]
    return Path(build or root / "build") / "plugins" / "rosenbrock.so"


def arguments(description: str) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--plugin", type=Path, default=default_plugin(),
                   help="rosenbrock.so (default: $TESSERA_BUILD_DIR or build/, plugins/)")
    p.add_argument("--mode", default="inproc", choices=("inproc", "isolated", "worker"))
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--dim", type=int, default=2)
    p.add_argument("--step-size", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    return p.parse_args()


def random_numbers(seed: int, steps: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """Proposal noise (steps, dim) and log-uniforms for acceptance (steps,)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((steps, dim)), np.log(rng.uniform(size=steps))


def start(dim: int) -> np.ndarray:
    return np.zeros(dim)


def edge_costs(step_seconds: Sequence[float]) -> tuple[float, float]:
    """Median seconds per step over the first and over the last tenth of
    the run (at least one step each)."""
    n = max(1, len(step_seconds) // 10)
    return statistics.median(step_seconds[:n]), statistics.median(step_seconds[-n:])


def report(name: str, chain: np.ndarray, accepted: int, seconds: float,
           step_seconds: Sequence[float] = (), held: str = "") -> None:
    """The chain's summary; with step_seconds (one per step, or one per
    step of each segment), the cost of a step at the start and at the end
    of the run, whose ratio shows whether the trace kept so far slows
    later steps."""
    steps = len(chain)
    burn = steps // 5
    kept = chain[burn:]
    print(f"{name}: {steps} MALA steps on rosenbrock (dim {chain.shape[1]}), "
          f"one apply + one vjp of the plugin per step")
    print(f"  acceptance rate   {accepted / steps:.3f}")
    print(f"  mean after burn-in {np.array2string(kept.mean(axis=0), precision=4)}")
    print(f"  std  after burn-in {np.array2string(kept.std(axis=0), precision=4)}")
    print(f"  last state         {np.array2string(chain[-1], precision=6)}")
    print(f"  time               {seconds:.3f} s ({1e6 * seconds / steps:.1f} us per step)")
    if len(step_seconds):
        first, last = edge_costs(step_seconds)
        print(f"  per step           {1e6 * first:.1f} us over the first tenth of the run, "
              f"{1e6 * last:.1f} us over the last (ratio {last / first:.2f})")
    if held:
        print(f"  trace kept         {held}")
