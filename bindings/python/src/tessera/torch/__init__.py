# SPDX-License-Identifier: MIT
"""Tessera components in PyTorch's autograd.

    import torch, tessera, tessera.torch
    rosen = tessera.load("build/plugins/rosenbrock.so")
    x = torch.tensor([0.5, 1.5], dtype=torch.float64, requires_grad=True)
    value = tessera.torch.apply(rosen, {"x": x, "a": 1.0, "b": 100.0})["value"]
    value.backward()                                   # the plugin's vjp

:class:`ComponentFunction` is a ``torch.autograd.Function``: ``backward``
calls the plugin's vjp and ``jvp`` (forward-mode AD) its jvp, so
``torch.autograd.gradcheck`` passes with and without ``check_forward_ad``.
Tensors reach the plugin without a copy when they are contiguous CPU
tensors of the field's dtype (others are converted by NumPy's safe casting
rule, or refused), and outputs are tensors over the component's result
buffers, also without a copy. Every mode works the same way.

Non-differentiable fields behave as in Tesseract-JAX: a gradient asked of a
non-differentiable input, or a tangent given for one, raises ValueError.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from .. import _coerce
from .._component import Component, check_input_names

__all__ = ["apply", "ComponentFunction"]


def _numpy(t: torch.Tensor) -> np.ndarray:
    """A NumPy view of a CPU tensor (strided views included)."""
    try:
        return t.detach().numpy()
    except (RuntimeError, TypeError):
        if t.device.type != "cpu":
            raise TypeError(f"tessera: a tensor on {t.device}; components read CPU memory")
        return t.detach().resolve_conj().resolve_neg().numpy()


class _Plan:
    """What every call needs of a component's schema, computed once."""

    def __init__(self, component: Component) -> None:
        schema = component.schema
        self.inputs = schema.input_names
        self.outputs = schema.output_names
        # Outputs without gradients: not differentiable, or not floating point.
        self.constant = tuple(not f.differentiable or f.dtype.kind not in "fc"
                              for f in schema.outputs)


def _plan(component: Component) -> _Plan:
    plan = component.__dict__.get("_torch_plan")
    if plan is None:
        plan = component.__dict__["_torch_plan"] = _Plan(component)
    return plan


def _inputs(component: Component, tensors: tuple[torch.Tensor, ...]) -> dict[str, np.ndarray]:
    return {name: _numpy(t) for name, t in zip(_plan(component).inputs, tensors)}


def _not_differentiable(component: Component, name: str, what: str) -> ValueError:
    return ValueError(
        f"tessera: {what} input '{name}' of component '{component.name}', which is not "
        "differentiable. Pass it without requires_grad (or .detach() it).")


class ComponentFunction(torch.autograd.Function):
    """``apply(component, *inputs in schema order) -> outputs in schema order``."""

    # forward takes ctx itself: a separate setup_context would make every
    # apply bind arguments through inspect.signature (~10 us).
    @staticmethod
    def forward(ctx: Any, component: Component, *tensors: torch.Tensor) -> tuple:
        plan = _plan(component)
        out = component.apply(_inputs(component, tensors))
        outputs = tuple(torch.from_numpy(out[n]) for n in plan.outputs)
        ctx.component = component
        ctx.save_for_backward(*tensors)
        ctx.save_for_forward(*tensors)
        constant = [y for y, c in zip(outputs, plan.constant) if c]
        if constant:
            ctx.mark_non_differentiable(*constant)
        ctx.set_materialize_grads(False)
        return outputs

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        schema = component.schema
        wrt_in = []
        for f, needed in zip(schema.inputs, ctx.needs_input_grad[1:]):
            if needed:
                if not f.differentiable:
                    raise _not_differentiable(component, f.name, "a gradient was asked of")
                wrt_in.append(f.name)
        seeds = {f.name: _numpy(g) for f, g in zip(schema.outputs, grads)
                 if g is not None and f.differentiable}
        if not wrt_in:
            return (None,) * (1 + len(schema.inputs))
        if seeds:
            res = component.vjp(_inputs(component, ctx.saved_tensors), wrt_in, list(seeds), seeds)
            grad_of = {n: torch.from_numpy(v) for n, v in res.items()}
        else:
            grad_of = {}
        return (None, *[grad_of.get(f.name) for f in schema.inputs])

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        schema = component.schema
        seeds = {}
        for f, t in zip(schema.inputs, tangents[1:]):
            if t is not None:
                if not f.differentiable:
                    raise _not_differentiable(component, f.name, "a tangent was given for")
                seeds[f.name] = _numpy(t)
        outs = schema.differentiable_outputs
        if not seeds:
            return tuple(None for _ in schema.outputs)
        res = component.jvp(_inputs(component, ctx.saved_tensors), list(seeds), outs, seeds)
        return tuple(torch.from_numpy(res[f.name]) if f.name in res else None
                     for f in schema.outputs)


def _tensor(value: Any, field) -> torch.Tensor:
    """A constant input given as something other than a tensor."""
    return torch.from_numpy(_coerce.coerce(value, field.dtype.name, field.name))


def apply(component: Component, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """Call the component's apply inside autograd: ``{output: tensor}``.

    Inputs are tensors (or anything NumPy can read, taken as constants);
    gradients flow to differentiable inputs that require grad, through
    ``backward`` (vjp) and forward-mode AD (jvp)."""
    plan = _plan(component)
    if len(inputs) != len(plan.inputs) or any(n not in inputs for n in plan.inputs):
        check_input_names(component, inputs, "apply")
    args = [v if isinstance(v, torch.Tensor) else _tensor(v, component.schema.input(n))
            for n, v in ((n, inputs[n]) for n in plan.inputs)]
    outs = ComponentFunction.apply(component, *args)
    return dict(zip(plan.outputs, outs))
