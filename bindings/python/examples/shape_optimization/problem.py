# SPDX-License-Identifier: MIT
"""The study's fixed data: the grid, the cantilever's design space, the
starting bars, and the map from a signed distance field to densities.

Lengths are in element widths: the solver's grid has ny x nx unit
elements, element (i, j) centred at (j + 0.5, i + 0.5); the left edge is
clamped and a unit load pulls down at the middle of the right edge
(plugins/compliance)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Problem:
    nx: int = 60
    ny: int = 30
    volume_fraction: float = 0.35     # at most this share of the domain is material
    radius: float = 1.5               # bar half-thickness (element widths)
    eps: float = 0.5                  # sigmoid width (element widths)
    rho_floor: float = 1e-3           # density of void, so that K stays positive definite
    penal: float = 3.0                # SIMP exponent
    young_min: float = 1e-9           # the solver's own void stiffness ratio
    fd_step: float = 1e-4             # geometry's finite-difference step (element widths)
    learning_rate: float = 0.4        # Adam's first step length (element widths)

    @property
    def grid_x(self) -> np.ndarray:
        return np.arange(self.nx, dtype=np.float64) + 0.5

    @property
    def grid_y(self) -> np.ndarray:
        return np.arange(self.ny, dtype=np.float64) + 0.5

    def geometry_inputs(self, bars) -> dict:
        return {"bars": bars, "radius": np.float64(self.radius), "grid_x": self.grid_x,
                "grid_y": self.grid_y, "fd_step": self.fd_step}

    def solver_inputs(self, rho) -> dict:
        return {"rho": rho, "penal": np.float64(self.penal),
                "young_min": np.float64(self.young_min)}


FULL = Problem()
SMALL = Problem(nx=24, ny=12, radius=1.0, volume_fraction=0.5, learning_rate=0.15)


def initial_bars(p: Problem) -> np.ndarray:
    """Eight bars, end points [[x0, y0], [x1, y1]]: a truss-like guess that
    already joins the clamped edge to the load, with room to improve."""
    w, h = float(p.nx), float(p.ny)
    unit = np.array([
        [[0.00, 0.90], [1.00, 0.50]],
        [[0.00, 0.10], [1.00, 0.50]],
        [[0.00, 0.50], [0.60, 0.50]],
        [[0.25, 0.15], [0.25, 0.85]],
        [[0.50, 0.20], [0.50, 0.80]],
        [[0.75, 0.30], [0.75, 0.70]],
        [[0.10, 0.80], [0.45, 0.25]],
        [[0.45, 0.75], [0.80, 0.35]],
    ])
    return unit * np.array([w, h])


def density_from_sdf(sdf, p: Problem, xp=np):
    """Densities in [rho_floor, 1]: 1 inside the bars (sdf < 0), the floor
    far outside, a sigmoid of width eps across the boundary. xp: numpy or
    jax.numpy."""
    inside = 1.0 / (1.0 + xp.exp(sdf / p.eps))
    return p.rho_floor + (1.0 - p.rho_floor) * inside
