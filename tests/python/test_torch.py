# SPDX-License-Identifier: MIT
"""Every bundled plugin as a torch.autograd.Function: values against the
reference, torch.autograd.gradcheck in reverse and forward mode, gradients
against finite differences and the reference, in-process and in worker mode."""

from __future__ import annotations

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
