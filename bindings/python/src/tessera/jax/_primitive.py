# SPDX-License-Identifier: MIT
"""The ``tessera_call`` primitive: evaluation and lowering to the XLA FFI
handler written in C (tessera._ext), so that a jitted program calls the
plugin with no Python on the way; its abstract evaluation is _op's."""

from __future__ import annotations

import functools
import re

import jax
from jax.extend.core import Primitive
from jax.interpreters import mlir

from .. import _errors, _ext
from ._cluster import cluster_call
from ._op import Op, abstract_eval

tessera_call_p = Primitive("tessera_call")
tessera_call_p.multiple_results = True

_TARGET = "tessera_call"
jax.ffi.register_ffi_target(_TARGET, _ext._ffi_handler(), platform="cpu", api_version=1)


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


tessera_call_p.def_abstract_eval(abstract_eval)
tessera_call_p.def_impl(_impl)
mlir.register_lowering(tessera_call_p, _lowering, platform="cpu")
