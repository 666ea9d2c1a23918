# SPDX-License-Identifier: MIT
"""Every bundled plugin through the NumPy API, in every mode: values against
the JAX re-implementations, and jvp, vjp and jacobian against finite
differences of apply and against JAX's derivatives of the reference."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from conftest import MODES
from reference import CASES, finite_jacobian

PLUGINS = sorted(CASES)


def reference_jacobian(case, inputs: dict, wrt: str, out: str) -> np.ndarray:
    def f(v):
        return case.reference(**{**{k: (x.item() if k in case.static else x)
                                    for k, x in inputs.items()}, wrt: v})[out]
    return np.asarray(jax.jacrev(f)(np.asarray(inputs[wrt], dtype=np.float64)))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", PLUGINS)
def test_apply_matches_the_reference(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    for seed in range(3):
        inputs = case.point(seed)
        out = comp.apply(inputs)
        want = case.expected(inputs)
        assert set(out) == set(want)
        for k in want:
            np.testing.assert_allclose(out[k], want[k], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_jacobian_matches_finite_differences_and_the_reference(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    inputs = case.point(1)
    jac = comp.jacobian(inputs, case.wrt, case.outs)
    for out in case.outs:
        for wrt in case.wrt:
            fd = finite_jacobian(comp.apply, inputs, wrt, out)
            np.testing.assert_allclose(jac[out][wrt], fd, rtol=case.rtol, atol=case.rtol)
            np.testing.assert_allclose(jac[out][wrt], reference_jacobian(case, inputs, wrt, out),
                                       rtol=1e-9, atol=1e-11)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_jvp_and_vjp_are_the_jacobian_applied(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    inputs = case.point(2)
    rng = np.random.default_rng(7)
    jac = comp.jacobian(inputs, case.wrt, case.outs)
    tangent = {k: rng.normal(size=np.shape(inputs[k])) for k in case.wrt}
    jvp = comp.jvp(inputs, case.wrt, case.outs, tangent)
    for out in case.outs:
        want = sum(np.tensordot(jac[out][k], tangent[k], axes=np.ndim(tangent[k]))
                   for k in case.wrt)
        np.testing.assert_allclose(jvp[out], want, rtol=1e-10, atol=1e-12)
    shapes = {k: v.shape for k, v in comp.apply(inputs).items()}
    cotangent = {o: rng.normal(size=shapes[o]) for o in case.outs}
    vjp = comp.vjp(inputs, case.wrt, case.outs, cotangent)
    for k in case.wrt:
        want = sum(np.tensordot(cotangent[o], jac[o][k], axes=np.ndim(cotangent[o]))
                   for o in case.outs)
        np.testing.assert_allclose(vjp[k], want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", PLUGINS)
def test_abstract_eval_gives_the_shapes_apply_gives(load, name):
    case = CASES[name]
    comp = load(name)
    inputs = case.point()
    shapes = comp.abstract_eval({k: {"shape": np.shape(v), "dtype": np.asarray(v).dtype}
                                 for k, v in inputs.items()})
    out = comp.apply(inputs)
    assert {k: (s.shape, s.dtype) for k, s in shapes.items()} == \
        {k: (v.shape, v.dtype) for k, v in out.items()}


def test_schema_and_endpoints_describe_the_plugin(load):
    comp = load("heat")
    s = comp.schema
    assert comp.name == s.name == "heat"
    assert s.input_names == ("conductivity", "source", "initial_temperature", "observations",
                             "dt", "steps")
    assert s.differentiable_inputs == ("conductivity", "source", "initial_temperature")
    assert s.input("steps").dtype == np.dtype("int64") and s.input("steps").dims == ()
    assert s.input("conductivity").dims == ("n",)
    assert s.output_names == ("temperature", "misfit")
    # hvp: the library's central differences of its vjp
    assert comp.endpoints == ("apply", "jvp", "vjp", "jacobian", "hvp", "abstract_eval")
    assert comp.hvp_source == "fd_vjp" and not comp.has_endpoint("hvp", True)
    assert comp.mode == "inproc"
    lin = load("linear")
    assert lin.schema.output("y").dims == ("m",)
    assert not lin.schema.output_shapes_static and s.output_shapes_static


def test_worker_pool_batches_match_single_calls(load):
    comp = load("rosenbrock", "worker", workers=2)
    rng = np.random.default_rng(3)
    xs = rng.normal(size=(6, 4))
    batch = comp._call("apply", (), (), {"x": xs, "a": np.full(6, 1.0), "b": np.full(6, 100.0)},
                       None, 6)[0]
    singles = [comp.apply({"x": x, "a": 1.0, "b": 100.0})["value"] for x in xs]
    np.testing.assert_allclose(batch, singles, rtol=1e-13)
