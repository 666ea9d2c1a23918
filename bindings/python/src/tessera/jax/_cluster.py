# SPDX-License-Identifier: MIT
"""A batched ``tessera_call`` run by a Dask cluster: what ``jax.vmap``
lowers to for an op made from a ``tessera.dask.ClusterComponent``.

The batch leaves XLA through ``jax.pure_callback`` and goes to
``ClusterComponent.batch`` (chunks, one Dask task each); unbatched calls
never come here, they run in the local copy through the FFI handler.
"""

from __future__ import annotations

import functools

import jax
import numpy as np

from .. import _errors
from ._op import abstract_eval


def _host(op, shapes, *arrays):
    n_in = len(op.given)
    inputs = dict(zip(op.given, arrays[:n_in]))
    seeds = dict(zip(op.seeds, arrays[n_in:]))
    args = () if op.kind == "apply" else (op.wrt_in, op.wrt_out, seeds)
    try:
        out = op.cluster.batch(op.kind, inputs, *args)
    except _errors.TesseraError as exc:
        # The form tessera_error reads back, as the FFI handler writes it.
        raise RuntimeError(f"tessera.{type(exc).__name__}: {exc.message} "
                           f"[{exc.code_name}]") from None
    # jvp: an inexact output that is not differentiable gets NaN, as from
    # the FFI handler.
    return tuple(np.asarray(out[name], dtype=s.dtype) if name in out
                 else np.full(s.shape, np.nan, dtype=s.dtype)
                 for name, s in zip(op.results, shapes))


def cluster_call(*args, op):
    avals = abstract_eval(*(jax.typeof(a) for a in args), op=op)
    shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals)
    return jax.pure_callback(functools.partial(_host, op, shapes), shapes, *args)
