# SPDX-License-Identifier: MIT
"""Tessera components as JAX primitives.

    import jax, tessera, tessera.jax
    jax.config.update("jax_enable_x64", True)        # the bundled plugins are float64
    rosen = tessera.load("build/plugins/rosenbrock.so")

    @jax.jit
    def f(x):
        return tessera.jax.apply(rosen, {"x": x, "a": 1.0, "b": 100.0})["value"]

    jax.grad(f)(x)

``apply`` works under ``jax.jit``, ``grad``, ``jvp``, ``vjp``, ``jacfwd``,
``jacrev`` and ``vmap``, in every mode, and twice over: ``jax.hessian``,
``grad`` of ``grad``, ``jvp`` of ``grad`` and ``jacfwd``/``jacrev`` of
``grad`` reach the component's hvp (its own, or the library's central
differences of its vjp: ``Component.hvp_source``; see ``_rules``). Under ``jit`` the call goes through
an XLA FFI handler written in C: no Python runs per call. In-process, the
plugin reads XLA's buffers in place and writes its results straight into
XLA's output buffers; in worker mode operands are copied into the shared
arena and results out of it. CPU only.

Components with text or JSON fields take another route (``_valued``):
through ``jax.pure_callback`` and the NumPy API, with a ``custom_vjp``
whose backward pass is the component's vjp (also at paths inside JSON
inputs). Text inputs, and JSON inputs without arrays, are static (pass
them as static arguments of a jitted function, or close over them); array
leaves inside JSON inputs are traced and differentiable. There,
forward-mode (``jax.jvp``, ``jacfwd``) and second derivatives are not
available, and text and JSON outputs come back from eager calls only.

Errors. Outside ``jit`` (eager calls, ``grad`` and ``vmap`` without
``jit``) a failure raises its :class:`tessera.TesseraError` subclass, as
the NumPy API does (``tessera.PluginError``, ``tessera.WorkerError``, ...):
an eager call runs the compiled path and waits for it to finish.
Under ``jit`` the plugin runs inside XLA's executable, and JAX raises every
failure of a custom call as ``jax.errors.JaxRuntimeError`` (a
``RuntimeError``; as a plain ``ValueError`` when a jitted function that has
run before fails, from JAX's C++ dispatch), with no way for a handler to
choose the class. There the message reads
``"<XLA status>: tessera.<Class>: <the library's message> [TSR_E_...]"``,
e.g. ``INTERNAL: tessera.PluginError: component 'heat', endpoint 'apply':
conductivity must be positive [TSR_E_PLUGIN]``; :func:`tessera_error`
turns such an exception back into the tessera one, and
``with tessera.jax.tessera_errors():`` re-raises it as that (chained from
JAX's exception). Shape, dtype and name errors are found at trace time
and raise their tessera class under ``jit`` too.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _coerce, _errors, _ext, _nesting
from .._component import Component, check_input_names

if not _ext.HAVE_XLA_FFI:
    raise ImportError("tessera was built without jaxlib's XLA FFI headers, so tessera.jax is "
                      "unavailable: install jax, then reinstall tessera "
                      "(pip install ./bindings/python)")

from . import _rules, _valued  # noqa: E402  (after the check above)
from ._op import Op, make_op  # noqa: E402
from ._primitive import tessera_call_p, tessera_error  # noqa: E402

__all__ = ["apply", "tessera_call_p", "Op", "make_op", "tessera_error", "tessera_errors"]


def __dir__() -> list[str]:
    # What the module imports for its own use (jax, np, typing names...)
    # is not part of it: dir() and completion show the public names only.
    return sorted(__all__)

_rules.register()


def _operand(value: Any, field, comp: Component) -> jax.Array:
    want = field.dtype
    wide = want.itemsize == (16 if want.kind == "c" else 8)
    if wide and want.kind in "iufc":
        if not jax.config.jax_enable_x64:
            raise _errors.DtypeError(
                _errors.TSR_E_DTYPE,
                f"{_coerce.where(comp, 'apply')}input '{field.name}' is {want}, which JAX gives "
                "only with 64-bit types enabled: jax.config.update('jax_enable_x64', True)")
    if isinstance(value, (bool, int, float, complex)):
        # Python numbers: the NumPy API's rule and range checks.
        return jnp.asarray(_coerce.coerce(value, want.name, field.name, "input", comp, "apply"))
    x = value if isinstance(value, jax.Array) else jnp.asarray(value)
    if x.dtype == want:
        return x
    # Values are checked where they are known; a traced one only by kind.
    concrete = None if isinstance(x, jax.core.Tracer) else np.asarray(x)
    refusal = _coerce.cast_refusal(np.dtype(x.dtype), want, "input", field.name, concrete)
    if refusal is not None:
        raise type(refusal)(refusal.code, _coerce.where(comp, "apply") + refusal.message,
                            refusal.loc, refusal.input)
    return x.astype(want)


def apply(component: Component, inputs: Mapping[str, Any]) -> dict[str, jax.Array]:
    """Call the component's apply as a JAX operation: ``{output: array}``,
    nested for outputs named by dotted paths, as ``Component.apply``.

    ``inputs`` maps input fields to arrays (traced or concrete), nested or
    by dotted path; differentiable fields can be differentiated through.
    An input with a default may be left out (it takes the default), and so
    may an optional one (the plugin sees it absent); a left-out input is
    not differentiated. Inputs of another dtype are converted by
    Tesseract's rule (same_kind), else refused with
    :class:`tessera.DtypeError`.

    ``component`` may be a ``tessera.dask.ClusterComponent``: ``jax.vmap``
    then sends each batch (of apply, and of the jvp and vjp that
    differentiating it makes) to its Dask cluster in chunks; unbatched
    calls run in its local copy (``ClusterComponent.local()``).
    """
    cluster = None
    if hasattr(component, "_jax_target"):
        component, cluster = component._jax_target()
    schema = component.schema
    inputs = check_input_names(component, inputs, "apply", allow_left_out=True)
    if schema.has_values:
        # Text and JSON fields: not through the FFI handler (_valued).
        return _valued.apply(component, inputs, _operand)
    left_out = () if len(inputs) == len(schema.inputs) else tuple(
        n for n in schema.input_names if n not in inputs)
    args = [_operand(inputs[f.name], f, component) for f in schema.inputs
            if f.name in inputs]
    op = make_op(component, "apply", cluster=cluster, left_out=left_out)
    outs = tessera_call_p.bind(*args, op=op)
    return _nesting.nest(dict(zip(schema.output_names, outs)))


@contextlib.contextmanager
def tessera_errors() -> Iterator[None]:
    """Within the block (or the decorated function), JAX's exception for a
    tessera call that failed under ``jit`` is raised again as its
    :class:`tessera.TesseraError` subclass, chained from it; other
    exceptions pass unchanged::

        with tessera.jax.tessera_errors():
            jitted(x).block_until_ready()     # raises tessera.PluginError
    """
    try:
        yield
    except (RuntimeError, ValueError) as exc:  # JaxRuntimeError is a RuntimeError
        err = None if isinstance(exc, _errors.TesseraError) else tessera_error(exc)
        if err is None:
            raise
        raise err from exc
