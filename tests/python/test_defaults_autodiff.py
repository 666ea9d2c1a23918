# SPDX-License-Identifier: MIT
"""Defaults and optional inputs through tessera.jax, tessera.torch and
tessera.dask: a left-out input takes its default, a left-out optional one
reaches the plugin absent (as from the NumPy API), and neither is
differentiated; differentiating through the inputs that are given works
under jit, grad, vjp, jvp, vmap and torch.func.

Plugins: defaults (y = s*x + sum(w) + bias, seen = [s, sum(w), 1 if bias
was given else 0]; s = 2 and w = [1, 2, 3] by default, bias optional) and
contract_table (y = repeat*scale*x + offset, total = sum(y); scale = 2
and repeat = 1 by default, offset optional; nested inputs and outputs).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera
import tessera.jax
import tessera.torch
from conftest import plugin_path

X = np.array([1.0, 2.0])
MODES = ("inproc", "worker")


# ---- JAX ---------------------------------------------------------------------------

@pytest.mark.parametrize("mode", MODES)
def test_jax_apply_leaves_defaulted_and_optional_inputs_out(load, mode):
    comp = load("defaults", mode)
    x = jnp.asarray(X)
    for run in (lambda f: f, jax.jit):
        out = run(lambda x: tessera.jax.apply(comp, {"x": x}))(x)
        np.testing.assert_array_equal(out["y"], [8.0, 10.0])
        np.testing.assert_array_equal(out["seen"], [2.0, 6.0, 0.0])  # bias absent
        out = run(lambda x: tessera.jax.apply(comp, {"x": x, "s": 3.0, "bias": x}))(x)
        np.testing.assert_array_equal(out["y"], [10.0, 14.0])
        np.testing.assert_array_equal(out["seen"], [3.0, 6.0, 1.0])
    with pytest.raises(tessera.MissingError, match="input 'x' is missing"):
        tessera.jax.apply(comp, {"s": 3.0})


@pytest.mark.parametrize("mode", MODES)
def test_jax_differentiates_the_given_inputs_with_the_others_left_out(load, mode):
    comp = load("defaults", mode)
    x = jnp.asarray(X)

    def total(x):
        return tessera.jax.apply(comp, {"x": x})["y"].sum()

    np.testing.assert_array_equal(jax.grad(total)(x), [2.0, 2.0])      # s, its default
    np.testing.assert_array_equal(jax.jit(jax.grad(total))(x), [2.0, 2.0])
    y, tangent = jax.jvp(lambda x: tessera.jax.apply(comp, {"x": x})["y"], (x,),
                         (jnp.ones(2),))
    np.testing.assert_array_equal(y, [8.0, 10.0])
    np.testing.assert_array_equal(tangent, [2.0, 2.0])
    _, pullback = jax.vjp(lambda x: tessera.jax.apply(comp, {"x": x})["y"], x)
    np.testing.assert_array_equal(pullback(jnp.array([1.0, 3.0]))[0], [2.0, 6.0])
    # a given input is differentiated beside left-out ones
    ds = jax.grad(lambda s: tessera.jax.apply(comp, {"x": x, "s": s})["y"].sum())(3.0)
    assert float(ds) == 3.0
    dbias = jax.jit(jax.grad(
        lambda b: tessera.jax.apply(comp, {"x": x, "bias": b})["y"].sum()))(x)
    np.testing.assert_array_equal(dbias, [1.0, 1.0])


@pytest.mark.parametrize("mode", MODES)
def test_jax_vmap_gives_every_item_the_defaults_and_leaves_the_optional_input_absent(load,
                                                                                      mode):
    comp = load("defaults", mode)
    xs = jnp.asarray(np.stack([X, 2 * X, 3 * X]))

    def seen(x):
        return tessera.jax.apply(comp, {"x": x})["seen"]

    np.testing.assert_array_equal(jax.vmap(seen)(xs), [[2.0, 6.0, 0.0]] * 3)
    np.testing.assert_array_equal(jax.jit(jax.vmap(seen))(xs), [[2.0, 6.0, 0.0]] * 3)
    both = jax.vmap(lambda x: tessera.jax.apply(comp, {"x": x, "bias": x})["seen"])(xs)
    np.testing.assert_array_equal(both, [[2.0, 6.0, 1.0]] * 3)
    grads = jax.jit(jax.vmap(jax.grad(lambda x: tessera.jax.apply(comp, {"x": x})["y"].sum())))
    np.testing.assert_array_equal(grads(xs), np.full((3, 2), 2.0))


def test_jax_nested_inputs_left_out_take_their_defaults(load):
    comp = load("contract_table")
    x = jnp.asarray(X)

    def apply(inputs):
        return tessera.jax.apply(comp, inputs)["out"]

    out = jax.jit(lambda x: apply({"data": {"x": x}}))(x)
    np.testing.assert_array_equal(out["y"], [2.0, 4.0])    # repeat 1, scale 2, no offset
    assert float(out["total"]) == 6.0
    out = apply({"data": {"x": x, "scale": 3.0}, "repeat": 2, "offset": jnp.ones(2)})
    np.testing.assert_array_equal(out["y"], [7.0, 13.0])
    grad = jax.jit(jax.grad(lambda x: apply({"data": {"x": x}})["total"]))(x)
    np.testing.assert_array_equal(grad, [2.0, 2.0])


# ---- PyTorch ---------------------------------------------------------------------------

def _tensor(values, requires_grad: bool = False) -> torch.Tensor:
    return torch.tensor(values, dtype=torch.float64, requires_grad=requires_grad)


@pytest.mark.parametrize("mode", MODES)
def test_torch_apply_and_backward_with_inputs_left_out(load, mode):
    comp = load("defaults", mode)
    x = _tensor(X, requires_grad=True)
    out = tessera.torch.apply(comp, {"x": x})
    np.testing.assert_array_equal(out["y"].detach(), [8.0, 10.0])
    np.testing.assert_array_equal(out["seen"], [2.0, 6.0, 0.0])    # bias absent
    out["y"].sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    s, bias = _tensor(3.0, requires_grad=True), _tensor([1.0, 1.0], requires_grad=True)
    out = tessera.torch.apply(comp, {"x": x.detach(), "s": s, "bias": bias})
    np.testing.assert_array_equal(out["seen"], [3.0, 6.0, 1.0])
    out["y"].sum().backward()
    assert float(s.grad) == 3.0
    np.testing.assert_array_equal(bias.grad, [1.0, 1.0])
    with pytest.raises(tessera.MissingError, match="input 'x' is missing"):
        tessera.torch.apply(comp, {"s": s})
    assert torch.autograd.gradcheck(lambda x: tessera.torch.apply(comp, {"x": x})["y"], (x,),
                                    check_forward_ad=True)


@pytest.mark.parametrize("mode", MODES)
def test_torch_func_transforms_with_inputs_left_out(load, mode):
    comp = load("defaults", mode)
    x = _tensor(X)

    def y(x):
        return tessera.torch.apply(comp, {"x": x})["y"]

    np.testing.assert_array_equal(torch.func.grad(lambda x: y(x).sum())(x), [2.0, 2.0])
    _, tangent = torch.func.jvp(y, (x,), (torch.ones(2, dtype=torch.float64),))
    np.testing.assert_array_equal(tangent, [2.0, 2.0])
    _, pullback = torch.func.vjp(y, x)
    np.testing.assert_array_equal(pullback(_tensor([1.0, 3.0]))[0], [2.0, 6.0])
    np.testing.assert_array_equal(torch.func.jacfwd(y)(x), 2 * np.eye(2))
    xs = torch.stack([x, 2 * x, 3 * x])
    seen = torch.func.vmap(lambda x: tessera.torch.apply(comp, {"x": x})["seen"])(xs)
    np.testing.assert_array_equal(seen, [[2.0, 6.0, 0.0]] * 3)
    grads = torch.func.vmap(torch.func.jacrev(lambda x: y(x).sum()))(xs)
    np.testing.assert_array_equal(grads, np.full((3, 2), 2.0))


def test_torch_nested_inputs_left_out_take_their_defaults(load):
    comp = load("contract_table")
    x = _tensor(X, requires_grad=True)
    out = tessera.torch.apply(comp, {"data": {"x": x}})["out"]
    np.testing.assert_array_equal(out["y"].detach(), [2.0, 4.0])
    out["total"].backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0])
    out = tessera.torch.apply(comp, {"data": {"x": x, "scale": 3.0}, "repeat": 2,
                                     "offset": _tensor([1.0, 1.0])})["out"]
    np.testing.assert_array_equal(out["y"].detach(), [7.0, 13.0])


# ---- Dask ------------------------------------------------------------------------------

def test_a_cluster_batch_and_jax_vmap_on_the_cluster_leave_inputs_out():
    distributed = pytest.importorskip("distributed")
    import tessera.dask

    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                       dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        with tessera.dask.load(client, plugin_path("defaults")) as cc:
            xs = np.stack([X, 2 * X, 3 * X])
            out = cc.batch("apply", {"x": xs}, chunks=2)
            np.testing.assert_array_equal(out["seen"], [[2.0, 6.0, 0.0]] * 3)
            grads = cc.batch("vjp", {"x": xs}, ["x"], ["y"], {"y": np.ones(2)})
            np.testing.assert_array_equal(grads["x"], np.full((3, 2), 2.0))
            out = cc.batch("apply", {"x": xs, "bias": xs})
            np.testing.assert_array_equal(out["seen"], [[2.0, 6.0, 1.0]] * 3)
            [out] = cc.apply([{"x": X}])
            np.testing.assert_array_equal(out["seen"], [2.0, 6.0, 0.0])
            # jax.vmap sends the batch to the cluster, without the left-out inputs
            [before] = [s["stats"]["calls"] for s in cc.worker_states().values()]
            seen = jax.vmap(lambda x: tessera.jax.apply(cc, {"x": x})["seen"])(jnp.asarray(xs))
            np.testing.assert_array_equal(seen, [[2.0, 6.0, 0.0]] * 3)
            assert [s["stats"]["calls"] for s in cc.worker_states().values()] > [before]
            grad = jax.grad(lambda x: tessera.jax.apply(cc, {"x": x})["y"].sum())
            np.testing.assert_array_equal(jax.jit(jax.vmap(grad))(jnp.asarray(xs)),
                                          np.full((3, 2), 2.0))
