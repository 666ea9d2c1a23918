# SPDX-License-Identifier: MIT
"""What runs inside a Dask task: one call, or one chunk of a batch, on the
worker's open component. Arrays arrive and leave as NumPy arrays (Dask
pickles them with out-of-band buffers; nothing is encoded as JSON)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from .. import _errors, _nesting
from .._component import Component
from ._plugin import _current_worker, worker_component
from ._spec import ComponentSpec


def located(exc: _errors.TesseraError, where: str) -> _errors.TesseraError:
    """The same error, its message saying which item and which Dask worker,
    made picklable so that it reaches the client as its own class."""
    worker = _current_worker()
    if worker is not None:
        where += f", on Dask worker {worker.address}"
    return type(exc)(exc.code, f"{exc.message} ({where})", exc.loc, exc.input)


def call_item(spec: ComponentSpec, endpoint: str, args: tuple, index: int) -> Any:
    """``component.<endpoint>(*args)`` on this worker's component."""
    comp = worker_component(spec)
    try:
        return getattr(comp, endpoint)(*args)
    except _errors.TesseraError as exc:
        raise located(exc, f"item {index}") from None


def result_names(comp: Component, endpoint: str, wrt_in: tuple[str, ...],
                 wrt_out: tuple[str, ...]) -> tuple:
    """The names of ``_call``'s results, in its order."""
    if endpoint == "apply":
        return comp.schema.output_names
    if endpoint == "jvp":
        return wrt_out
    if endpoint == "vjp":
        return wrt_in
    return tuple((o, i) for o in wrt_out for i in wrt_in)  # jacobian blocks


def _stacked(comp: Component, endpoint: str, wrt_in, wrt_out, inputs, seeds, size: int):
    # An output whose shape depends on values cannot be sized for a batch
    # ahead of the call: one call per item.
    rows = []
    for k in range(size):
        item_in = {n: v[k] for n, v in inputs.items()}
        item_seeds = None if seeds is None else {n: v[k] for n, v in seeds.items()}
        rows.append(comp._call(endpoint, wrt_in, wrt_out, item_in, item_seeds))
    return tuple(np.stack(col) for col in zip(*rows))


def call_chunk(spec: ComponentSpec, endpoint: str, wrt_in: tuple[str, ...],
               wrt_out: tuple[str, ...], batched: Mapping[str, np.ndarray],
               shared: Mapping[str, Any], seeds_batched: Mapping[str, np.ndarray],
               seeds_shared: Mapping[str, Any], size: int, where: str) -> dict[str, np.ndarray]:
    """Items of a batch: every ``batched`` array has a leading axis of
    ``size``; ``shared`` values are the same for every item. Runs them as
    one library batch (``tsr_call_run_batch``: split over the component's
    worker pool in worker mode) and returns ``{name: array}``, jacobian
    blocks keyed ``(output, input)``."""
    comp = worker_component(spec)

    def full(part: Mapping[str, np.ndarray], same: Mapping[str, Any]) -> dict[str, np.ndarray]:
        out = dict(part)
        for name, value in same.items():
            value = np.asarray(value)
            out[name] = np.ascontiguousarray(np.broadcast_to(value, (size, *value.shape)))
        return out

    inputs = full(batched, shared)
    seeds = full(seeds_batched, seeds_shared) if endpoint in ("jvp", "vjp") else None
    try:
        if endpoint != "vjp" and not comp.schema.output_shapes_static:
            res = _stacked(comp, endpoint, wrt_in, wrt_out, inputs, seeds, size)
        else:
            res = comp._call(endpoint, wrt_in, wrt_out, inputs, seeds, size)
    except _errors.TesseraError as exc:
        raise located(exc, where) from None
    return dict(zip(result_names(comp, endpoint, wrt_in, wrt_out), res))


def schema_of(spec: ComponentSpec):
    return worker_component(spec).schema


def abstract_eval_of(spec: ComponentSpec, specs: Mapping[str, tuple]) -> dict:
    comp = worker_component(spec)
    out = _nesting.flatten_tree(
        comp.abstract_eval({n: {"shape": s, "dtype": d} for n, (s, d) in specs.items()}))
    return {n: (tuple(v.shape), np.dtype(v.dtype).name) for n, v in out.items()}
