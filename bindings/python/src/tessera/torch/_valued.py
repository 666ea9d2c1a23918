# SPDX-License-Identifier: MIT
"""``tessera.torch.apply`` for components with text or JSON fields.

Text inputs, and JSON inputs without tensors or arrays, pass through as
they are. Tensors (and arrays) inside lists and dicts of a JSON input are
operands of an autograd Function like array inputs: the backward pass is
the component's vjp at their paths ("weights.{a}", "layers.[0].k").
Outputs: array outputs as tensors; text and JSON outputs as the NumPy API
gives them (str; the decoded value, arrays inside as tensors).
Forward-mode AD and torch.func transforms are not available on this route.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from .. import _nesting, _values
from .._component import Component


def _numpy(t: Any) -> np.ndarray:
    if isinstance(t, torch.Tensor):
        return t.detach().cpu().numpy()
    return np.asarray(t)


def _tensors(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value)
    if isinstance(value, dict):
        return {k: _tensors(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tensors(v) for v in value]
    return value


class _Call(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, route: dict, *ops: torch.Tensor) -> tuple:
        ctx.route = route
        ctx.save_for_backward(*ops)
        out = route["comp"].apply(_inputs(route, tuple(_numpy(o) for o in ops)))
        route["values"] = {n: _values.pick(out, n) for n in route["value_outputs"]}
        return tuple(torch.from_numpy(np.asarray(_values.pick(out, n)))
                     for n in route["outputs"])

    @staticmethod
    def backward(ctx: Any, *grads: torch.Tensor | None) -> tuple:
        route = ctx.route
        ops = ctx.saved_tensors
        comp = route["comp"]
        names = route["names"]
        want = [k for k in route["diff_ops"] if ctx.needs_input_grad[k + 1]]
        seeds = {n: _numpy(g) for n, g in zip(route["outputs"], grads)
                 if g is not None and n in route["diff_outputs"]}
        result: list[Any] = [None] * len(ops)
        if want and seeds:
            got = comp.vjp(_inputs(route, tuple(_numpy(o) for o in ops)),
                           tuple(names[k] for k in want), tuple(seeds), seeds)
            for k in want:
                result[k] = torch.from_numpy(
                    np.asarray(got[names[k]], dtype=_numpy(ops[k]).dtype).reshape(ops[k].shape))
        return (None, *result)


def _inputs(route: dict, ops: tuple) -> dict:
    n = len(route["arrays"])
    out = dict(route["statics"])
    out.update(zip(route["arrays"], ops[:n]))
    for name, sk in route["skeletons"].items():
        out[name] = _values.fill_leaves(sk, ops[n:])
    return out


def apply(comp: Component, inputs: dict) -> dict:
    """The call for inputs by dotted name (checked)."""
    schema = comp.schema
    split = _values.split_inputs(
        schema, inputs,
        lambda value, f: value if isinstance(value, torch.Tensor)
        else torch.as_tensor(np.asarray(value, dtype=f.dtype)),
        lambda x: x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x)))
    statics, skeletons, arrays, ops, leaves, paths = split
    diff_json = {f.name for f in schema.inputs if f.kind == "json" and f.differentiable}
    names = tuple(arrays) + tuple(paths)
    outputs = tuple(f.name for f in schema.outputs if f.is_array)
    route = {
        "comp": comp, "statics": statics, "skeletons": skeletons, "arrays": tuple(arrays),
        "names": names, "outputs": outputs,
        "value_outputs": tuple(f.name for f in schema.outputs if not f.is_array),
        "diff_outputs": tuple(n for n in outputs if schema.output(n).differentiable),
        "diff_ops": tuple(k for k, n in enumerate(names)
                          if (k < len(arrays) and n in schema.differentiable_inputs)
                          or (k >= len(arrays) and n.split(".")[0] in diff_json)),
    }
    outs = _Call.apply(route, *ops, *leaves)
    flat: dict[str, Any] = dict(zip(outputs, outs))
    flat.update({n: _tensors(v) for n, v in route["values"].items()})
    return _nesting.nest(flat)
