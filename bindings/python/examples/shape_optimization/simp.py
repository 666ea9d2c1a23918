# SPDX-License-Identifier: MIT
"""The free-form baseline: SIMP topology optimisation with the
optimality-criteria update, on the same grid, load case and solver
component as the parametric study, every element's density a design
variable.

Sensitivities come from the solver's adjoint vjp and are smoothed by a
density filter of radius ``filter_radius`` (element widths), which keeps
the design free of checkerboards and mesh-dependent detail."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np
from scipy import ndimage

from problem import Problem


class DensityFilter:
    """Weighted mean over each element's neighbourhood within `radius`
    (weights max(0, radius - distance), zero padding, renormalised at the
    edges), and its transpose for the sensitivities."""

    def __init__(self, radius: float, shape: tuple[int, int]) -> None:
        r = int(np.ceil(radius)) - 1
        dy, dx = np.mgrid[-r:r + 1, -r:r + 1]
        self.kernel = np.maximum(0.0, radius - np.hypot(dx, dy))
        self.weight = ndimage.correlate(np.ones(shape), self.kernel, mode="constant", cval=0.0)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        return ndimage.correlate(x, self.kernel, mode="constant", cval=0.0) / self.weight

    def transpose(self, g: np.ndarray) -> np.ndarray:
        return ndimage.correlate(g / self.weight, self.kernel[::-1, ::-1], mode="constant",
                                 cval=0.0)


@dataclass
class SimpHistory:
    compliance: list[float] = field(default_factory=list)
    volume: list[float] = field(default_factory=list)
    step_seconds: list[float] = field(default_factory=list)
    rho: np.ndarray | None = None


def optimality_criteria(x: np.ndarray, dc: np.ndarray, volume_fraction: float,
                        move: float = 0.2) -> np.ndarray:
    """The OC update: bisection on the volume multiplier, each density
    scaled by sqrt(-dc/lambda) within the move limit and [0, 1]."""
    lo, hi = 1e-9, 1e9
    dc = np.minimum(dc, -1e-30)
    while (hi - lo) / (hi + lo) > 1e-6:
        mid = 0.5 * (lo + hi)
        new = np.clip(x * np.sqrt(-dc / mid), np.maximum(0.0, x - move), np.minimum(1.0, x + move))
        if new.mean() > volume_fraction:
            lo = mid
        else:
            hi = mid
    return new


def run(solver, p: Problem, steps: int = 80, filter_radius: float = 2.0,
        log=None) -> SimpHistory:
    """SIMP with OC from a uniform start at the volume fraction."""
    smooth = DensityFilter(filter_radius, (p.ny, p.nx))
    x = np.full((p.ny, p.nx), p.volume_fraction)
    h = SimpHistory()
    for k in range(1, steps + 1):
        t0 = time.perf_counter()
        rho = smooth(x)
        inputs = p.solver_inputs(rho)
        c = float(solver.apply(inputs)["compliance"])
        drho = solver.vjp(inputs, ["rho"], ["compliance"], {"compliance": np.float64(1.0)})["rho"]
        dx = smooth.transpose(drho)
        x = optimality_criteria(x, dx, p.volume_fraction)
        h.step_seconds.append(time.perf_counter() - t0)
        h.compliance.append(c)
        h.volume.append(float(rho.mean()))
        if log and (k == 1 or k % 20 == 0 or k == steps):
            log(f"  SIMP step {k:4d}  compliance {c:10.4f}  volume {rho.mean():.4f}")
    h.rho = smooth(x)
    return h
