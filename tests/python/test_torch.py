# SPDX-License-Identifier: MIT
"""Every bundled plugin as a torch.autograd.Function: values against the
reference, torch.autograd.gradcheck in reverse and forward mode, gradients
against finite differences and the reference, in-process and in worker mode;
torch.func's transforms and vmap against the endpoints; second derivatives
of a component without hvp refused with tessera.UnsupportedError, never a
silent zero."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as fwAD

import tessera
import tessera.torch
from reference import CASES, finite_jacobian

PLUGINS = sorted(CASES)


def tensors(case, inputs):
    diff = {k: torch.tensor(np.asarray(inputs[k]), dtype=torch.float64, requires_grad=True)
            for k in case.wrt}
    const = {k: torch.from_numpy(np.asarray(v)) for k, v in inputs.items() if k not in case.wrt}
    return diff, const


def outputs_fn(comp, case, const):
    """The differentiable outputs as a function of the differentiable inputs
    (positional, in case.wrt order), for gradcheck."""
    def f(*args):
        out = tessera.torch.apply(comp, {**const, **dict(zip(case.wrt, args))})
        return tuple(out[o] for o in case.outs)
    return f


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_gradcheck_in_reverse_and_forward_mode(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    diff, const = tensors(case, case.point(8))
    f = outputs_fn(comp, case, const)
    args = tuple(diff[k] for k in case.wrt)
    assert torch.autograd.gradcheck(f, args, eps=1e-6, atol=1e-5, rtol=1e-4,
                                    check_forward_ad=True, check_backward_ad=True)


@pytest.mark.parametrize("name", PLUGINS)
def test_values_and_gradients_match_the_reference_and_finite_differences(load, name):
    case = CASES[name]
    comp = load(name)
    inputs = case.point(9)
    diff, const = tensors(case, inputs)
    out = tessera.torch.apply(comp, {**const, **diff})
    for o, want in case.expected(inputs).items():
        np.testing.assert_allclose(out[o].detach().numpy(), want, rtol=1e-10, atol=1e-12)
    rng = np.random.default_rng(12)
    weights = {o: rng.normal(size=tuple(out[o].shape)) for o in case.outs}
    loss = sum((out[o] * torch.from_numpy(weights[o])).sum() for o in case.outs)
    loss.backward()

    def ref_loss(d):
        res = case.reference(**{**{k: (v.item() if k in case.static else v)
                                   for k, v in inputs.items()}, **d})
        return sum((res[o] * weights[o]).sum() for o in case.outs)

    ref = jax.grad(ref_loss)({k: np.asarray(inputs[k], np.float64) for k in case.wrt})

    def numpy_loss(d):
        res = comp.apply(d)
        return {"loss": sum(np.sum(res[o] * weights[o]) for o in case.outs)}

    for k in case.wrt:
        np.testing.assert_allclose(diff[k].grad.numpy(), ref[k], rtol=1e-9, atol=1e-11)
        np.testing.assert_allclose(diff[k].grad.numpy(),
                                   finite_jacobian(numpy_loss, inputs, k, "loss"),
                                   rtol=case.rtol, atol=case.rtol)


def test_forward_mode_gives_the_jvp(load):
    comp = load("vectoradd")
    a, b = torch.randn(5, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
    ta = torch.randn(5, dtype=torch.float64)
    with fwAD.dual_level():
        out = tessera.torch.apply(comp, {"a": fwAD.make_dual(a, ta), "b": b, "s": 3.0})
        tangent = fwAD.unpack_dual(out["result"]).tangent
    torch.testing.assert_close(tangent, 3.0 * ta)


def test_outputs_are_tensors_over_the_result_buffers(load):
    comp = load("noop", "worker")
    x = comp.empty(16)
    x[:] = np.arange(16.0)
    y = tessera.torch.apply(comp, {"x": torch.from_numpy(x)})["y"]
    again = comp.apply({"x": x})["y"]
    assert y.data_ptr() != again.__array_interface__["data"][0]  # y's buffer stays y's
    torch.testing.assert_close(y, torch.arange(16, dtype=torch.float64))
    assert comp.stats()["bytes_copied"] == 0


def test_non_differentiable_inputs_refuse_gradients(load):
    comp = load("heat")
    inputs = CASES["heat"].point()
    diff, const = tensors(CASES["heat"], inputs)
    dt = torch.tensor(0.02, dtype=torch.float64, requires_grad=True)
    out = tessera.torch.apply(comp, {**const, **diff, "dt": dt})
    with pytest.raises(ValueError, match="input 'dt'.*not differentiable"):
        out["misfit"].backward()
    with fwAD.dual_level(), pytest.raises(ValueError, match="input 'dt'.*not differentiable"):
        tessera.torch.apply(comp, {**const, "dt": fwAD.make_dual(torch.tensor(0.02,
                                   dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64)),
                                   **{k: v.detach() for k, v in diff.items()}})


def test_non_differentiable_outputs_carry_no_gradient(load):
    comp = load("address")
    x = torch.arange(3.0, dtype=torch.float64, requires_grad=True)
    out = tessera.torch.apply(comp, {"x": x})
    assert out["y"].requires_grad and not out["first"].requires_grad
    assert not out["address"].requires_grad
    out["y"].sum().backward()
    torch.testing.assert_close(x.grad, torch.full((3,), 2.0, dtype=torch.float64))


def test_bad_inputs_raise_the_library_error(load):
    comp = load("noop")
    with pytest.raises(tessera.UnknownFieldError, match="'z' is not an input"):
        tessera.torch.apply(comp, {"x": torch.ones(2), "z": torch.ones(2)})
    with pytest.raises(tessera.DtypeError, match="input 'x'.*complex"):
        tessera.torch.apply(comp, {"x": torch.ones(2, dtype=torch.complex128)})


# ---- derivatives of derivatives of a component without hvp: a clear error ------
# (second derivatives themselves: test_hessian_torch.py)

F64 = torch.float64
SECOND_ORDER = ("component 'cubic': second-order derivatives are not available: "
                "a derivative of its vjp or jvp with respect to input")


def rosenbrock_value(comp):
    return lambda x: tessera.torch.apply(comp, {"x": x, "a": 1.0, "b": 100.0})["value"]


def cubic_sum(comp):
    return lambda x: tessera.torch.apply(comp, {"x": x, "s": 2.0})["y"].sum()


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_second_derivatives_without_hvp_raise_instead_of_returning_zeros(load, mode):
    f = cubic_sum(load("cubic", mode, hvp_fallback="off"))
    x = torch.tensor([0.5, 1.5, 2.0], dtype=F64)
    v = torch.ones(3, dtype=F64)
    asks = {
        "hessian": lambda: torch.autograd.functional.hessian(f, x),
        "hvp": lambda: torch.autograd.functional.hvp(f, x, v),
        "vhp": lambda: torch.autograd.functional.vhp(f, x, v),
        "gradgradcheck": lambda: torch.autograd.gradgradcheck(f, (x.clone().requires_grad_(),)),
        "torch.func.hessian": lambda: torch.func.hessian(f)(x),
        "jacrev of jacrev": lambda: torch.func.jacrev(torch.func.jacrev(f))(x),
        "jacfwd of jacfwd": lambda: torch.func.jacfwd(torch.func.jacfwd(f))(x),
        "grad of grad": lambda: torch.func.grad(lambda y: torch.func.grad(f)(y).sum())(x),
    }
    for what, ask in asks.items():
        with pytest.raises(tessera.UnsupportedError, match=SECOND_ORDER) as info:
            ask()
        assert isinstance(info.value, NotImplementedError), what
        assert info.value.code_name == "TSR_E_UNSUPPORTED"
        assert "needs its hvp, and it has none" in str(info.value), what


def test_a_gradient_with_create_graph_without_hvp_is_right_and_refuses_to_be_differentiated(
        load):
    comp = load("cubic", hvp_fallback="off")
    f = cubic_sum(comp)
    x = torch.tensor([0.5, 1.5, 2.0], dtype=F64, requires_grad=True)
    grad = 6.0 * x.detach() ** 2
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    assert g.grad_fn is not None      # in the graph: what differentiates it will notice
    torch.testing.assert_close(g, grad)
    with pytest.raises(tessera.UnsupportedError, match=SECOND_ORDER + " 'x'"):
        torch.autograd.grad(g.sum(), x)
    (g,) = torch.autograd.grad(f(x), x, create_graph=True)
    with pytest.raises(tessera.UnsupportedError, match=SECOND_ORDER):
        g.sum().backward()
    # loss.backward(create_graph=True) alone is fine and accumulates the gradient
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)   # torch's note on reference cycles
        f(x).backward(create_graph=True)
    torch.testing.assert_close(x.grad, grad)
    x.grad = None
    # forward over reverse: the tangent of a gradient
    with fwAD.dual_level():
        dual = fwAD.make_dual(x.detach(), torch.ones(3, dtype=F64))
        with pytest.raises(tessera.UnsupportedError, match=SECOND_ORDER):
            torch.func.grad(f)(dual)
    # reverse over forward: the gradient of a tangent
    with fwAD.dual_level():
        y = f(fwAD.make_dual(x, torch.ones(3, dtype=F64)))
        tangent = fwAD.unpack_dual(y).tangent
        with pytest.raises(tessera.UnsupportedError, match=SECOND_ORDER):
            torch.autograd.grad(tangent, x)


def test_a_gradient_is_linear_in_its_cotangent_through_the_jvp(load):
    """The cotangent enters a gradient linearly: that derivative is the
    component's jvp, so torch.autograd.functional.jvp (the double-backward
    trick) is right rather than zero."""
    comp = load("rosenbrock")
    f = rosenbrock_value(comp)
    x = np.array([0.5, 1.5, 2.0])
    t = np.array([1.0, -2.0, 0.5])
    want = comp.jvp({"x": x, "a": 1.0, "b": 100.0}, ["x"], ["value"], {"x": t})["value"]
    _, got = torch.autograd.functional.jvp(f, torch.from_numpy(x), torch.from_numpy(t))
    torch.testing.assert_close(got, torch.tensor(want))
    xt = torch.tensor(x, requires_grad=True)
    ct = torch.tensor(2.0, dtype=F64, requires_grad=True)
    (g,) = torch.autograd.grad(f(xt), xt, grad_outputs=ct, create_graph=True)
    (d_ct,) = torch.autograd.grad(g, ct, grad_outputs=torch.from_numpy(t))
    torch.testing.assert_close(d_ct, torch.tensor(want))


# ---- torch.func ---------------------------------------------------------------

def func_of(comp, case, const):
    def f(*args):
        out = tessera.torch.apply(comp, {**const, **dict(zip(case.wrt, args))})
        return tuple(out[o] for o in case.outs)
    return f


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_torch_func_transforms_match_the_endpoints(load, name, mode):
    case = CASES[name]
    comp = load(name, mode)
    inputs = case.point(7)
    _, const = tensors(case, inputs)
    f = func_of(comp, case, const)
    args = tuple(torch.tensor(np.asarray(inputs[k]), dtype=F64) for k in case.wrt)
    argnums = tuple(range(len(args)))
    jac = comp.jacobian(inputs, case.wrt, case.outs)
    for transform in (torch.func.jacrev, torch.func.jacfwd):
        got = transform(f, argnums=argnums)(*args)
        for i, o in enumerate(case.outs):
            for j, k in enumerate(case.wrt):
                np.testing.assert_allclose(got[i][j].numpy(), jac[o][k], rtol=1e-9, atol=1e-11)
    rng = np.random.default_rng(3)
    primal, pullback = torch.func.vjp(f, *args)
    cot = {o: rng.normal(size=tuple(p.shape)) for o, p in zip(case.outs, primal)}
    got = pullback(tuple(torch.from_numpy(cot[o]) for o in case.outs))
    want = comp.vjp(inputs, case.wrt, case.outs, cot)
    for j, k in enumerate(case.wrt):
        np.testing.assert_allclose(got[j].numpy(), want[k], rtol=1e-10, atol=1e-12)
    tan = {k: rng.normal(size=np.shape(inputs[k])) for k in case.wrt}
    _, got = torch.func.jvp(f, args, tuple(torch.from_numpy(tan[k]) for k in case.wrt))
    want = comp.jvp(inputs, case.wrt, case.outs, tan)
    for i, o in enumerate(case.outs):
        np.testing.assert_allclose(got[i].numpy(), want[o], rtol=1e-10, atol=1e-12)

    def loss(*a):
        return sum((y * torch.from_numpy(cot[o])).sum() for o, y in zip(case.outs, f(*a)))

    got = torch.func.grad(loss, argnums=argnums)(*args)
    want = comp.vjp(inputs, case.wrt, case.outs, cot)
    for j, k in enumerate(case.wrt):
        np.testing.assert_allclose(got[j].numpy(), want[k], rtol=1e-10, atol=1e-12)


@pytest.fixture
def batches(monkeypatch):
    """The batch sizes with which tessera.torch ran each endpoint."""
    seen: list[tuple[str, int]] = []
    for kind in ("apply", "vjp", "jvp"):
        real = getattr(tessera.torch, f"_{kind}_now")

        def spy(comp, batch, *rest, _real=real, _kind=kind):
            seen.append((_kind, batch))
            return _real(comp, batch, *rest)

        monkeypatch.setattr(tessera.torch, f"_{kind}_now", spy)
    return seen


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name", PLUGINS)
def test_vmap_matches_one_call_per_item(load, name, mode, batches):
    case = CASES[name]
    comp = load(name, mode)
    points = [case.point(s) for s in range(3)]
    _, const = tensors(case, points[0])
    batched = [torch.stack([torch.tensor(np.asarray(p[k]), dtype=F64) for p in points])
               for k in case.wrt]
    got = torch.vmap(func_of(comp, case, const))(*batched)
    for i, p in enumerate(points):
        want = comp.apply({**points[0], **{k: p[k] for k in case.wrt}})
        for j, o in enumerate(case.outs):
            np.testing.assert_allclose(got[j][i].numpy(), want[o], rtol=1e-12, atol=1e-14)
    # one batched run in the library, unless an output's shape depends on
    # values (linear's m): then one call per item
    if comp.schema.output_shapes_static:
        assert batches == [("apply", 3)]
    else:
        assert batches == [("apply", 0)] * 3


def test_nested_vmap_of_grad_runs_one_batch(load, batches):
    comp = load("rosenbrock")
    f = rosenbrock_value(comp)
    xs = torch.from_numpy(np.random.default_rng(0).normal(size=(2, 3, 4)))
    got = torch.vmap(torch.vmap(torch.func.grad(f)))(xs)
    assert batches == [("apply", 6), ("vjp", 6)]
    for idx in np.ndindex(2, 3):
        want = comp.vjp({"x": xs[idx].numpy(), "a": 1.0, "b": 100.0}, ["x"], ["value"],
                        {"value": 1.0})["x"]
        np.testing.assert_allclose(got[idx].numpy(), want, rtol=1e-12)
    # the batch axis elsewhere than first, and the gradient of a vmapped sum
    got = torch.vmap(f, in_dims=1)(xs[0].T.contiguous())
    want = [comp.apply({"x": xs[0, i].numpy(), "a": 1.0, "b": 100.0})["value"] for i in range(3)]
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12)
    g = torch.func.grad(lambda x: torch.vmap(f)(x).sum())(xs[0])
    np.testing.assert_allclose(g.numpy(), torch.vmap(torch.func.grad(f))(xs[0]).numpy())


def test_legacy_vectorized_autograd_fails_clearly(load):
    f = rosenbrock_value(load("rosenbrock"))
    x = torch.tensor([0.5, 1.5, 2.0], dtype=F64)
    with pytest.raises(TypeError, match="legacy vmap.*torch.func"):
        torch.autograd.functional.jacobian(f, x, vectorize=True)
    # without vectorize it works
    jac = torch.autograd.functional.jacobian(f, x)
    torch.testing.assert_close(jac, torch.tensor([-251.0, 401.0, -50.0], dtype=F64))
