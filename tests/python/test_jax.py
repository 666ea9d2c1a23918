# SPDX-License-Identifier: MIT
"""Every bundled plugin as a JAX primitive: jit, grad, jvp, vjp, jacfwd,
jacrev and vmap, in-process and in worker mode, against finite differences
of the plugin and against JAX's derivatives of the pure-JAX reference."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from reference import CASES, finite_jacobian

PLUGINS = sorted(CASES)


def split(case, inputs):
    """The differentiated inputs (as JAX arrays) and the others (constants)."""
    diff = {k: jnp.asarray(inputs[k]) for k in case.wrt}
    const = {k: v for k, v in inputs.items() if k not in case.wrt}
    return diff, const


def output_weights(case, comp, inputs):
    rng = np.random.default_rng(11)
    return {o: rng.normal(size=np.shape(comp.apply(inputs)[o])) for o in case.outs}


def loss_of(fn, case, const, weights):
    """A scalar of every differentiable output, as a function of the
    differentiated inputs; fn(inputs) -> outputs."""
    def loss(diff):
        out = fn({**const, **diff})
        return sum(jnp.sum(out[o] * weights[o]) for o in case.outs)
    return loss


def through_plugin(comp):
    return lambda inputs: tessera.jax.apply(comp, inputs)


def through_reference(case):
    def fn(inputs):
        return case.reference(**{k: (int(v) if k in case.static else v)
                                  for k, v in inputs.items()})
    return fn


@pytest.mark.parametrize("name", PLUGINS)
def test_jit_apply_matches_the_reference(load, name):
    case = CASES[name]
    comp = load(name)
    inputs = case.point(0)
    f = jax.jit(lambda d: tessera.jax.apply(comp, d))
    eager = tessera.jax.apply(comp, inputs)
    for k, want in case.expected(inputs).items():
        np.testing.assert_allclose(f(inputs)[k], want, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(eager[k], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_jitted_grad_matches_finite_differences_and_the_reference(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    inputs = case.point(3)
    diff, const = split(case, inputs)
    weights = output_weights(case, comp, inputs)
    grad = jax.jit(jax.grad(loss_of(through_plugin(comp), case, const, weights)))(diff)
    ref = jax.grad(loss_of(through_reference(case), case, const, weights))(diff)

    def numpy_loss(d):
        out = comp.apply(d)
        return {"loss": sum(np.sum(np.asarray(out[o]) * weights[o]) for o in case.outs)}

    for k in case.wrt:
        fd = finite_jacobian(numpy_loss, inputs, k, "loss")
        np.testing.assert_allclose(grad[k], fd, rtol=case.rtol, atol=case.rtol)
        np.testing.assert_allclose(grad[k], ref[k], rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("name", PLUGINS)
def test_jvp_and_vjp_match_the_numpy_endpoints(load, name):
    case = CASES[name]
    comp = load(name)
    inputs = case.point(4)
    diff, const = split(case, inputs)
    rng = np.random.default_rng(5)
    tangent = {k: jnp.asarray(rng.normal(size=np.shape(v))) for k, v in diff.items()}

    def f(d):
        out = tessera.jax.apply(comp, {**const, **d})
        return {o: out[o] for o in case.outs}

    primal, tan = jax.jit(lambda d, t: jax.jvp(f, (d,), (t,)))(diff, tangent)
    want = comp.jvp(inputs, case.wrt, case.outs, {k: np.asarray(v) for k, v in tangent.items()})
    for o in case.outs:
        np.testing.assert_allclose(tan[o], want[o], rtol=1e-10, atol=1e-12)
    cot = {o: jnp.asarray(rng.normal(size=np.shape(primal[o]))) for o in case.outs}
    _, pullback = jax.vjp(f, diff)
    (got,) = pullback(cot)
    want = comp.vjp(inputs, case.wrt, case.outs, {o: np.asarray(v) for o, v in cot.items()})
    for k in case.wrt:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", PLUGINS)
def test_jacfwd_and_jacrev_match_the_jacobian_endpoint(load, name):
    case = CASES[name]
    comp = load(name)
    inputs = case.point(6)
    diff, const = split(case, inputs)

    def f(d):
        out = tessera.jax.apply(comp, {**const, **d})
        return {o: out[o] for o in case.outs}

    want = comp.jacobian(inputs, case.wrt, case.outs)
    for jac in (jax.jit(jax.jacfwd(f)), jax.jit(jax.jacrev(f))):
        got = jac(diff)
        for o in case.outs:
            for k in case.wrt:
                np.testing.assert_allclose(got[o][k], want[o][k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_vmap_matches_one_call_per_item(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    points = [case.point(s) for s in range(3)]
    batched = {k: jnp.stack([jnp.asarray(p[k]) for p in points]) for k in case.wrt}
    const = {k: v for k, v in points[0].items() if k not in case.wrt}
    f = jax.jit(jax.vmap(lambda d: tessera.jax.apply(comp, {**const, **d})))
    got = f(batched)
    for i, p in enumerate(points):
        want = comp.apply({**p, **const})
        for o in want:
            np.testing.assert_allclose(got[o][i], want[o], rtol=1e-12, atol=1e-14)


def test_eager_vmap_of_value_dependent_shapes_calls_per_item(load):
    comp = load("linear")
    xs = jnp.asarray(np.random.default_rng(2).normal(size=(3, 4)))
    got = jax.vmap(lambda x: tessera.jax.apply(comp, {"x": x})["y"])(xs)
    for i in range(3):
        np.testing.assert_allclose(got[i], comp.apply({"x": np.asarray(xs[i])})["y"],
                                   rtol=1e-12)


def test_vmap_of_grad_and_nested_vmap(load):
    comp = load("rosenbrock")

    def value(x):
        return tessera.jax.apply(comp, {"x": x, "a": 1.0, "b": 100.0})["value"]

    xs = jnp.asarray(np.random.default_rng(0).normal(size=(2, 3, 4)))
    got = jax.jit(jax.vmap(jax.vmap(jax.grad(value))))(xs)
    for idx in np.ndindex(2, 3):
        want = comp.vjp({"x": np.asarray(xs[idx]), "a": 1.0, "b": 100.0}, ["x"], ["value"],
                        {"value": 1.0})["x"]
        np.testing.assert_allclose(got[idx], want, rtol=1e-12)


def test_outputs_of_any_dtype_go_through_jit(load):
    comp = load("mixed_dtypes")
    inputs = {"x": jnp.array([1.0, 2.0], jnp.float32), "w": jnp.ones((2, 3)),
              "z": jnp.array([1 + 1j, 2j]), "h": jnp.float16(0.5), "k": jnp.int64(3)}
    got = jax.jit(lambda d: tessera.jax.apply(comp, d))(inputs)
    want = comp.apply({k: np.asarray(v) for k, v in inputs.items()})
    for k in want:
        assert got[k].dtype == want[k].dtype
        np.testing.assert_array_equal(got[k], want[k])
    g = jax.grad(lambda x: jnp.sum(tessera.jax.apply(comp, {**inputs, "x": x})["y"]))
    np.testing.assert_allclose(g(inputs["x"]), 2 * np.asarray(inputs["x"]))


def test_non_differentiable_fields_behave_as_in_tesseract_jax(load):
    heat = load("heat")
    inputs = CASES["heat"].point()

    def misfit_of_dt(dt):
        return tessera.jax.apply(heat, {**inputs, "dt": dt})["misfit"]

    with pytest.raises(ValueError, match="input 'dt'.*not differentiable"):
        jax.grad(misfit_of_dt)(0.02)
    # stop_gradient makes the tangent a symbolic zero
    jax.grad(lambda dt: misfit_of_dt(jax.lax.stop_gradient(dt)))(0.02)

    comp = load("address")
    x = jnp.arange(3.0)
    with pytest.raises(ValueError, match="output 'first'.*not differentiable"):
        jax.grad(lambda x: tessera.jax.apply(comp, {"x": x})["first"])(x)
    # other outputs differentiate; the tangent of a non-differentiable float
    # output is NaN, that of an integer output a float0 zero
    g = jax.grad(lambda x: jnp.sum(tessera.jax.apply(comp, {"x": x})["y"]))(x)
    np.testing.assert_allclose(g, 2.0, rtol=1e-6)
    _, tangents = jax.jvp(lambda x: tessera.jax.apply(comp, {"x": x}), (x,), (jnp.ones(3),))
    assert np.isnan(tangents["first"]) and tangents["address"].dtype == jax.dtypes.float0
    np.testing.assert_allclose(tangents["y"], 2.0, rtol=1e-6)


def test_bad_inputs_fail_at_trace_time_with_the_library_error(load):
    comp = load("vectoradd")
    with pytest.raises(tessera.ShapeError, match="symbolic dim 'n'"):
        jax.jit(lambda a, b: tessera.jax.apply(comp, {"a": a, "b": b, "s": 1.0}))(
            jnp.ones(3), jnp.ones(4))
    with pytest.raises(tessera.DtypeError, match="input 'a'.*complex128"):
        tessera.jax.apply(comp, {"a": jnp.ones(3, jnp.complex128), "b": jnp.ones(3), "s": 1.0})
    with pytest.raises(tessera.MissingError, match="input 's' is missing"):
        tessera.jax.apply(comp, {"a": jnp.ones(3), "b": jnp.ones(3)})
    # a safe conversion is made
    out = tessera.jax.apply(comp, {"a": jnp.ones(3, jnp.float32), "b": jnp.ones(3), "s": 2})
    np.testing.assert_array_equal(out["result"], 3.0)


def test_plugin_failures_under_jit_carry_the_plugin_message(load):
    comp = load("heat")
    inputs = {**CASES["heat"].point(), "conductivity": -np.ones(6)}
    with pytest.raises(Exception, match="conductivity must be positive"):
        jax.jit(lambda d: tessera.jax.apply(comp, d))(inputs)["misfit"].block_until_ready()


def test_jit_reads_xla_buffers_in_place(load):
    comp = load("address")
    x = jnp.arange(64.0)
    seen = jax.jit(lambda x: tessera.jax.apply(comp, {"x": x})["address"])(x)
    assert int(seen) == x.unsafe_buffer_pointer()


@pytest.mark.parametrize("n", [64, 100_000])
def test_jit_results_are_written_into_xla_buffers(load, n):
    comp = load("address")
    out = jax.jit(lambda x: tessera.jax.apply(comp, {"x": x}))(jnp.arange(float(n)))
    assert int(out["y_at"]) == out["y"].unsafe_buffer_pointer()
    np.testing.assert_array_equal(out["y"], 2.0 * np.arange(float(n)))
