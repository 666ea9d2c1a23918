# SPDX-License-Identifier: MIT
"""plugins/python/bar_geometry: the signed distance field of a structure of
bars (shapely, in its own environment) as a Tessera component.

The field against closed forms (a capsule's distance), signs of crossing
bars, the derivative endpoints against central differences of apply
computed here, tessera in this Python and in workers against tesseract-core's
Tesseract.from_tesseract_api, JAX through abstract_eval, and bad inputs.
Workers run in this Python (python_env="none") except in one test, which
builds (once, then reuses) the component's environment from its
tesseract_requirements.txt. Everything but that test needs shapely here
(scripts/setup.sh installs it)."""

from __future__ import annotations

import importlib.util

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from conftest import ROOT, paths_kept

BAR_GEOMETRY = ROOT / "plugins" / "python" / "bar_geometry"


# The component draws a quarter circle of a cap with 8 edges (QUAD_SEGS):
# the polygon lies inside the true capsule, at most this far (per unit radius).
SAGITTA = 1 - np.cos(np.pi / 32)
H = 1e-3


def inputs(bars, radius, nx, ny, fd_step=H):
    """Inputs on the grid of ny x nx unit elements (centres at j + 0.5, i + 0.5)."""
    return {"bars": np.asarray(bars, dtype=np.float64), "radius": np.float64(radius),
            "grid_x": np.arange(nx) + 0.5, "grid_y": np.arange(ny) + 0.5,
            "fd_step": np.float64(fd_step)}


def capsule(bar, radius, x, y):
    """Signed distance to a true capsule, and the point's parameter along the bar."""
    (x0, y0), (x1, y1) = bar
    ex, ey = x1 - x0, y1 - y0
    t = ((x - x0) * ex + (y - y0) * ey) / (ex * ex + ey * ey)
    tc = np.clip(t, 0.0, 1.0)
    return np.hypot(x - (x0 + tc * ex), y - (y0 + tc * ey)) - radius, t


def grid(inp):
    return np.meshgrid(inp["grid_x"], inp["grid_y"])


TRUSS = np.array([[[5.2, 5.1], [30.3, 4.9]], [[30.3, 4.9], [54.8, 5.2]],
                  [[5.2, 24.8], [30.1, 25.1]], [[30.1, 25.1], [54.8, 24.9]],
                  [[5.2, 5.1], [30.1, 25.1]], [[30.3, 4.9], [30.1, 25.1]],
                  [[30.3, 4.9], [54.8, 24.9]], [[54.8, 5.2], [54.8, 24.9]]])


@pytest.fixture(autouse=True)
def _restore_sys_path():
    with paths_kept():
        yield


@pytest.fixture(scope="module", params=["inproc", "worker"])
def comp(request):
    if importlib.util.find_spec("shapely") is None:
        pytest.skip("shapely is not installed in this Python (scripts/setup.sh installs it)")
    kwargs = {"python_env": "none"} if request.param == "worker" else {}
    c = tessera.load(BAR_GEOMETRY, request.param, **kwargs)
    yield c
    c.close()


@pytest.fixture(scope="module")
def reference():
    if importlib.util.find_spec("shapely") is None:
        pytest.skip("shapely is not installed in this Python (scripts/setup.sh installs it)")
    from tesseract_core import Tesseract
    with paths_kept():
        return Tesseract.from_tesseract_api(str(BAR_GEOMETRY / "tesseract_api.py"))


def test_schema_and_endpoints(comp):
    s = comp.schema
    assert s.name == "bar_geometry"
    assert s.input_names == ("bars", "radius", "grid_x", "grid_y", "fd_step")
    assert s.output_names == ("sdf",)
    diff = {f.name: (f.dims, f.differentiable) for f in s.inputs}
    assert diff == {"bars": ((None, 2, 2), True), "radius": ((), True),
                    "grid_x": ((None,), False), "grid_y": ((None,), False),
                    "fd_step": (None, False)}
    # A plain float option is a JSON field holding a Python number.
    assert s.input("fd_step").kind == "json"
    assert [(f.dims, f.differentiable) for f in s.outputs] == [((None, None), True)]
    # hvp: the library's central differences of its vjp
    assert set(comp.endpoints) == {"apply", "jvp", "vjp", "jacobian", "hvp", "abstract_eval"}


# ---- one bar against the closed form ---------------------------------

@pytest.mark.parametrize("bar, radius", [
    ([[10.2, 8.1], [39.7, 8.1]], 2.3),      # horizontal
    ([[6.3, 3.2], [41.8, 12.9]], 1.7),      # slanted
], ids=["horizontal", "slanted"])
def test_one_bar_is_a_capsule(comp, bar, radius):
    inp = inputs([bar], radius, nx=50, ny=16)
    sdf = comp.apply(inp)["sdf"]
    assert sdf.shape == (16, 50) and sdf.dtype == np.float64
    x, y = grid(inp)
    exact, t = capsule(np.array(bar), radius, x, y)
    # Beside the straight sides the polygon is the capsule: exact.
    side = (t > 0.02) & (t < 0.98)
    assert side.sum() > 300
    np.testing.assert_allclose(sdf[side], exact[side], rtol=0, atol=1e-9)
    if bar[0][1] == bar[1][1]:
        np.testing.assert_allclose(sdf[side], np.abs(y - bar[0][1])[side] - radius,
                                   rtol=0, atol=1e-9)
    # Near the caps the polygon is inside the circle, by at most its sagitta.
    err = sdf - exact
    assert err.min() > -1e-12 and err.max() <= radius * SAGITTA + 1e-12
    assert np.all((sdf < 0) == (exact < 0))


# ---- crossing bars: the sign -------------------------------------------

def test_crossing_bars_inside_and_outside(comp):
    bars = [[[4.1, 3.7], [36.9, 21.3]], [[4.1, 21.3], [36.9, 3.7]]]   # crossing at (20.5, 12.5)
    radius = 1.9
    inp = inputs(bars, radius, nx=40, ny=24)
    sdf = comp.apply(inp)["sdf"]
    x, y = grid(inp)
    d = np.minimum(capsule(np.array(bars[0]), radius, x, y)[0],
                   capsule(np.array(bars[1]), radius, x, y)[0])
    clear = np.abs(d) > radius * SAGITTA + 1e-9   # not on the boundary
    assert (d[clear] < 0).sum() > 50 and (d[clear] > 0).sum() > 300
    np.testing.assert_array_equal(sdf[clear] < 0, d[clear] < 0)
    # Outside a union, the distance is the nearest bar's.
    out = d > 0
    assert np.all(sdf[out] - d[out] > -1e-12)
    assert np.all(sdf[out] - d[out] <= radius * SAGITTA + 1e-12)
    # Where the bars cross, the boundary is farther than radius.
    i, j = 12, 20
    assert x[i, j] == 20.5 and y[i, j] == 12.5
    assert sdf[i, j] < -radius


@pytest.mark.parametrize("nx, ny", [(1, 1), (1, 9), (23, 1), (41, 37)])
def test_the_distance_search_is_geos_distance_to_the_whole_boundary(comp, nx, ny):
    """Each point is measured against the boundary edges near its tile only:
    the same numbers as GEOS's distance to the whole boundary, here on an
    unsorted, uneven grid reaching far outside the bars."""
    import shapely
    rng = np.random.default_rng(nx * 100 + ny)
    bars = rng.uniform(0, 30, size=(7, 2, 2))
    bars[3, 1] = bars[3, 0]                                # a bar of length 0: a disc
    inp = {"bars": bars, "radius": np.float64(1.3), "fd_step": np.float64(H),
           "grid_x": rng.uniform(-20, 50, nx), "grid_y": rng.uniform(-20, 50, ny)}
    sdf = comp.apply(inp)["sdf"]
    shape = shapely.union_all(shapely.buffer(shapely.linestrings(bars), 1.3, quad_segs=8))
    x, y = grid(inp)
    dist = shapely.distance(shapely.points(x.ravel(), y.ravel()), shapely.boundary(shape))
    inside = shapely.contains_xy(shape, x.ravel(), y.ravel())
    np.testing.assert_array_equal(sdf.ravel(), np.where(inside, -dist, dist))


# ---- derivatives against central differences of apply -----------------

def dense_jacobian(comp, inp, h=H):
    """d sdf / d (bars, radius) by central differences of apply, column by column."""
    cols = []
    flat = inp["bars"].ravel()
    for k in range(flat.size):
        f = []
        for sign in (1, -1):
            b = flat.copy()
            b[k] += sign * h
            f.append(comp.apply({**inp, "bars": b.reshape(inp["bars"].shape)})["sdf"])
        cols.append((f[0] - f[1]) / (2 * h))
    f = [comp.apply({**inp, "radius": np.float64(inp["radius"] + s * h)})["sdf"] for s in (1, -1)]
    jb = np.stack(cols, axis=-1).reshape(*f[0].shape, *inp["bars"].shape)
    return jb, (f[0] - f[1]) / (2 * h)


def test_derivatives_are_central_differences_of_apply(comp):
    bars = TRUSS[[0, 4, 5]]
    inp = inputs(bars, 1.6, nx=36, ny=28)
    jb, jr = dense_jacobian(comp, inp)
    rng = np.random.default_rng(7)
    v = rng.normal(size=jr.shape)
    tb, tr = rng.normal(size=bars.shape), np.float64(rng.normal())

    g = comp.vjp(inp, ["bars", "radius"], ["sdf"], {"sdf": v})
    np.testing.assert_allclose(g["bars"], np.tensordot(v, jb, axes=2), rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(g["radius"], np.sum(v * jr), rtol=1e-12, atol=1e-9)
    only = comp.vjp(inp, ["bars"], ["sdf"], {"sdf": v})
    np.testing.assert_array_equal(only["bars"], g["bars"])

    t = comp.jvp(inp, ["bars", "radius"], ["sdf"], {"bars": tb, "radius": tr})["sdf"]
    np.testing.assert_allclose(t, np.tensordot(jb, tb, axes=3) + jr * tr, rtol=1e-12, atol=1e-9)
    lhs = np.sum(v * t)
    rhs = np.sum(g["bars"] * tb) + g["radius"] * tr
    assert abs(lhs - rhs) <= 1e-12 * (abs(lhs) + np.sum(np.abs(v)))

    j = comp.jacobian(inp, ["bars", "radius"], ["sdf"])["sdf"]
    np.testing.assert_allclose(j["bars"], jb, rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(j["radius"], jr, rtol=1e-12, atol=1e-9)


def test_derivatives_beside_a_straight_side(comp):
    """sdf = |y - y_bar(x)| - r beside a horizontal bar: d/dr = -1, and
    moving an end point up moves the side by its weight along the bar."""
    (x0, y0), (x1, _) = bar = [[10.2, 8.1], [39.7, 8.1]]
    inp = inputs([bar], 2.3, nx=50, ny=16)
    j = comp.jacobian(inp, ["bars", "radius"], ["sdf"])["sdf"]
    x, y = grid(inp)
    t = (x - x0) / (x1 - x0)
    side = (t > 0.05) & (t < 0.95) & (np.abs(np.abs(y - y0) - 2.3) > 0.1)
    np.testing.assert_allclose(j["radius"][side], -1.0, atol=1e-6)
    s = np.sign(y - y0)
    np.testing.assert_allclose(j["bars"][:, :, 0, 0, 1][side], (-s * (1 - t))[side], atol=1e-6)
    np.testing.assert_allclose(j["bars"][:, :, 0, 1, 1][side], (-s * t)[side], atol=1e-6)
    np.testing.assert_allclose(j["bars"][:, :, 0, 0, 0][side], 0.0, atol=1e-6)


def test_abstract_eval_and_jax_grad(comp):
    inp = inputs(TRUSS, 1.5, nx=60, ny=30)
    # Arrays by shape and dtype; fd_step, a JSON field, by its value.
    shapes = comp.abstract_eval({k: tessera.ShapeDtype(np.shape(v), np.float64)
                                 if comp.schema.input(k).is_array else v
                                 for k, v in inp.items()})
    assert shapes["sdf"].shape == (30, 60) and shapes["sdf"].dtype == np.float64

    def loss(bars, radius):
        sdf = tessera.jax.apply(comp, {**inp, "bars": bars, "radius": radius})["sdf"]
        return jnp.sum(jax.nn.sigmoid(-sdf / 0.5))

    gb, gr = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.asarray(TRUSS), jnp.float64(1.5))
    sdf = comp.apply(inp)["sdf"]
    s = 1 / (1 + np.exp(sdf / 0.5))
    v = -s * (1 - s) / 0.5
    want = comp.vjp(inp, ["bars", "radius"], ["sdf"], {"sdf": v})
    np.testing.assert_allclose(gb, want["bars"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(gr, want["radius"], rtol=1e-12, atol=1e-12)


# ---- tessera against tesseract-core ------------------------------------

def test_same_results_as_tesseract_core(comp, reference):
    inp = inputs(TRUSS, 1.5, nx=60, ny=30)
    sdf = comp.apply(inp)["sdf"]
    np.testing.assert_array_equal(sdf, reference.apply(inp)["sdf"])
    v = np.random.default_rng(3).normal(size=sdf.shape)
    g = comp.vjp(inp, ["bars", "radius"], ["sdf"], {"sdf": v})
    ref = reference.vector_jacobian_product(inp, vjp_inputs=["bars", "radius"],
                                            vjp_outputs=["sdf"], cotangent_vector={"sdf": v})
    np.testing.assert_array_equal(g["bars"], ref["bars"])
    np.testing.assert_array_equal(g["radius"], ref["radius"])
    t = {"bars": np.random.default_rng(4).normal(size=TRUSS.shape), "radius": np.float64(0.3)}
    np.testing.assert_array_equal(
        comp.jvp(inp, ["bars", "radius"], ["sdf"], t)["sdf"],
        reference.jacobian_vector_product(inp, jvp_inputs=["bars", "radius"],
                                          jvp_outputs=["sdf"], tangent_vector=t)["sdf"])
    abstract = reference.abstract_eval({k: {"shape": np.shape(v), "dtype": "float64"}
                                        for k, v in inp.items() if k != "fd_step"})
    assert tuple(abstract["sdf"]["shape"]) == (30, 60)


def test_in_its_own_environment():
    """python_env=auto: a worker in an environment built by uv from the
    component's tesseract_requirements.txt (shapely pinned there), giving
    what the closed form gives; no shapely needed in this Python."""
    c = tessera.load(BAR_GEOMETRY, "worker")
    try:
        bar = [[10.2, 8.1], [39.7, 8.1]]
        inp = inputs([bar], 2.3, nx=50, ny=16)
        sdf = c.apply(inp)["sdf"]
        x, y = grid(inp)
        exact, t = capsule(np.array(bar), 2.3, x, y)
        side = (t > 0.02) & (t < 0.98)
        np.testing.assert_allclose(sdf[side], exact[side], rtol=0, atol=1e-9)
        g = c.vjp(inp, ["radius"], ["sdf"], {"sdf": np.ones_like(sdf)})["radius"]
        assert -sdf.size <= g < -0.9 * sdf.size  # d sdf / d r is -1 but near the caps
        if importlib.util.find_spec("shapely") is not None:
            with tessera.load(BAR_GEOMETRY, "inproc") as here:
                inp = inputs(TRUSS, 1.5, nx=60, ny=30)
                np.testing.assert_allclose(c.apply(inp)["sdf"], here.apply(inp)["sdf"],
                                           rtol=0, atol=1e-12)
    finally:
        c.close()


# ---- bad inputs name the field -----------------------------------------

BAD = [
    ("bars", {"bars": np.array([[[0.0, 1.0], [np.nan, 2.0]]])}, "bars: non-finite value"),
    ("bars", {"bars": np.array([[[0.0, 1.0], [2.0, np.inf]]])}, "bars: non-finite value"),
    ("bars", {"bars": np.zeros((0, 2, 2))}, "bars: at least one bar"),
    ("radius", {"radius": np.float64(0.0)}, "radius: must be finite and > 0"),
    ("radius", {"radius": np.float64(-1.0)}, "radius: must be finite and > 0"),
    ("radius", {"radius": np.float64(np.nan)}, "radius: must be finite and > 0"),
    ("grid_x", {"grid_x": np.zeros(0)}, "grid_x: the grid is empty"),
    ("grid_y", {"grid_y": np.zeros(0)}, "grid_y: the grid is empty"),
    ("grid_y", {"grid_y": np.array([0.5, np.nan])}, "grid_y: non-finite value"),
    ("fd_step", {"fd_step": np.float64(0.0)}, "fd_step: must be finite and > 0"),
]


@pytest.mark.parametrize("field, change, message", BAD,
                         ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_inputs_name_the_field(comp, reference, field, change, message):
    inp = {**inputs([[[1.2, 2.3], [5.4, 2.3]]], 1.0, nx=8, ny=5), **change}
    # The component's validation refused it: a value not allowed (a 422).
    with pytest.raises(tessera.ValueNotAllowedError, match=message) as info:
        comp.apply(inp)
    assert info.value.loc[:1] == ("inputs",)
    with pytest.raises(ValueError, match=message):   # pydantic's ValidationError
        reference.apply(inp)
    ok = inputs([[[1.2, 2.3], [5.4, 2.3]]], 1.0, nx=8, ny=5)
    assert comp.apply(ok)["sdf"].shape == (5, 8)    # it lives on


def test_radius_derivative_needs_radius_above_the_step(comp):
    inp = inputs([[[1.2, 2.3], [5.4, 2.3]]], 0.5, nx=8, ny=5, fd_step=0.5)
    with pytest.raises(tessera.PluginError, match="radius: must exceed fd_step"):
        comp.vjp(inp, ["radius"], ["sdf"], {"sdf": np.ones((5, 8))})
    g = comp.vjp(inp, ["bars"], ["sdf"], {"sdf": np.ones((5, 8))})["bars"]
    assert g.shape == (1, 2, 2) and np.all(np.isfinite(g))
