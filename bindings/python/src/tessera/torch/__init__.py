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
tensors of the field's dtype (others are converted by Tesseract's casting
rule, NumPy's same_kind refusing values that do not fit, or refused); inputs
may be nested by the dots of field names and outputs come back nested, as
from ``Component.apply``. Outputs are tensors over the component's result
buffers, also without a copy. Every mode works the same way.

Non-differentiable fields behave as in Tesseract-JAX: a gradient asked of a
non-differentiable input, or a tangent given for one, raises ValueError.

Derivatives of derivatives. A gradient taken with ``create_graph=True``
stays in the graph, and is differentiable again: its backward is itself a
Function whose own backward is the component's hvp (along the inputs; the
Hessian of ``w . f`` is symmetric) and its jvp (along the cotangent), so
``torch.autograd.functional.hessian``, ``hvp``, ``vhp``, a gradient of a
gradient, ``gradgradcheck`` and ``torch.func.hessian`` work. The hvp is
the component's own, or the library's finite differences of its vjp
(``Component.hvp_source``). A JVP of a jvp along the inputs (forward over
forward, ``jacfwd(jacfwd(f))``) is one hvp per scalar output. A component
without hvp, forward over forward for an output that is not a scalar, and
third derivatives raise :class:`tessera.UnsupportedError` (a
``NotImplementedError``) naming the component and the inputs as soon as
anything asks for them. Nothing returns a silent zero. A second backward
that asks only for the derivative along the cotangent (the double-backward
trick of ``torch.autograd.functional.jvp``) also runs the hvp, whose result
autograd then drops: a Function cannot tell which of its inputs' gradients
the graph will use.

``torch.func``: ``grad``, ``vjp``, ``jvp`` (forward mode through the
component's jvp), ``jacrev``, ``jacfwd`` and ``vmap`` work. ``vmap`` runs a
leading batch axis through the library (``tsr_call_run_batch``, split over
the workers in worker mode), or one call per item when an output's shape
depends on values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from .. import _coerce, _errors, _nesting
from .._component import Component, check_input_names

__all__ = ["apply", "ComponentFunction"]


def __dir__() -> list[str]:
    # What the module imports for its own use (jax, np, typing names...)
    # is not part of it: dir() and completion show the public names only.
    return sorted(__all__)


def _numpy(t: torch.Tensor) -> np.ndarray:
    """A NumPy view of a CPU tensor (strided views included)."""
    try:
        return t.detach().numpy()
    except (RuntimeError, TypeError):
        if t.device.type != "cpu":
            raise TypeError(f"tessera: a tensor on {t.device}; components read CPU memory")
        if re.search(r"\bBatched\b", str(torch._C._dispatch_keys(t))):
            raise TypeError(
                "tessera: a tensor batched by torch's legacy vmap (torch.autograd.functional's "
                "jacobian or hessian with vectorize=True, autograd.grad with "
                "is_grads_batched=True) cannot reach a component: use vectorize=False, or "
                "torch.func (jacrev, jacfwd, vmap), which batch through the component") from None
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
        self.inexact_inputs = tuple(f.dtype.kind in "fc" for f in schema.inputs)
        # Whether the library can size a batch of apply/jvp results ahead.
        self.batchable = schema.output_shapes_static
        # Dotted field names: inputs may come nested, outputs go back nested.
        self.nested = _nesting.is_nested(self.inputs) or _nesting.is_nested(self.outputs)


def _plan(component: Component) -> _Plan:
    plan = component.__dict__.get("_torch_plan")
    if plan is None:
        plan = component.__dict__["_torch_plan"] = _Plan(component)
    return plan


def _inputs(component: Component, tensors: Sequence[torch.Tensor | None]) -> dict[str, np.ndarray]:
    # None: an input left out, which the library fills in (its default) or
    # passes absent (an optional input).
    return {name: _numpy(t) for name, t in zip(_plan(component).inputs, tensors)
            if t is not None}


def _not_differentiable(component: Component, name: str, what: str) -> ValueError:
    return ValueError(
        f"tessera: {what} input '{name}' of component '{component.name}', which is not "
        "differentiable. Pass it without requires_grad (or .detach() it).")


def _which(names: Sequence[str]) -> str:
    return (f"input{'s' if len(names) > 1 else ''} " + ", ".join(f"'{n}'" for n in names)
            if names else "its inputs")


def _second_order(component: Component, names: Sequence[str]) -> _errors.TesseraError:
    """A second derivative the component has no hvp for."""
    return _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{component.name}': second-order derivatives are not available: a "
        f"derivative of its vjp or jvp with respect to {_which(names)} was asked (a Hessian, "
        "the gradient of a gradient taken with create_graph=True, gradgradcheck, "
        "torch.func.hessian), which needs its hvp, and it has none: no native hvp "
        "endpoint, and no vjp or fd_method from which the library could serve one by "
        "finite differences (or it was loaded with hvp_fallback=off)")


def _forward_over_forward(component: Component, names: Sequence[str],
                          output: str) -> _errors.TesseraError:
    return _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{component.name}': a JVP of its jvp with respect to {_which(names)} "
        "(forward over forward, e.g. torch.func.jacfwd(torch.func.jacfwd(f))) is one hvp "
        f"per scalar output, and output '{output}' is not a scalar: use torch.func.hessian "
        "or jacfwd(jacrev(f)), which differentiate its vjp")


def _third_order(component: Component, names: Sequence[str]) -> _errors.TesseraError:
    return _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{component.name}': third-order derivatives are not available: a "
        f"derivative of its hvp with respect to {_which(names)} was asked")


def _has_hvp(component: Component) -> bool:
    return component.has_endpoint("hvp")


def _functorch_active() -> bool:
    return torch._C._are_functorch_transforms_active()


def _in_graph(tensors: Sequence[torch.Tensor]) -> bool:
    """Whether a derivative computed now must itself be differentiable:
    under torch.func, or with grad mode on (backward with create_graph=True)
    and something that requires grad."""
    if _functorch_active():
        return True
    return torch.is_grad_enabled() and any(t is not None and t.requires_grad for t in tensors)


# ---- the endpoints, run now on CPU tensors ----------------------------------

def _outputs(res: Sequence[np.ndarray]) -> tuple[torch.Tensor, ...]:
    return tuple(torch.from_numpy(r) for r in res)


def _apply_now(component: Component, batch: int,
               tensors: Sequence[torch.Tensor]) -> tuple[torch.Tensor, ...]:
    ins = _inputs(component, tensors)
    if batch or _plan(component).nested:
        # In the library's order (apply would nest dotted outputs).
        return _outputs(component._call("apply", (), (), ins, None, batch))
    out = component.apply(ins)
    return tuple(torch.from_numpy(out[n]) for n in _plan(component).outputs)


def _vjp_now(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
             inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    """Cotangents of wrt_in (in that order) for cotangents of wrt_out."""
    return _outputs(component._call("vjp", wrt_in, wrt_out, _inputs(component, inputs),
                                    {n: _numpy(s) for n, s in zip(wrt_out, seeds)}, batch))


def _jvp_now(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
             inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    """Tangents of wrt_out (in that order) for tangents of wrt_in."""
    return _outputs(component._call("jvp", wrt_in, wrt_out, _inputs(component, inputs),
                                    {n: _numpy(s) for n, s in zip(wrt_in, seeds)}, batch))


def _hvp_now(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
             inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    """hvp results for wrt_in; seeds: cotangents of wrt_out, then tangents
    of wrt_in."""
    ws, ts = seeds[:len(wrt_out)], seeds[len(wrt_out):]
    return _outputs(component._call("hvp", wrt_in, wrt_out, _inputs(component, inputs),
                                    ({n: _numpy(w) for n, w in zip(wrt_out, ws)},
                                     {n: _numpy(t) for n, t in zip(wrt_in, ts)}), batch))


# ---- first derivatives, differentiable where they are linear ----------------

def _guard(component: Component, inputs: Sequence[torch.Tensor], order: int = 2) -> tuple:
    """The inputs through _Guard (floating ones): any derivative that
    reaches them raises, a second derivative (a component without hvp)
    or a third (from an hvp)."""
    plan = _plan(component)
    guard = tuple(inexact and t is not None for t, inexact in zip(inputs, plan.inexact_inputs))
    names = tuple(n for n, g in zip(plan.inputs, guard) if g)
    floats = [t for t, g in zip(inputs, guard) if g]
    guarded = iter(_Guard.apply(component, names, order, *floats) if floats else ())
    return tuple(next(guarded) if g else t for t, g in zip(inputs, guard))


def _curved(component: Component, inputs: Sequence[torch.Tensor]) -> tuple:
    """The inputs as a vjp or jvp in the graph takes them: as they are when
    the component has an hvp (their derivative), else through _Guard."""
    return tuple(inputs) if _has_hvp(component) else _guard(component, inputs)


def _vjp(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
         inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    if _in_graph((*inputs, *seeds)):
        return _Vjp.apply(component, batch, wrt_in, wrt_out, *_curved(component, inputs),
                          *seeds)
    return _vjp_now(component, batch, wrt_in, wrt_out, inputs, seeds)


def _jvp(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
         inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    if _in_graph((*inputs, *seeds)):
        return _Jvp.apply(component, batch, wrt_in, wrt_out, *_curved(component, inputs),
                          *seeds)
    return _jvp_now(component, batch, wrt_in, wrt_out, inputs, seeds)


def _hvp(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
         inputs: Sequence[torch.Tensor], seeds: Sequence[torch.Tensor]) -> tuple:
    if _in_graph((*inputs, *seeds)):
        n_w = len(wrt_out)
        ws = _Guard.apply(component, tuple(f"cotangent of '{o}'" for o in wrt_out), 3,
                          *seeds[:n_w])
        return _Hvp.apply(component, batch, wrt_in, wrt_out, *_guard(component, inputs, 3),
                          *ws, *seeds[n_w:])
    return _hvp_now(component, batch, wrt_in, wrt_out, inputs, seeds)


def _hvp_rows(component: Component, batch: int, inputs: Sequence[torch.Tensor],
              wrt_out: tuple, ws: Sequence[torch.Tensor], rows: tuple, moved: dict) -> tuple:
    """hvp(x, w, dx) for the inputs ``rows`` (in that order): the hvp_inputs
    are the rows, then the moved inputs that are not rows; an input that
    does not move gets a zero tangent."""
    if not _has_hvp(component):
        raise _second_order(component, tuple(moved))
    cols = rows + tuple(n for n in moved if n not in rows)
    at = dict(zip(_plan(component).inputs, inputs))
    tangents = [moved[n] if n in moved else torch.zeros_like(at[n]) for n in cols]
    return _hvp(component, batch, cols, wrt_out, inputs, (*ws, *tangents))[:len(rows)]


def _moving(component: Component, tensors: Sequence[Any]) -> dict:
    """{input name: tangent} of the inputs given one; a non-differentiable
    one raises."""
    moved = {}
    for f, t in zip(component.schema.inputs, tensors):
        if t is None:
            continue
        if not f.differentiable:
            raise _not_differentiable(component, f.name, "a tangent was given for")
        moved[f.name] = t
    return moved


def _needed(component: Component, needs: Sequence[bool]) -> tuple:
    """The differentiable inputs whose gradient autograd may ask for."""
    return tuple(f.name for f, needed in zip(component.schema.inputs, needs)
                 if needed and f.differentiable)


def _sum(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    return b if a is None else a if b is None else a + b


# ---- the rules of apply, shared by both Function classes --------------------

def _setup(ctx: Any, component: Component, batch: int, tensors: Sequence[torch.Tensor],
           outputs: Sequence[torch.Tensor]) -> None:
    ctx.component = component
    ctx.batch = batch
    ctx.save_for_backward(*tensors)
    ctx.save_for_forward(*tensors)
    constant = [y for y, c in zip(outputs, _plan(component).constant) if c]
    if constant:
        ctx.mark_non_differentiable(*constant)
    ctx.set_materialize_grads(False)


def _backward(ctx: Any, needs: Sequence[bool], grads: Sequence[torch.Tensor | None]) -> tuple:
    """Gradients of the inputs (None where none is needed)."""
    component: Component = ctx.component
    schema = component.schema
    wrt_in = []
    for f, needed in zip(schema.inputs, needs):
        if needed:
            if not f.differentiable:
                raise _not_differentiable(component, f.name, "a gradient was asked of")
            wrt_in.append(f.name)
    seeds = [(f.name, g) for f, g in zip(schema.outputs, grads)
             if g is not None and f.differentiable]
    if not wrt_in or not seeds:
        return (None,) * len(schema.inputs)
    wrt_out = tuple(n for n, _ in seeds)
    res = _vjp(component, ctx.batch, tuple(wrt_in), wrt_out, ctx.saved_tensors,
               [g for _, g in seeds])
    grad_of = dict(zip(wrt_in, res))
    return tuple(grad_of.get(f.name) for f in schema.inputs)


def _forward_ad(ctx: Any, tangents: Sequence[torch.Tensor | None]) -> tuple:
    """Tangents of the outputs (None for those without one)."""
    component: Component = ctx.component
    schema = component.schema
    wrt_in, seeds = [], []
    for f, t in zip(schema.inputs, tangents):
        if t is not None:
            if not f.differentiable:
                raise _not_differentiable(component, f.name, "a tangent was given for")
            wrt_in.append(f.name)
            seeds.append(t)
    if not seeds:
        return tuple(None for _ in schema.outputs)
    outs = schema.differentiable_outputs
    res = dict(zip(outs, _jvp(component, ctx.batch, tuple(wrt_in), outs, ctx.saved_tensors,
                              seeds)))
    return tuple(res.get(f.name) for f in schema.outputs)


# ---- vmap: a leading batch axis run by the library --------------------------

def _batched(info: Any, in_dims: Sequence[int | None], tensors: Sequence[torch.Tensor],
             batch: int) -> tuple[list[torch.Tensor], int]:
    """Every tensor with the vmapped axis first (broadcast where it has
    none), folded into an existing batch axis. Returns them and the new
    batch size."""
    n = info.batch_size
    moved = []
    for t, d in zip(tensors, in_dims):
        if t is None:  # left out: every item takes the default or goes without
            moved.append(t)
            continue
        t = t.movedim(d, 0) if d is not None else t.expand(n, *t.shape)
        if batch:
            t = t.reshape(n * batch, *t.shape[2:])
        moved.append(t)
    return moved, n * batch if batch else n


def _unbatched(outs: Sequence[torch.Tensor], n: int, batch: int) -> tuple:
    if batch:
        return tuple(o.reshape(n, batch, *o.shape[1:]) for o in outs)
    return tuple(outs)


def _per_item(info: Any, in_dims: Sequence[int | None], tensors: Sequence[torch.Tensor],
              call: Any) -> tuple:
    """One call per item (output shapes that depend on values), stacked."""
    items = [t.movedim(d, 0) if d is not None else None for t, d in zip(tensors, in_dims)]
    rows = [call([t if it is None else it[i] for t, it in zip(tensors, items)])
            for i in range(info.batch_size)]
    return tuple(torch.stack(col) for col in zip(*rows))


def _vmap_rule(fn: Any, info: Any, in_dims: Sequence[int | None], head: tuple,
               tensors: Sequence[torch.Tensor], batchable: bool) -> tuple:
    """vmap of fn.apply(component, batch, *rest_of_head, *tensors)."""
    component, batch = head[0], head[1]
    dims = in_dims[len(head):]
    if batchable or batch:
        moved, size = _batched(info, dims, tensors, batch)
        outs = fn.apply(component, size, *head[2:], *moved)
        outs = _unbatched(outs, info.batch_size, batch)
    else:
        outs = _per_item(info, dims, tensors, lambda ts: fn.apply(*head, *ts))
    return outs, tuple(0 for _ in outs)


# ---- the Functions ------------------------------------------------------------

class _Apply(torch.autograd.Function):
    """apply, for torch.func (setup_context and vmap): ``apply(component,
    batch, *inputs)``, batch > 0 for a leading batch axis of that size."""

    @staticmethod
    def forward(component: Component, batch: int, *tensors: torch.Tensor) -> tuple:
        return _apply_now(component, batch, tensors)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        _setup(ctx, inputs[0], inputs[1], inputs[2:], output)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        return (None, None, *_backward(ctx, ctx.needs_input_grad[2:], grads))

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        return _forward_ad(ctx, tangents[2:])

    @staticmethod
    def vmap(info: Any, in_dims: tuple, component: Component, batch: int,
             *tensors: torch.Tensor) -> tuple:
        return _vmap_rule(_Apply, info, in_dims, (component, batch), tensors,
                          _plan(component).batchable)


def _keep_linear_context(ctx: Any, inputs: tuple) -> None:
    """What _Vjp, _Jvp and _Hvp keep: ``(component, batch, wrt_in, wrt_out,
    *inputs, *seeds)`` -> the first four on ctx, the inputs and the seeds
    saved for both modes (the seeds are what the result is linear in; the
    second derivatives along the inputs need them)."""
    ctx.component, ctx.batch, ctx.wrt_in, ctx.wrt_out = inputs[:4]
    ctx.save_for_backward(*inputs[4:])
    ctx.save_for_forward(*inputs[4:])
    ctx.set_materialize_grads(False)


class _Vjp(torch.autograd.Function):
    """``apply(component, batch, wrt_in, wrt_out, *inputs, *cotangents of
    wrt_out)`` -> cotangents of wrt_in. Linear in the cotangents (its
    derivative there is the component's jvp); the inputs come through
    _Guard, which refuses a derivative with respect to them."""

    @staticmethod
    def forward(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
                *tensors: torch.Tensor) -> tuple:
        n = len(component.schema.inputs)
        return _vjp_now(component, batch, wrt_in, wrt_out, tensors[:n], tensors[n:])

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        _keep_linear_context(ctx, inputs)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        n = len(component.schema.inputs)
        inputs, ws = ctx.saved_tensors[:n], ctx.saved_tensors[n:]
        given = {name: g for name, g in zip(ctx.wrt_in, grads) if g is not None}
        head: tuple = (None,) * n
        # Along the inputs: the Hessian of w . f, symmetric, times the
        # incoming gradient (hvp). Without an hvp the inputs came through
        # _Guard, which raises when asked.
        rows = _needed(component, ctx.needs_input_grad[4:4 + n])
        if given and rows and _has_hvp(component):
            got = dict(zip(rows, _hvp_rows(component, ctx.batch, inputs, ctx.wrt_out, ws, rows,
                                           given)))
            head = tuple(got.get(f.name) for f in component.schema.inputs)
        tail: tuple = tuple(None for _ in ctx.wrt_out)
        if given and any(ctx.needs_input_grad[4 + n:]):
            tail = _jvp(component, ctx.batch, tuple(given), ctx.wrt_out, inputs,
                        list(given.values()))
        return (None,) * 4 + (*head, *tail)

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        n = len(component.schema.inputs)
        inputs, ws = ctx.saved_tensors[:n], ctx.saved_tensors[n:]
        out: list = [None] * len(ctx.wrt_in)
        moved = _moving(component, tangents[4:4 + n])
        if moved:
            out = list(_hvp_rows(component, ctx.batch, inputs, ctx.wrt_out, ws, ctx.wrt_in,
                                 moved))
        given = [(name, t) for name, t in zip(ctx.wrt_out, tangents[4 + n:]) if t is not None]
        if given:
            res = _vjp(component, ctx.batch, ctx.wrt_in, tuple(n_ for n_, _ in given), inputs,
                       [t for _, t in given])
            out = [_sum(a, b) for a, b in zip(out, res)]
        return tuple(out)

    @staticmethod
    def vmap(info: Any, in_dims: tuple, component: Component, batch: int, wrt_in: tuple,
             wrt_out: tuple, *tensors: torch.Tensor) -> tuple:
        # The results of a vjp are shaped like inputs: a batch can always be sized.
        return _vmap_rule(_Vjp, info, in_dims, (component, batch, wrt_in, wrt_out), tensors,
                          True)


class _Jvp(torch.autograd.Function):
    """``apply(component, batch, wrt_in, wrt_out, *inputs, *tangents of
    wrt_in)`` -> tangents of wrt_out. Linear in the tangents (its transpose
    is the component's vjp); the inputs come through _Guard."""

    @staticmethod
    def forward(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
                *tensors: torch.Tensor) -> tuple:
        n = len(component.schema.inputs)
        return _jvp_now(component, batch, wrt_in, wrt_out, tensors[:n], tensors[n:])

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        _keep_linear_context(ctx, inputs)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        n = len(component.schema.inputs)
        inputs, vs = ctx.saved_tensors[:n], ctx.saved_tensors[n:]
        given = [(name, g) for name, g in zip(ctx.wrt_out, grads) if g is not None]
        head: tuple = (None,) * n
        # Along the inputs: the gradient of g . (J v) is hvp(x, g, v).
        rows = _needed(component, ctx.needs_input_grad[4:4 + n])
        if given and rows and _has_hvp(component):
            got = dict(zip(rows, _hvp_rows(component, ctx.batch, inputs,
                                           tuple(n_ for n_, _ in given),
                                           [g for _, g in given], rows,
                                           dict(zip(ctx.wrt_in, vs)))))
            head = tuple(got.get(f.name) for f in component.schema.inputs)
        tail: tuple = tuple(None for _ in ctx.wrt_in)
        if given and any(ctx.needs_input_grad[4 + n:]):
            tail = _vjp(component, ctx.batch, ctx.wrt_in, tuple(n_ for n_, _ in given), inputs,
                        [g for _, g in given])
        return (None,) * 4 + (*head, *tail)

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        component: Component = ctx.component
        n = len(component.schema.inputs)
        inputs, vs = ctx.saved_tensors[:n], ctx.saved_tensors[n:]
        out: list = [None] * len(ctx.wrt_out)
        moved = _moving(component, tangents[4:4 + n])
        if moved:
            # Forward over forward: for a scalar output o, sum_k (H_o dx)_k . v_k,
            # one hvp with cotangent 1.
            if not _has_hvp(component):
                raise _second_order(component, tuple(moved))
            lead = (ctx.batch,) if ctx.batch else ()
            for k, name in enumerate(ctx.wrt_out):
                field = component.schema.output(name)
                if field.dims != ():
                    raise _forward_over_forward(component, tuple(moved), name)
                one = torch.from_numpy(np.ones(lead, field.dtype))
                rows = _hvp_rows(component, ctx.batch, inputs, (name,), [one], ctx.wrt_in,
                                 moved)
                out[k] = sum((r * v).reshape(*lead, -1).sum(-1) for r, v in zip(rows, vs))
        given = [(name, t) for name, t in zip(ctx.wrt_in, tangents[4 + n:]) if t is not None]
        if given:
            res = _jvp(component, ctx.batch, tuple(n_ for n_, _ in given), ctx.wrt_out, inputs,
                       [t for _, t in given])
            out = [_sum(a, b) for a, b in zip(out, res)]
        return tuple(out)

    @staticmethod
    def vmap(info: Any, in_dims: tuple, component: Component, batch: int, wrt_in: tuple,
             wrt_out: tuple, *tensors: torch.Tensor) -> tuple:
        return _vmap_rule(_Jvp, info, in_dims, (component, batch, wrt_in, wrt_out), tensors,
                          _plan(component).batchable)


class _Hvp(torch.autograd.Function):
    """``apply(component, batch, wrt_in, wrt_out, *inputs, *cotangents of
    wrt_out, *tangents of wrt_in)`` -> hvp results for wrt_in. Linear in
    the tangents, and symmetric there: its derivative and its transpose
    along them are hvp calls again. The inputs and cotangents come through
    _Guard: a derivative along them is a third derivative."""

    @staticmethod
    def forward(component: Component, batch: int, wrt_in: tuple, wrt_out: tuple,
                *tensors: torch.Tensor) -> tuple:
        n = len(component.schema.inputs)
        return _hvp_now(component, batch, wrt_in, wrt_out, tensors[:n], tensors[n:])

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        _keep_linear_context(ctx, inputs)

    @staticmethod
    def _again(ctx: Any, seeds: Sequence[torch.Tensor | None]) -> tuple:
        component: Component = ctx.component
        n, n_w = len(component.schema.inputs), len(ctx.wrt_out)
        inputs, ws = ctx.saved_tensors[:n], ctx.saved_tensors[n:n + n_w]
        given = {name: t for name, t in zip(ctx.wrt_in, seeds) if t is not None}
        if not given:
            return tuple(None for _ in ctx.wrt_in)
        return _hvp_rows(component, ctx.batch, inputs, ctx.wrt_out, ws, ctx.wrt_in, given)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        n = len(ctx.component.schema.inputs)
        return ((None,) * (4 + n + len(ctx.wrt_out))) + tuple(_Hvp._again(ctx, grads))

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        n = len(ctx.component.schema.inputs)
        return _Hvp._again(ctx, tangents[4 + n + len(ctx.wrt_out):])

    @staticmethod
    def vmap(info: Any, in_dims: tuple, component: Component, batch: int, wrt_in: tuple,
             wrt_out: tuple, *tensors: torch.Tensor) -> tuple:
        return _vmap_rule(_Hvp, info, in_dims, (component, batch, wrt_in, wrt_out), tensors,
                          True)


class _Guard(torch.autograd.Function):
    """The identity on a component's inputs where they enter one of its
    derivatives: a derivative through it raises UnsupportedError (autograd
    runs it only when that derivative is asked for): order 2, a second
    derivative of a component without hvp; order 3, a derivative of an
    hvp."""

    @staticmethod
    def forward(component: Component, names: tuple, order: int, *tensors: torch.Tensor) -> tuple:
        return tuple(t.view_as(t) for t in tensors)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: tuple) -> None:
        ctx.component, ctx.names, ctx.order = inputs[:3]

    @staticmethod
    def _error(ctx: Any, asked: Sequence[str]) -> _errors.TesseraError:
        return (_third_order if ctx.order == 3 else _second_order)(ctx.component, asked)

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        raise _Guard._error(ctx, [n for n, needed in zip(ctx.names, ctx.needs_input_grad[3:])
                                  if needed])

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        raise _Guard._error(ctx, [n for n, t in zip(ctx.names, tangents[3:]) if t is not None])

    @staticmethod
    def vmap(info: Any, in_dims: tuple, component: Component, names: tuple, order: int,
             *tensors: torch.Tensor) -> tuple:
        # Stays a _Guard for the transforms outside this vmap.
        return _Guard.apply(component, names, order, *tensors), tuple(in_dims[3:])


class ComponentFunction(torch.autograd.Function):
    """``apply(component, *inputs in schema order) -> outputs in schema order``,
    None for an input left out (its default, or absent if optional).

    Under ``torch.func`` transforms the call goes through a twin Function
    that has ``setup_context`` and a ``vmap`` rule; outside them this one
    is used, as binding arguments for ``setup_context`` costs ~10 us a call.
    """

    @classmethod
    def apply(cls, component: Component, *tensors: Any) -> tuple:  # type: ignore[override]
        if _functorch_active():
            return _Apply.apply(component, 0, *tensors)
        return super().apply(component, *tensors)

    @staticmethod
    def forward(ctx: Any, component: Component, *tensors: torch.Tensor) -> tuple:
        outputs = _apply_now(component, 0, tensors)
        _setup(ctx, component, 0, tensors, outputs)
        return outputs

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        return (None, *_backward(ctx, ctx.needs_input_grad[1:], grads))

    @staticmethod
    def jvp(ctx: Any, *tangents: torch.Tensor | None) -> tuple:
        return _forward_ad(ctx, tangents[1:])


def _tensor(value: Any, field, component: Component) -> torch.Tensor:
    """A constant input given as something other than a tensor."""
    return torch.from_numpy(_coerce.coerce(value, field.dtype.name, field.name, "input",
                                           component, "apply"))


def apply(component: Component, inputs: Mapping[str, Any]) -> dict[str, torch.Tensor]:
    """Call the component's apply inside autograd: ``{output: tensor}``.

    Inputs are tensors (or anything NumPy can read, taken as constants).
    An input with a default may be left out (it takes the default), and so
    may an optional one (the plugin sees it absent); neither gets a
    gradient. Gradients flow to differentiable inputs that require grad,
    through ``backward`` (vjp) and forward-mode AD (jvp). Works under ``torch.func``
    transforms (grad, vjp, jvp, jacrev, jacfwd, vmap); second derivatives
    raise :class:`tessera.UnsupportedError`.

    Text and JSON inputs pass through as values (tensors inside JSON
    inputs get gradients through the component's vjp at their paths);
    text and JSON outputs come back as values (see ``_valued``)."""
    if component.schema.has_values:
        from . import _valued
        return _valued.apply(component,
                             check_input_names(component, inputs, "apply", allow_left_out=True))
    plan = _plan(component)
    if plan.nested or len(inputs) != len(plan.inputs) or any(n not in inputs
                                                             for n in plan.inputs):
        inputs = check_input_names(component, inputs, "apply", allow_left_out=True)
    # A left-out input goes as None (ComponentFunction takes it so).
    args = [v if isinstance(v, torch.Tensor) or n not in inputs
            else _tensor(v, component.schema.input(n), component)
            for n, v in ((n, inputs.get(n)) for n in plan.inputs)]
    outs = ComponentFunction.apply(component, *args)
    out = dict(zip(plan.outputs, outs))
    return _nesting.nest(out) if plan.nested else out
