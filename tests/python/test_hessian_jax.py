# SPDX-License-Identifier: MIT
"""Second derivatives through tessera.jax and Component.hvp: jax.hessian,
grad of grad, jvp of grad, jacfwd/jacrev of grad, under jit and vmap,
in-process and in worker mode, against the analytic Hessian of rosenbrock
(native hvp) and of the test plugin cubic (no hvp of its own: the
library's central differences of its vjp); a component without any hvp
refused clearly."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax

MODES = ("inproc", "worker")
X0 = np.array([0.5, 1.5, 2.0, -0.7])
A, B = 1.0, 100.0


def rosen_hessian(x, a=A, b=B):
    """The analytic Hessian of sum b (x[i+1] - x[i]^2)^2 + (a - x[i])^2 over
    (x, a, b): blocks xx, xa, xb, aa, ab, bb."""
    n = len(x)
    hxx = np.zeros((n, n))
    hxb = np.zeros(n)
    for i in range(n - 1):
        valley = x[i + 1] - x[i] ** 2
        hxx[i, i] += b * (12 * x[i] ** 2 - 4 * x[i + 1]) + 2
        hxx[i + 1, i + 1] += 2 * b
        hxx[i, i + 1] = hxx[i + 1, i] = -4 * b * x[i]
        hxb[i] += -4 * valley * x[i]
        hxb[i + 1] += 2 * valley
    hxa = np.array([-2.0] * (n - 1) + [0.0])
    return {"xx": hxx, "xa": hxa, "xb": hxb, "aa": 2.0 * (n - 1), "ab": 0.0, "bb": 0.0}


def rosen_value(comp):
    return lambda x: tessera.jax.apply(comp, {"x": x, "a": A, "b": B})["value"]


# ---- Component.hvp ------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_component_hvp_is_the_hessian_times_the_tangent(load, mode):
    comp = load("rosenbrock", mode)
    assert "hvp" in comp.endpoints and comp.hvp_source == "native"
    v = np.array([1.0, -2.0, 0.5, 3.0])
    h = rosen_hessian(X0)
    got = comp.hvp({"x": X0, "a": A, "b": B}, ["x"], ["value"], {"value": 2.0}, {"x": v})
    assert set(got) == {"x"}
    np.testing.assert_allclose(got["x"], 2.0 * h["xx"] @ v, rtol=1e-12)
    # several inputs: the results for each along all the tangents
    got = comp.hvp({"x": X0, "a": A, "b": B}, ["x", "b"], ["value"], {"value": 1.0},
                   {"x": v, "b": np.array(0.5)})
    np.testing.assert_allclose(got["x"], h["xx"] @ v + h["xb"] * 0.5, rtol=1e-12)
    np.testing.assert_allclose(got["b"], h["xb"] @ v + h["bb"] * 0.5, rtol=1e-12)
    stats = comp.stats()["endpoints"]
    assert stats["hvp"]["calls"] == 2 and stats["hvp"]["errors"] == 0


def test_component_hvp_refuses_bad_arguments_as_the_other_endpoints(load):
    comp = load("rosenbrock")
    inputs = {"x": X0, "a": A, "b": B}
    v = np.ones(4)
    with pytest.raises(tessera.MissingError, match="x"):
        comp.hvp(inputs, ["x"], ["value"], {"value": 1.0}, {})
    with pytest.raises(tessera.MissingError, match="value"):
        comp.hvp(inputs, ["x"], ["value"], {}, {"x": v})
    with pytest.raises(tessera.UnknownFieldError, match="'z'"):
        comp.hvp(inputs, ["x"], ["value"], {"value": 1.0}, {"x": v, "z": v})
    with pytest.raises(tessera.UnknownFieldError, match="'q'"):
        comp.hvp(inputs, ["q"], ["value"], {"value": 1.0}, {"q": v})
    with pytest.raises(tessera.ShapeError):
        comp.hvp(inputs, ["x"], ["value"], {"value": 1.0}, {"x": np.ones(3)})
    with pytest.raises(TypeError, match="list of field names"):
        comp.hvp(inputs, "x", ["value"], {"value": 1.0}, {"x": v})
    with pytest.raises(TypeError, match="tangent_vector must be a dict"):
        comp._call("hvp", ("x",), ("value",), inputs, ({"value": 1.0}, [v]))
    with pytest.raises(TypeError, match="pair"):
        comp._call("hvp", ("x",), ("value",), inputs, {"value": 1.0})
    assert comp.stats()["endpoints"]["hvp"]["errors"] >= 1


# ---- tessera.jax: rosenbrock, native hvp -----------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_every_second_order_transform_gives_the_analytic_hessian(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    x = jnp.asarray(X0)
    want = rosen_hessian(X0)["xx"]
    transforms = {
        "hessian": jax.hessian(f),
        "jit(hessian)": jax.jit(jax.hessian(f)),
        "jacfwd(grad)": jax.jacfwd(jax.grad(f)),
        "jacrev(grad)": jax.jacrev(jax.grad(f)),
        "jit(jacrev(grad))": jax.jit(jax.jacrev(jax.grad(f))),
        "jacfwd(jacfwd)": jax.jacfwd(jax.jacfwd(f)),
        "jacrev(jacfwd)": jax.jacrev(jax.jacfwd(f)),
    }
    for what, h in transforms.items():
        np.testing.assert_allclose(h(x), want, rtol=1e-12, atol=1e-9, err_msg=what)
    v = jnp.array([1.0, -2.0, 0.5, 3.0])
    for jit in (False, True):
        def hv(x, v):
            return jax.jvp(jax.grad(f), (x,), (v,))[1]
        got = (jax.jit(hv) if jit else hv)(x, v)
        np.testing.assert_allclose(got, want @ np.asarray(v), rtol=1e-12)
    # grad of grad of a scalar function: v . H v along a line
    line = lambda t: f(x + t * v)  # noqa: E731
    for g2 in (jax.grad(jax.grad(line)), jax.jit(jax.grad(jax.grad(line)))):
        np.testing.assert_allclose(g2(0.0), v @ want @ v, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_hessian_under_vmap_is_the_hessian_of_each_point(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    xs = np.stack([X0, X0[::-1], X0 * 0.5])
    want = np.stack([rosen_hessian(p)["xx"] for p in xs])
    for h in (jax.vmap(jax.hessian(f)), jax.jit(jax.vmap(jax.hessian(f)))):
        np.testing.assert_allclose(h(jnp.asarray(xs)), want, rtol=1e-12, atol=1e-9)
    # a batch of tangents at one point: the Hessian times each
    vs = np.eye(4)
    hv = jax.vmap(lambda v: jax.jvp(jax.grad(f), (jnp.asarray(X0),), (v,))[1])
    np.testing.assert_allclose(jax.jit(hv)(jnp.asarray(vs)), want[0] @ vs, rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_hessian_over_several_inputs_has_the_analytic_cross_terms(load, mode):
    comp = load("rosenbrock", mode)

    def f(d):
        return tessera.jax.apply(comp, d)["value"]

    point = {"x": jnp.asarray(X0), "a": jnp.asarray(A), "b": jnp.asarray(B)}
    want = rosen_hessian(X0)
    for h in (jax.hessian(f), jax.jit(jax.hessian(f)), jax.jacrev(jax.jacrev(f))):
        got = h(point)
        for (r, c), key in {("x", "x"): "xx", ("x", "a"): "xa", ("x", "b"): "xb",
                            ("a", "a"): "aa", ("a", "b"): "ab", ("b", "b"): "bb"}.items():
            np.testing.assert_allclose(got[r][c], want[key], rtol=1e-12, atol=1e-9,
                                       err_msg=f"{r}{c}")
            np.testing.assert_allclose(got[c][r], np.asarray(want[key]).T, rtol=1e-12,
                                       atol=1e-9, err_msg=f"{c}{r}")


# ---- a component without a native hvp: central differences of its vjp -------------

def cubic_hessian(x, s, w):
    """The Hessian of w . (s x^3) over (x, s)."""
    return {"xx": np.diag(6 * s * w * x), "xs": 3 * w * x ** 2, "ss": 0.0}


@pytest.mark.parametrize("mode", MODES)
def test_hessian_of_a_component_without_hvp_comes_from_its_vjp(load, mode):
    comp = load("cubic", mode)
    assert comp.hvp_source == "fd_vjp" and not comp.has_endpoint("hvp", True)
    assert comp.has_endpoint("hvp")
    x, s = np.array([0.5, -1.5, 2.0]), 1.5
    w = np.array([1.0, 2.0, -0.5])

    def loss(d):
        return jnp.sum(tessera.jax.apply(comp, d)["y"] * w)

    want = cubic_hessian(x, s, w)
    point = {"x": jnp.asarray(x), "s": jnp.asarray(s)}
    for h in (jax.hessian(loss), jax.jit(jax.hessian(loss))):
        got = h(point)
        np.testing.assert_allclose(got["x"]["x"], want["xx"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got["x"]["s"], want["xs"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got["s"]["x"], want["xs"], rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(got["s"]["s"], want["ss"], atol=1e-6)
    got = comp.hvp({"x": x, "s": s}, ["x"], ["y"], {"y": w}, {"x": np.ones(3)})
    np.testing.assert_allclose(got["x"], want["xx"] @ np.ones(3), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
def test_a_component_without_any_hvp_is_refused_by_name(load, mode):
    comp = load("cubic", mode, hvp_fallback="off")
    assert comp.hvp_source == "none" and "hvp" not in comp.endpoints

    def loss(x):
        return jnp.sum(tessera.jax.apply(comp, {"x": x, "s": 2.0})["y"])

    x = jnp.array([0.5, 1.0])
    np.testing.assert_allclose(jax.grad(loss)(x), 6.0 * x ** 2)   # first order still works
    for second in (jax.hessian(loss), jax.jit(jax.hessian(loss)), jax.jacfwd(jax.grad(loss)),
                   lambda x: jax.jvp(jax.grad(loss), (x,), (x,))[1]):
        with pytest.raises(tessera.UnsupportedError,
                           match="component 'cubic': .*needs its hvp, and it has none: no "
                                 "native hvp endpoint, and no vjp or fd_method") as info:
            second(x)
        assert isinstance(info.value, NotImplementedError)
    with pytest.raises(tessera.UnsupportedError):
        comp.hvp({"x": np.ones(2), "s": 2.0}, ["x"], ["y"], {"y": np.ones(2)},
                 {"x": np.ones(2)})


def test_forward_over_forward_of_a_vector_output_is_refused_clearly(load):
    comp = load("cubic")

    def f(x):
        return tessera.jax.apply(comp, {"x": x, "s": 2.0})["y"]

    with pytest.raises(tessera.UnsupportedError, match="output 'y' is not a scalar"):
        jax.jacfwd(jax.jacfwd(f))(jnp.ones(2))
    # the same second derivative through the vjp works
    got = jax.jacfwd(jax.jacrev(f))(jnp.array([1.0, 2.0]))
    want = np.zeros((2, 2, 2))
    want[0, 0, 0], want[1, 1, 1] = 12.0, 24.0
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_third_derivatives_are_refused(load):
    f = rosen_value(load("rosenbrock"))
    with pytest.raises(tessera.UnsupportedError, match="third-order"):
        jax.jacfwd(jax.hessian(f))(jnp.asarray(X0))


@pytest.mark.parametrize("mode", MODES)
def test_hessian_with_inputs_left_out_takes_their_defaults(load, mode):
    """defaults: y = s x + sum(w) + bias, s defaulting to 2, bias optional;
    the Hessian of c . y over (x, s) has only the cross term c."""
    comp = load("defaults", mode)
    c = np.array([1.0, -2.0, 0.5])

    def loss(d):
        return jnp.sum(tessera.jax.apply(comp, d)["y"] * c)

    x = jnp.array([0.3, 1.0, 2.0])
    got = jax.jit(jax.hessian(loss))({"x": x, "s": jnp.asarray(3.0)})
    np.testing.assert_allclose(got["x"]["s"], c, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["s"]["x"], c, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got["x"]["x"], np.zeros((3, 3)), atol=1e-6)
    # s and bias left out (s = 2): the gradient is 2 c, its derivative zero
    np.testing.assert_allclose(jax.grad(lambda x: loss({"x": x}))(x), 2 * c, rtol=1e-12)
    got = jax.hessian(lambda x: loss({"x": x}))(x)
    np.testing.assert_allclose(got, np.zeros((3, 3)), atol=1e-6)
    np.testing.assert_allclose(jax.jacfwd(jax.grad(lambda x: loss({"x": x})))(x),
                               np.zeros((3, 3)), atol=1e-6)
