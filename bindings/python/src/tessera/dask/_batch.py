# SPDX-License-Identifier: MIT
"""A leading batch axis split into chunks, one Dask task per chunk: the
cluster's counterpart of ``tsr_call_run_batch``. NumPy inputs are sliced
here and the chunks' results gathered and joined; dask.array inputs keep
their own chunks and give lazy dask arrays."""

from __future__ import annotations

import functools
import uuid
from collections.abc import Mapping
from typing import Any, Protocol

import numpy as np

from .. import _errors, _nesting
from .._component import _names
from .._schema import Schema, ShapeDtype
from . import _progress
from ._failures import explained
from ._spec import ComponentSpec
from ._tasks import call_chunk


class Target(Protocol):
    """What a batch needs of the component it runs on: a
    ``ClusterComponent``, which calls :func:`run` (this module sits below
    it and knows it only by this much)."""

    client: Any            # distributed.Client
    spec: ComponentSpec

    @property
    def schema(self) -> Schema: ...

    def abstract_eval(self, inputs: Mapping[str, Any]) -> dict: ...

    def default_chunks(self) -> int: ...


def _is_lazy(value: Any) -> bool:
    return type(value).__module__.startswith("dask.array")


class Split:
    """Which values have the batch axis (one dimension more than their
    field) and which are the same for every item (the field's rank)."""

    def __init__(self, where: str, what: str, values: Mapping[str, Any],
                 fields: Mapping[str, Any]) -> None:
        self.batched: dict[str, Any] = {}
        self.shared: dict[str, Any] = {}
        self.size: int | None = None
        self.first = ""
        section = {"input": "inputs", "tangent": "tangent_vector",
                   "cotangent": "cotangent_vector"}[what]
        for name, value in values.items():
            loc = _errors.field_loc(section, name)
            field = fields.get(name)
            if field is None:
                kind = "outputs" if what == "cotangent" else "inputs"
                raise _errors.UnknownFieldError(
                    _errors.TSR_E_UNKNOWN_FIELD,
                    f"{where}: {what} '{name}' is not one of the {kind} ({', '.join(fields)})",
                    loc)
            if getattr(field, "kind", "array") != "array" or field.rank is None:
                # Text and JSON values, and arrays of any rank (whose
                # batch axis cannot be told): the same for every item.
                self.shared[name] = value
                continue
            value = value if _is_lazy(value) or hasattr(value, "ndim") else np.asarray(value)
            if value.ndim == field.rank:
                self.shared[name] = value
                continue
            if value.ndim != field.rank + 1:
                raise _errors.ShapeError(
                    _errors.TSR_E_SHAPE,
                    f"{where}: {what} '{name}' has rank {value.ndim}; its field has rank "
                    f"{field.rank}: give rank {field.rank} (the same for every item) or "
                    f"{field.rank + 1} (a leading batch axis)", loc)
            if self.size is None:
                self.size, self.first = int(value.shape[0]), name
            elif value.shape[0] != self.size:
                raise _errors.ShapeError(
                    _errors.TSR_E_SHAPE,
                    f"{where}: {what} '{name}' has a batch axis of {value.shape[0]}, "
                    f"'{self.first}' one of {self.size}", loc)
            self.batched[name] = value

    def item_spec(self, name: str) -> ShapeDtype:
        value = self.batched.get(name)
        if value is not None:
            return ShapeDtype(tuple(value.shape[1:]), np.dtype(value.dtype))
        value = self.shared[name]
        return ShapeDtype(tuple(value.shape), np.dtype(value.dtype))


def _unpack(endpoint: str, args: tuple) -> tuple[tuple, tuple, dict]:
    if endpoint == "apply":
        return (), (), {}
    ins = _names(args[0], f"{endpoint}_inputs" if endpoint != "jacobian" else "jac_inputs")
    outs = _names(args[1], f"{endpoint}_outputs" if endpoint != "jacobian" else "jac_outputs")
    return ins, outs, dict(args[2]) if endpoint in ("jvp", "vjp") else {}


def run(cc: Target, endpoint: str, inputs: dict, args: tuple, chunks: int | None,
        retries: int, progress: bool = False) -> dict:
    schema = cc.schema
    where = f"component '{cc.spec.label}', endpoint '{endpoint}': batch"
    wrt_in, wrt_out, seeds = _unpack(endpoint, args)
    if _nesting.is_nested(schema.input_names):
        inputs = _nesting.flatten(schema.input_names, inputs, label=where + ": ")
    ins = Split(where, "input", inputs, {f.name: f for f in schema.inputs})
    # Inputs with a default and optional ones may be left out: the worker's
    # library fills them in for every item.
    for f in schema.inputs:
        if f.required and f.name not in inputs:
            raise _errors.MissingError(_errors.TSR_E_MISSING,
                                       f"{where}: input '{f.name}' is missing",
                                       _errors.field_loc("inputs", f.name))
    seed_fields = schema.inputs if endpoint == "jvp" else schema.outputs
    sds = Split(where, "tangent" if endpoint == "jvp" else "cotangent", seeds,
                {f.name: f for f in seed_fields})
    size = ins.size if ins.size is not None else sds.size
    if size is None:
        raise _errors.ShapeError(
            _errors.TSR_E_SHAPE,
            f"{where}: no input has a leading batch axis (one dimension more than its field)")
    if sds.size is not None and sds.size != size:
        raise _errors.ShapeError(
            _errors.TSR_E_SHAPE,
            f"{where}: '{sds.first}' has a batch axis of {sds.size}, the inputs one of {size}")
    call = functools.partial(call_chunk, cc.spec, endpoint, wrt_in, wrt_out)
    lazy = [v for v in (*ins.batched.values(), *sds.batched.values()) if _is_lazy(v)]
    if lazy:
        out = _lazy(cc, call, endpoint, wrt_in, wrt_out, ins, sds, lazy[0], retries)
    else:
        out = _eager(cc, call, endpoint, ins, sds, size, chunks or cc.default_chunks(), retries,
                     progress)
    if endpoint == "jacobian":
        return {o: {i: out[(o, i)] for i in wrt_in} for o in wrt_out}
    return _nesting.nest(out) if endpoint == "apply" else out


def _bounds(size: int, chunks: int) -> list[tuple[int, int]]:
    edges = np.linspace(0, size, min(size, max(1, chunks)) + 1).astype(int)
    return list(zip(edges[:-1].tolist(), edges[1:].tolist()))


def _eager(cc, call, endpoint: str, ins: Split, sds: Split, size: int, chunks: int,
           retries: int, progress: bool = False) -> dict:
    bounds = _bounds(size, chunks)
    token = uuid.uuid4().hex[:12]
    label = f"tessera-{cc.spec.label}-{endpoint}-{token}"
    keys = [f"{label}-{a}:{b}" for a, b in bounds]
    futures = cc.client.map(
        call,
        [{n: v[a:b] for n, v in ins.batched.items()} for a, b in bounds],
        [ins.shared] * len(bounds),
        [{n: v[a:b] for n, v in sds.batched.items()} for a, b in bounds],
        [sds.shared] * len(bounds),
        [b - a for a, b in bounds],
        [f"items {a}:{b} of the batch" for a, b in bounds],
        key=keys, pure=False, retries=retries)
    _progress.follow(futures, progress)
    try:
        parts = cc.client.gather(futures)
    except Exception as exc:
        raise explained(exc, cc.spec.label) from None
    return {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}


def _result_specs(cc, endpoint: str, wrt_in, wrt_out, ins: Split) -> dict:
    """Each result's shape and dtype for one item."""
    schema = cc.schema
    if endpoint == "vjp":
        return {n: (ins.item_spec(n).shape, schema.input(n).dtype) for n in wrt_in}
    out = _nesting.flatten_tree(
        cc.abstract_eval({n: ins.item_spec(n) for n in schema.input_names
                          if n in ins.batched or n in ins.shared}))
    if endpoint == "apply":
        return out
    if endpoint == "jvp":
        return {n: out[n] for n in wrt_out}
    return {(o, i): (tuple(out[o][0]) + ins.item_spec(i).shape, out[o][1])
            for o in wrt_out for i in wrt_in}


def _lazy(cc, call, endpoint: str, wrt_in, wrt_out, ins: Split, sds: Split, leader,
          retries: int) -> dict:
    import dask
    import dask.array as da

    steps = leader.chunks[0]
    edges = np.cumsum((0, *steps)).tolist()
    bounds = list(zip(edges[:-1], edges[1:]))

    def pieces(values: dict) -> list[dict]:
        # Every dask array cut where the leader is, and whole along its
        # other axes, so that block k is chunk k.
        lined = {n: v.rechunk({0: steps, **{a: -1 for a in range(1, v.ndim)}})
                 if _is_lazy(v) else v for n, v in values.items()}
        return [{n: v.blocks[k] if _is_lazy(v) else v[a:b] for n, v in lined.items()}
                for k, (a, b) in enumerate(bounds)]

    specs = _result_specs(cc, endpoint, wrt_in, wrt_out, ins)
    token = uuid.uuid4().hex[:12]
    label = f"tessera-{cc.spec.label}-{endpoint}-{token}"
    columns: dict = {name: [] for name in specs}
    with dask.annotate(retries=retries):
        for k, (a, b), part, seed_part in zip(range(len(bounds)), bounds, pieces(ins.batched),
                                             pieces(sds.batched)):
            chunk = dask.delayed(call, pure=False)(
                part, ins.shared, seed_part, sds.shared, b - a,
                f"items {a}:{b} of the batch", dask_key_name=f"{label}-{a}:{b}")
            for name, (shape, dtype) in specs.items():
                columns[name].append(da.from_delayed(chunk[name], (b - a, *shape),
                                                     dtype=np.dtype(dtype)))
    return {name: da.concatenate(blocks) for name, blocks in columns.items()}
