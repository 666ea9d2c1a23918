# SPDX-License-Identifier: MIT
"""Second derivatives through tessera.torch: torch.autograd.functional's
hessian, hvp and vhp, double backward with create_graph=True, gradgradcheck
and torch.func.hessian, in-process and in worker mode, against the analytic
Hessian of rosenbrock (native hvp) and of the test plugin cubic (central
differences of its vjp); third derivatives, and a component without any
hvp, refused clearly."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwAD

import tessera
import tessera.torch
from test_hessian_jax import A, B, X0, cubic_hessian, rosen_hessian

F64 = torch.float64
MODES = ("inproc", "worker")


def rosen_value(comp):
    return lambda x: tessera.torch.apply(comp, {"x": x, "a": A, "b": B})["value"]


@pytest.mark.parametrize("mode", MODES)
def test_autograd_functional_hessian_is_the_analytic_hessian(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    x = torch.tensor(X0, dtype=F64)
    want = torch.tensor(rosen_hessian(X0)["xx"])
    torch.testing.assert_close(torch.autograd.functional.hessian(f, x), want)
    v = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=F64)
    for product in (torch.autograd.functional.hvp, torch.autograd.functional.vhp):
        _, got = product(f, x, v)
        torch.testing.assert_close(got, want @ v)


@pytest.mark.parametrize("mode", MODES)
def test_double_backward_with_create_graph_gives_hessian_rows(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    x = torch.tensor(X0, dtype=F64, requires_grad=True)
    want = torch.tensor(rosen_hessian(X0)["xx"])
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    assert g.grad_fn is not None
    for i in range(4):
        (row,) = torch.autograd.grad(g[i], x, retain_graph=True)
        torch.testing.assert_close(row, want[i])
    # g.backward() accumulates H . 1 into x.grad
    x.grad = None
    g.sum().backward()
    torch.testing.assert_close(x.grad, want.sum(0))
    torch.autograd.gradgradcheck(f, (torch.tensor(X0, dtype=F64, requires_grad=True),))


@pytest.mark.parametrize("mode", MODES)
def test_second_derivatives_over_several_inputs_have_the_cross_terms(load, mode):
    comp = load("rosenbrock", mode)

    def f(x, a, b):
        return tessera.torch.apply(comp, {"x": x, "a": a, "b": b})["value"]

    args = (torch.tensor(X0, dtype=F64), torch.tensor(A, dtype=F64), torch.tensor(B, dtype=F64))
    want = rosen_hessian(X0)
    got = torch.autograd.functional.hessian(f, args)
    np.testing.assert_allclose(got[0][0], want["xx"], rtol=1e-12)
    np.testing.assert_allclose(got[0][2], want["xb"], rtol=1e-12)
    np.testing.assert_allclose(got[2][0], want["xb"], rtol=1e-12)
    np.testing.assert_allclose(got[0][1], want["xa"], rtol=1e-12)
    np.testing.assert_allclose(got[1][1], want["aa"], rtol=1e-12)
    np.testing.assert_allclose(got[2][2], want["bb"], atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
def test_torch_func_second_order_transforms_give_the_hessian(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    x = torch.tensor(X0, dtype=F64)
    v = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=F64)
    want = torch.tensor(rosen_hessian(X0)["xx"])
    torch.testing.assert_close(torch.func.hessian(f)(x), want)
    torch.testing.assert_close(torch.func.jacrev(torch.func.jacrev(f))(x), want)
    torch.testing.assert_close(torch.func.jacfwd(torch.func.grad(f))(x), want)
    _, hv = torch.func.jvp(torch.func.grad(f), (x,), (v,))
    torch.testing.assert_close(hv, want @ v)
    line = lambda t: f(x + t * v)  # noqa: E731
    torch.testing.assert_close(torch.func.grad(torch.func.grad(line))(torch.tensor(0.0, dtype=F64)),
                               v @ want @ v)
    xs = torch.stack([x, x.flip(0)])
    torch.testing.assert_close(torch.func.vmap(torch.func.hessian(f))(xs),
                               torch.stack([want, torch.tensor(rosen_hessian(X0[::-1])["xx"])]))
    # reverse over forward: the gradient of a tangent is H v
    xt = x.clone().requires_grad_()
    with fwAD.dual_level():
        tangent = fwAD.unpack_dual(f(fwAD.make_dual(xt, v))).tangent
        (got,) = torch.autograd.grad(tangent, xt)
    torch.testing.assert_close(got, want @ v)


@pytest.mark.parametrize("mode", MODES)
def test_hessian_of_a_component_without_hvp_comes_from_its_vjp(load, mode):
    comp = load("cubic", mode)
    assert comp.hvp_source == "fd_vjp"
    x, s = np.array([0.5, -1.5, 2.0]), 1.5
    w = torch.tensor([1.0, 2.0, -0.5], dtype=F64)

    def loss(x, s):
        return (tessera.torch.apply(comp, {"x": x, "s": s})["y"] * w).sum()

    want = cubic_hessian(x, s, w.numpy())
    got = torch.autograd.functional.hessian(loss, (torch.tensor(x), torch.tensor(s)))
    np.testing.assert_allclose(got[0][0], want["xx"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[0][1], want["xs"], rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got[1][0], want["xs"], rtol=1e-6, atol=1e-6)
    got = torch.func.hessian(loss)(torch.tensor(x), torch.tensor(s))
    np.testing.assert_allclose(got, want["xx"], rtol=1e-6, atol=1e-6)


def test_third_derivatives_are_refused(load):
    f = rosen_value(load("rosenbrock"))
    x = torch.tensor(X0, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    (hv,) = torch.autograd.grad(g.sum(), x, create_graph=True)
    with pytest.raises(tessera.UnsupportedError, match="component 'rosenbrock': third-order "
                                                       "derivatives are not available.*'x'"):
        torch.autograd.grad(hv.sum(), x)
    with pytest.raises(tessera.UnsupportedError, match="third-order"):
        torch.func.jacrev(torch.func.hessian(f))(x.detach())


@pytest.mark.parametrize("mode", MODES)
def test_forward_over_forward_of_a_scalar_output_is_the_hessian(load, mode):
    f = rosen_value(load("rosenbrock", mode))
    x = torch.tensor(X0, dtype=F64)
    want = torch.tensor(rosen_hessian(X0)["xx"])
    torch.testing.assert_close(torch.func.jacfwd(torch.func.jacfwd(f))(x), want)
    torch.testing.assert_close(torch.func.jacrev(torch.func.jacfwd(f))(x), want)
    # a JVP of a JVP: v . H v
    v = torch.tensor([1.0, -2.0, 0.5, 3.0], dtype=F64)
    _, vhv = torch.func.jvp(lambda y: torch.func.jvp(f, (y,), (v,))[1], (x,), (v,))
    torch.testing.assert_close(vhv, v @ want @ v)


def test_forward_over_forward_of_a_vector_output_is_refused_clearly(load):
    comp = load("cubic")

    def f(x):
        return tessera.torch.apply(comp, {"x": x, "s": 2.0})["y"]

    with pytest.raises(tessera.UnsupportedError,
                       match="forward over forward.*output 'y' is not a scalar"):
        torch.func.jacfwd(torch.func.jacfwd(f))(torch.ones(2, dtype=F64))
    # the same second derivative through the vjp works
    got = torch.func.jacfwd(torch.func.jacrev(f))(torch.tensor([1.0, 2.0], dtype=F64))
    want = torch.zeros(2, 2, 2, dtype=F64)
    want[0, 0, 0], want[1, 1, 1] = 12.0, 24.0
    torch.testing.assert_close(got, want, rtol=1e-6, atol=1e-6)
