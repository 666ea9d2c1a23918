# SPDX-License-Identifier: MIT
"""The ``tessera_call`` primitive: abstract evaluation, evaluation and
lowering to the XLA FFI handler written in C (tessera._ext), so that a
jitted program calls the plugin with no Python on the way."""

from __future__ import annotations

import functools
import re

import jax
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import mlir

from .. import _errors, _ext
from ._cluster import cluster_call
from ._op import Op

tessera_call_p = Primitive("tessera_call")
tessera_call_p.multiple_results = True

_TARGET = "tessera_call"
jax.ffi.register_ffi_target(_TARGET, _ext._ffi_handler(), platform="cpu", api_version=1)


def _apply_shapes(op: Op, specs: tuple) -> tuple:
    """Output (shape, dtype) of apply for unbatched input (shape, dtype)
    pairs, from the schema's symbolic dims or the plugin's abstract_eval
    (the library chooses, and checks the inputs against the schema).
    Cached per component."""
    cache = op.component.__dict__.setdefault("_jax_shapes", {})
    out = cache.get(specs)
    if out is None:
        out = cache[specs] = tuple((tuple(shape), np.dtype(dtype))
                                   for shape, dtype in op.component._abstract_eval(specs))
    return out


# "tessera.PluginError: <message> [TSR_E_PLUGIN]", as the FFI handler writes
# a failure (tessera._ext, ffi_handler.c) and XLA wraps it.
_WRAPPED = re.compile(r"tessera\.(\w+): (.*) \[(TSR_E_\w+)\]", re.S)


def tessera_error(exc: BaseException) -> _errors.TesseraError | None:
    """The :class:`tessera.TesseraError` a failure under ``jax.jit`` stands
    for: ``exc`` itself if it is one, the exception of the class, code and
    message that JAX's exception from a tessera call carries
    (``JaxRuntimeError``, or ``ValueError`` from JAX's C++ dispatch), or
    None when ``exc`` is neither."""
    if isinstance(exc, _errors.TesseraError):
        return exc
    found = _WRAPPED.search(str(exc))
    if found is None:
        return None
    code = getattr(_errors, found.group(3), None)
    if not isinstance(code, int):
        return None
    return _errors.error_class(code)(code, found.group(2))


def _abstract_eval(*avals, op: Op):
    comp = op.component
    given = dict(zip(op.given, avals[:len(op.given)]))
    if op.kind == "vjp":
        return [jax.core.ShapedArray(given[n].shape, given[n].dtype) for n in op.wrt_in]
    lead = (op.batch,) if op.batch else ()
    # None: left out, the library's default or an absent optional input.
    specs = tuple((tuple(a.shape[len(lead):]), np.dtype(a.dtype).name) if a is not None else None
                  for a in (given.get(n) for n in comp.schema.input_names))
    shapes = dict(zip(comp.schema.output_names, _apply_shapes(op, specs)))
    return [jax.core.ShapedArray(lead + shapes[n][0], shapes[n][1]) for n in op.results]


def _impl(*args, op: Op):
    """Outside jit: the same compiled path, jitted once per op, waited for,
    so that a failure raises its tessera class here, as it does from the
    NumPy API (XLA wraps it in its own exception: see tessera_error)."""
    if op._jitted is None:
        op._jitted = jax.jit(functools.partial(tessera_call_p.bind, op=op))
    try:
        return jax.block_until_ready(op._jitted(*args))
    except (RuntimeError, ValueError) as exc:  # JaxRuntimeError is a RuntimeError
        err = tessera_error(exc)
        if err is None:
            raise
        raise err from None


def _lowering(ctx, *args, op: Op):
    if op.cluster is not None and op.batch:
        return mlir.lower_fun(functools.partial(cluster_call, op=op),
                              multiple_results=True)(ctx, *args)
    return jax.ffi.ffi_lowering(_TARGET)(ctx, *args, handle=op.handle())


tessera_call_p.def_abstract_eval(_abstract_eval)
tessera_call_p.def_impl(_impl)
mlir.register_lowering(tessera_call_p, _lowering, platform="cpu")
