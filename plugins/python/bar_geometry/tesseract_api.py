# SPDX-License-Identifier: MIT
"""Signed distance field of a 2-D structure of straight bars, sampled on a grid.

Geometry (shapely 2.x, i.e. GEOS): bar k is the segment from
``bars[k, 0] = (x0, y0)`` to ``bars[k, 1] = (x1, y1)`` buffered by ``radius``
with round caps, so a bar is a capsule of half thickness ``radius`` and a
bar of length 0 is a disc. GEOS draws each half-circle of a cap as a polygon
of ``2 * QUAD_SEGS`` edges whose vertices lie on the circle: near a cap the
field is that of the polygon, up to ``radius * (1 - cos(pi / (4 * QUAD_SEGS)))``
(0.5 % of ``radius``) larger than a true circle's; along a bar's straight
sides it is exact. The structure is the union of the bars
(``shapely.union_all``).

Output: ``sdf[i, j]`` at the point ``(grid_x[j], grid_y[i])`` is the distance
from that point to the boundary of the structure, negative inside and
positive outside (0 on the boundary), so a density is e.g.
``sigmoid(-sdf / eps)``.

Derivatives: the geometry library is not differentiable, so ``jacobian``,
``jacobian_vector_product`` and ``vector_jacobian_product`` with respect to
``bars`` and ``radius`` use central differences of the field,
``(sdf(p + h e) - sdf(p - h e)) / (2 h)`` with ``h = fd_step``, one column per
parameter (4 per bar, plus one for ``radius``), each perturbed field computed
exactly as ``apply`` computes it. jvp and vjp contract the same columns, so
``<v, J t> == <J^T v, t>`` up to rounding. Differentiating with respect to
``radius`` needs ``radius > fd_step``.

Cost: a field is a union of the bars, a point-in-polygon test per grid
point and a point-to-boundary distance per grid point, measured by GEOS
against only the boundary edges that can be nearest to the point's tile of
grid points (``_distance_to_boundary``); the points of the last grid are
kept for the next call. A derivative costs two fields per parameter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import shapely
from pydantic import BaseModel, Field, model_validator

from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType

# Edges per quarter circle of a round cap (GEOS's default).
QUAD_SEGS = 8

# Grid points per side of a tile of the distance search.
TILE = 6


class InputSchema(BaseModel):
    bars: Differentiable[Array[(None, 2, 2), Float64]] = Field(
        description="bars[k] = [[x0, y0], [x1, y1]]: the end points of bar k (at least one bar).")
    radius: Differentiable[Float64] = Field(
        description="Half thickness of every bar (> 0).")
    grid_x: Array[(None,), Float64] = Field(
        description="x coordinates of the sample points (nx >= 1).")
    grid_y: Array[(None,), Float64] = Field(
        description="y coordinates of the sample points (ny >= 1).")
    fd_step: float = Field(
        default=1e-3,
        description="Step of the central differences in the derivative endpoints (> 0).")

    @model_validator(mode="after")
    def _check(self) -> InputSchema:
        # Also run by abstract_eval, where arrays are ShapeDType (shape only).
        if self.bars.shape[0] == 0:
            raise ValueError("bars: at least one bar is needed, got shape "
                             f"{tuple(self.bars.shape)}")
        for name in ("grid_x", "grid_y"):
            if getattr(self, name).shape[0] == 0:
                raise ValueError(f"{name}: the grid is empty (length 0)")
        for name in ("bars", "grid_x", "grid_y"):
            _check_finite(name, getattr(self, name))
        if not isinstance(self.radius, ShapeDType):
            r = float(self.radius)
            if not (np.isfinite(r) and r > 0):
                raise ValueError(f"radius: must be finite and > 0, got {r!r}")
        h = self.fd_step
        if not (np.isfinite(h) and h > 0):
            raise ValueError(f"fd_step: must be finite and > 0, got {h!r}")
        return self


class OutputSchema(BaseModel):
    sdf: Differentiable[Array[(None, None), Float64]] = Field(
        description="Signed distance (ny, nx) at (grid_x[j], grid_y[i]): < 0 inside the bars.")


def _check_finite(name: str, value: Any) -> None:
    if isinstance(value, ShapeDType):
        return
    a = np.asarray(value)
    bad = ~np.isfinite(a)
    if bad.any():
        where = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{name}: non-finite value {float(a[where])} at index {list(where)}")


# --------------------------------------------------------------------------
# Fields


class _Grid:
    """The sample points (row i at grid_y[i]), flat, and their tiles: blocks
    of TILE x TILE points, each with the centre and the half diagonal of its
    bounding box, for the distance search."""

    def __init__(self, grid_x: np.ndarray, grid_y: np.ndarray) -> None:
        nx, ny = len(grid_x), len(grid_y)
        self.shape = (ny, nx)
        self.x = np.broadcast_to(grid_x[None, :], (ny, nx)).ravel()
        self.y = np.broadcast_to(grid_y[:, None], (ny, nx)).ravel()
        self.points = shapely.points(self.x, self.y)
        cols, rows = np.arange(0, nx, TILE), np.arange(0, ny, TILE)
        x_lo, x_hi = np.minimum.reduceat(grid_x, cols), np.maximum.reduceat(grid_x, cols)
        y_lo, y_hi = np.minimum.reduceat(grid_y, rows), np.maximum.reduceat(grid_y, rows)
        tiles = (len(rows), len(cols))
        self.cx = np.broadcast_to(((x_lo + x_hi) / 2)[None, :], tiles).ravel()
        self.cy = np.broadcast_to(((y_lo + y_hi) / 2)[:, None], tiles).ravel()
        self.centres = shapely.points(self.cx, self.cy)
        self.half_diagonal = np.hypot(((x_hi - x_lo) / 2)[None, :],
                                      ((y_hi - y_lo) / 2)[:, None]).ravel()
        self.tile = ((np.arange(ny) // TILE)[:, None] * len(cols)
                     + (np.arange(nx) // TILE)[None, :]).ravel()


def _distance_to_boundary(shape: shapely.Geometry, grid: _Grid) -> np.ndarray:
    """GEOS's distance from every grid point to the boundary of shape, each
    point measured against only the boundary edges near its tile.

    For a point p of a tile of centre c and half diagonal e, the boundary is
    at most D = dist(c) + e from p, so p's nearest boundary point lies
    within dist(c) + 2 e of c: the edges whose boxes meet that square are
    enough. They are passed as runs of consecutive edges (LineStrings), so
    every distance is the same minimum over the same edges that GEOS takes
    over the whole boundary."""
    boundary = shapely.boundary(shape)
    rings = shapely.get_rings(shapely.get_parts(shape))     # of every polygon of it
    xy, ring = shapely.get_coordinates(rings, return_index=True)
    first = np.flatnonzero(ring[1:] == ring[:-1])        # edge k: xy[first[k]] -> xy[first[k] + 1]
    edges = shapely.linestrings(np.stack([xy[first], xy[first + 1]], axis=1))
    reach = shapely.distance(grid.centres, boundary) + 2 * grid.half_diagonal
    reach += 1e-9 * (1 + reach)                          # rounding of the distances above
    tile, edge = shapely.STRtree(edges).query(
        shapely.box(grid.cx - reach, grid.cy - reach, grid.cx + reach, grid.cy + reach))
    order = np.lexsort((edge, tile))
    tile, start = tile[order], first[edge[order]]
    # Runs: consecutive edges of one ring near one tile.
    new = np.ones(len(start), dtype=bool)
    new[1:] = (tile[1:] != tile[:-1]) | (start[1:] != start[:-1] + 1)
    heads = np.flatnonzero(new)
    n_coords = np.diff(np.append(heads, len(start))) + 1
    offset = np.cumsum(n_coords) - n_coords
    coords = xy[np.repeat(start[heads] - offset, n_coords) + np.arange(n_coords.sum())]
    runs = shapely.linestrings(coords, indices=np.repeat(np.arange(len(heads)), n_coords))
    near = np.full(len(grid.cx), boundary, dtype=object)   # a tile without runs: all of it
    shapely.multilinestrings(runs, indices=tile[heads], out=near)
    return shapely.distance(grid.points, near[grid.tile])


def _field(bars: np.ndarray, radius: float, grid: _Grid) -> np.ndarray:
    """Signed distance (ny, nx) of the union of the bars, negative inside."""
    caps = shapely.buffer(shapely.linestrings(bars), radius, quad_segs=QUAD_SEGS)
    shape = shapely.union_all(caps)
    dist = _distance_to_boundary(shape, grid)
    inside = shapely.contains_xy(shape, grid.x, grid.y)
    return np.where(inside, -dist, dist).reshape(grid.shape)


# The last grid's coordinates and its _Grid: a loop over designs samples
# one grid, whose points then are made once.
_last_grid: tuple[bytes, bytes, _Grid] | None = None


def _grid(grid_x: np.ndarray, grid_y: np.ndarray) -> _Grid:
    global _last_grid
    kx, ky = grid_x.tobytes(), grid_y.tobytes()
    last = _last_grid
    if last is None or last[0] != kx or last[1] != ky:
        last = _last_grid = (kx, ky, _Grid(grid_x.copy(), grid_y.copy()))
    return last[2]


def _arrays(inputs: InputSchema) -> tuple[np.ndarray, float, _Grid]:
    return (np.asarray(inputs.bars, dtype=np.float64), float(inputs.radius),
            _grid(np.asarray(inputs.grid_x, dtype=np.float64),
                  np.asarray(inputs.grid_y, dtype=np.float64)))


def apply(inputs: InputSchema) -> OutputSchema:
    bars, radius, grid = _arrays(inputs)
    return OutputSchema(sdf=_field(bars, radius, grid))


# --------------------------------------------------------------------------
# Derivatives by central differences


def _columns(inputs: InputSchema, wrt: set[str]):
    """Yield (name, flat index, column): column (ny, nx) is d sdf / d p for
    the element of input `name` ("bars", or "radius" with index 0), by
    central differences of the field."""
    bars, radius, grid = _arrays(inputs)
    h = float(inputs.fd_step)
    if "radius" in wrt and not radius > h:
        raise ValueError(f"radius: must exceed fd_step ({h!r}) to differentiate with "
                         f"respect to radius, got {radius!r}")
    if "bars" in wrt:
        flat = bars.ravel()
        for k in range(flat.size):
            plus, minus = flat.copy(), flat.copy()
            plus[k] += h
            minus[k] -= h
            yield "bars", k, (_field(plus.reshape(bars.shape), radius, grid)
                              - _field(minus.reshape(bars.shape), radius, grid)) / (2 * h)
    if "radius" in wrt:
        yield "radius", 0, (_field(bars, radius + h, grid)
                            - _field(bars, radius - h, grid)) / (2 * h)


def _known(names, what: str) -> set[str]:
    names = set(names)
    unknown = names - {"bars", "radius"}
    if unknown:
        raise ValueError(f"{what}: {sorted(unknown)} not differentiable "
                         "(the differentiable inputs are bars and radius)")
    return names


def jacobian(inputs: InputSchema, jac_inputs: set[str], jac_outputs: set[str]):
    wrt = _known(jac_inputs, "jac_inputs")
    ny, nx = len(inputs.grid_y), len(inputs.grid_x)
    shapes = {"bars": np.shape(inputs.bars), "radius": ()}
    jac = {name: np.empty((ny, nx, int(np.prod(shapes[name], dtype=np.int64))))
           for name in wrt}
    for name, k, column in _columns(inputs, wrt):
        jac[name][:, :, k] = column
    return {"sdf": {name: j.reshape(ny, nx, *shapes[name]) for name, j in jac.items()}}


def jacobian_vector_product(inputs: InputSchema, jvp_inputs: set[str], jvp_outputs: set[str],
                            tangent_vector: dict[str, Any]):
    wrt = _known(jvp_inputs, "jvp_inputs")
    ny, nx = len(inputs.grid_y), len(inputs.grid_x)
    out = np.zeros((ny, nx))
    tangents = {name: np.asarray(tangent_vector[name], dtype=np.float64).ravel()
                for name in wrt}
    for name, k, column in _columns(inputs, wrt):
        out += tangents[name][k] * column
    return {"sdf": out}


def vector_jacobian_product(inputs: InputSchema, vjp_inputs: set[str], vjp_outputs: set[str],
                            cotangent_vector: dict[str, Any]):
    wrt = _known(vjp_inputs, "vjp_inputs")
    v = np.asarray(cotangent_vector["sdf"], dtype=np.float64)
    grads = {"bars": np.zeros(np.shape(inputs.bars)), "radius": np.zeros(())}
    for name, k, column in _columns(inputs, wrt):
        grads[name].reshape(-1)[k] = np.vdot(column, v)
    return {name: grads[name] for name in wrt}


def abstract_eval(abstract_inputs):
    """sdf is (len(grid_y), len(grid_x)) float64."""
    ny, nx = abstract_inputs.grid_y.shape[0], abstract_inputs.grid_x.shape[0]
    return {"sdf": ShapeDType(shape=(ny, nx), dtype="float64")}
