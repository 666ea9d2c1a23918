# SPDX-License-Identifier: MIT
"""tessera.load and the Component: a plugin loaded in one of three modes and
called with dicts of arrays, as Tesseract's endpoints are."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from . import _errors, _ext, _nesting, _values
from ._coerce import where
from ._schema import Schema, ShapeDtype

_ENDPOINTS = ("apply", "jvp", "vjp", "jacobian", "hvp", "abstract_eval")


def _option_text(value: Any) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    return str(value)


def _names(value: Sequence[str] | str, what: str) -> tuple[str, ...]:
    if isinstance(value, str):
        raise TypeError(f"{what} must be a list of field names, not a single string")
    return tuple(value)


def _check_wrt(comp: Component, names: tuple[str, ...], fields: tuple, what: str,
               endpoint: str) -> tuple[str, ...]:
    """Refuse a text field, or a path inside one, named for
    differentiation (NotDifferentiableError, as the library does for a
    field that is not differentiable); paths inside JSON fields
    ("weights.{a}", "layers.[0].k") pass on to the library."""
    text = [f.name for f in fields if f.kind == _values.TEXT]
    for k, name in enumerate(names):
        for t in text:
            if name == t or (isinstance(name, str) and name.startswith(t + ".")):
                raise _errors.NotDifferentiableError(
                    _errors.TSR_E_NOT_DIFFERENTIABLE,
                    f"{where(comp, endpoint)}{what}: '{name}' is a text field, which cannot "
                    "be differentiated", (what, k))
    return names


class Component(_ext.Component):
    """A loaded component. Use :func:`load` to make one.

    Calls take and return dicts keyed by field name. A field named by a
    dotted path (``"mesh.nodes"``) may be given nested (``{"mesh":
    {"nodes": a}}``) or by its path; apply and abstract_eval return such
    outputs nested, derivatives key them by their paths, as Tesseract does:

    * ``apply(inputs)`` -> ``{output: array}``
    * ``jvp(inputs, jvp_inputs, jvp_outputs, tangent_vector)`` -> ``{output: array}``
    * ``vjp(inputs, vjp_inputs, vjp_outputs, cotangent_vector)`` -> ``{input: array}``
    * ``jacobian(inputs, jac_inputs, jac_outputs)`` -> ``{output: {input: array}}``
    * ``hvp(inputs, hvp_inputs, hvp_outputs, cotangent_vector, tangent_vector)``
      -> ``{input: array}``
    * ``abstract_eval(inputs)`` -> ``{output: ShapeDtype}``

    Text fields take and give ``str``; JSON fields any JSON-able Python
    value, with arrays inside (NumPy, JAX, PyTorch), and give the decoded
    value back with NumPy arrays inside (``tessera._values``). Derivatives
    may name paths inside a differentiable JSON field, in Tesseract's
    syntax (``"weights.{a}"``, ``"layers.[0].k"``): tangents, cotangents
    and results are then keyed by those paths.

    Returned arrays are never overwritten by a later call while they are
    referenced, and cost about their own bytes however many are kept:
    results of at most 4 KiB are copies that own their bytes; larger ones
    view the result buffer (shared memory in worker mode) without a copy,
    and own it once the component has run again. Inputs are read in place when they have
    the field's dtype and C order (NumPy arrays, PyTorch tensors and JAX
    arrays through DLPack, anything with the buffer protocol); otherwise
    they are converted by Tesseract's casting rule (NumPy's same_kind,
    refusing values that do not fit) or refused.

    Closing (``close()``, or leaving a ``with`` block) stops new calls at
    once; workers stop and memory goes when the last returned array dies.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        mode: str | None = None,
        *,
        workers: int | None = None,
        timeout_ms: int | None = None,
        config: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
        **options: Any,
    ) -> None:
        # No mode: the library's choice (in-process, or a worker for a
        # manifest whose routines may end the process).
        opts = {} if mode is None else {"mode": mode}
        if workers is not None:
            opts["workers"] = workers
        if timeout_ms is not None:
            opts["timeout_ms"] = timeout_ms
        opts.update(options)
        super().__init__(
            os.fspath(path),
            {k: _option_text(v) for k, v in opts.items()},
            {str(k): os.fspath(v) if isinstance(v, os.PathLike) else str(v)
             for k, v in (config or {}).items()},
            {str(k): str(v) for k, v in (env or {}).items()},
        )
        self._schema_cache = Schema.from_ext(self._schema())
        self._endpoints = tuple(e for e in _ENDPOINTS if self.has_endpoint(e))
        self._nested_inputs = _nesting.is_nested(self._schema_cache.input_names)
        self._nested_outputs = _nesting.is_nested(self._schema_cache.output_names)

    # ---- description ------------------------------------------------------

    @property
    def schema(self) -> Schema:
        """The fields, with dtypes, dims (int, symbol or None) and flags."""
        return self._schema_cache

    @property
    def endpoints(self) -> tuple[str, ...]:
        """The endpoints that can be called (including derivatives the
        library serves by finite differences; see ``has_endpoint``)."""
        return self._endpoints

    @property
    def name(self) -> str:
        return self._schema_cache.name

    def __repr__(self) -> str:
        state = "closed" if self.closed else self.mode
        return f"<tessera.Component {self.name!r} ({state})>"

    def __enter__(self) -> Component:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- derivatives ------------------------------------------------------

    def jvp(
        self,
        inputs: Mapping[str, Any],
        jvp_inputs: Sequence[str],
        jvp_outputs: Sequence[str],
        tangent_vector: Mapping[str, Any],
    ) -> dict[str, np.ndarray]:
        """Jacobian-vector product: ``{output: J @ tangent}`` for each of
        ``jvp_outputs``, with a tangent for each of ``jvp_inputs``."""
        outs = self._wrt(jvp_outputs, "jvp_outputs", "jvp")
        res = self._call("jvp", self._wrt(jvp_inputs, "jvp_inputs", "jvp"), outs,
                         self._flat_inputs(inputs, "jvp"), dict(tangent_vector))
        return dict(zip(outs, res))

    def vjp(
        self,
        inputs: Mapping[str, Any],
        vjp_inputs: Sequence[str],
        vjp_outputs: Sequence[str],
        cotangent_vector: Mapping[str, Any],
    ) -> dict[str, np.ndarray]:
        """Vector-Jacobian product: ``{input: cotangent @ J}`` for each of
        ``vjp_inputs``, with a cotangent for each of ``vjp_outputs``."""
        ins = self._wrt(vjp_inputs, "vjp_inputs", "vjp")
        res = self._call("vjp", ins, self._wrt(vjp_outputs, "vjp_outputs", "vjp"),
                         self._flat_inputs(inputs, "vjp"), dict(cotangent_vector))
        return dict(zip(ins, res))

    def jacobian(
        self,
        inputs: Mapping[str, Any],
        jac_inputs: Sequence[str],
        jac_outputs: Sequence[str],
    ) -> dict[str, dict[str, np.ndarray]]:
        """``{output: {input: d output / d input}}``, each block of shape
        ``(*output.shape, *input.shape)``."""
        ins = self._wrt(jac_inputs, "jac_inputs", "jacobian")
        outs = self._wrt(jac_outputs, "jac_outputs", "jacobian")
        res = self._call("jacobian", ins, outs, self._flat_inputs(inputs, "jacobian"))
        return {o: {i: res[k * len(ins) + j] for j, i in enumerate(ins)}
                for k, o in enumerate(outs)}

    def hvp(
        self,
        inputs: Mapping[str, Any],
        hvp_inputs: Sequence[str],
        hvp_outputs: Sequence[str],
        cotangent_vector: Mapping[str, Any],
        tangent_vector: Mapping[str, Any],
    ) -> dict[str, np.ndarray]:
        """Hessian-vector product: ``{input: H_w @ tangent}`` for each of
        ``hvp_inputs``, where ``H_w`` is the Hessian over ``hvp_inputs`` of
        ``sum_o cotangent[o] . output[o]`` for ``hvp_outputs`` (the
        derivative of the vjp along the tangent). Every hvp_input needs a
        tangent (zeros hold an input fixed), every hvp_output a cotangent.
        Served natively, or by finite differences of the vjp or of apply
        (``hvp_source``)."""
        ins = self._wrt(hvp_inputs, "hvp_inputs", "hvp")
        res = self._call("hvp", ins, self._wrt(hvp_outputs, "hvp_outputs", "hvp"),
                         self._flat_inputs(inputs, "hvp"),
                         (dict(cotangent_vector), dict(tangent_vector)))
        return dict(zip(ins, res))

    def abstract_eval(self, inputs: Mapping[str, Any]) -> dict[str, ShapeDtype | None]:
        """Output shapes and dtypes for inputs given as arrays or as anything
        with ``.shape`` and ``.dtype`` (``ShapeDtype``, ``jax.ShapeDtypeStruct``)
        or as ``{"shape": ..., "dtype": ...}``; no data is read. Text and
        JSON inputs are given as values; text and JSON outputs map to None."""
        inputs = check_input_names(self, inputs, "abstract_eval", allow_left_out=True)
        specs = [None if f.name not in inputs else _spec(inputs[f.name]) if f.is_array
                 else _values.encode(inputs[f.name], f.kind, f.name, "input", self,
                                     "abstract_eval")
                 for f in self.schema.inputs]
        res = self._abstract_eval(tuple(specs))
        # Text and JSON outputs: None (their size is known once computed).
        out = {f.name: None if r is None else ShapeDtype(tuple(r[0]), np.dtype(r[1]))
               for f, r in zip(self.schema.outputs, res)}
        return _nesting.nest(out) if self._nested_outputs else out

    def _wrt(self, names: Sequence[str] | str, what: str, endpoint: str) -> tuple[str, ...]:
        fields = self.schema.inputs if what.endswith("inputs") else self.schema.outputs
        return _check_wrt(self, _names(names, what), fields, what, endpoint)

    def _flat_inputs(self, inputs: Mapping[str, Any], endpoint: str) -> dict[str, Any]:
        if self._nested_inputs:
            return _nesting.flatten(self.schema.input_names, inputs,
                                    label=where(self, endpoint))
        return dict(inputs)


def check_input_names(component: Any, inputs: Mapping[str, Any], endpoint: str,
                      allow_left_out: bool = False) -> Mapping[str, Any]:
    """The inputs by dotted name (given nested, dotted or both); raises the
    library's errors for a name that is not an input and for an input
    that is missing, in the library's words. With allow_left_out, an input
    with a default or an optional one may be left out (the call fills it
    in)."""
    names = component.schema.input_names
    label = f"component '{component.name}', endpoint '{endpoint}'"
    inputs = _nesting.flatten(names, inputs, label=label + ": ")
    for f in component.schema.inputs:
        n = f.name
        if n not in inputs and (f.required or not allow_left_out):
            raise _errors.MissingError(_errors.TSR_E_MISSING, f"{label}: input '{n}' is missing",
                                       _errors.field_loc("inputs", n))
    return inputs


def _spec(value: Any) -> tuple[tuple[int, ...], str]:
    if isinstance(value, Mapping):
        shape, dtype = value["shape"], value["dtype"]
    elif hasattr(value, "shape") and hasattr(value, "dtype"):
        shape, dtype = value.shape, value.dtype
    else:
        arr = np.asarray(value)
        shape, dtype = arr.shape, arr.dtype
    return tuple(int(d) for d in shape), np.dtype(dtype).name


def load(
    path: str | os.PathLike[str],
    mode: str | None = None,
    *,
    workers: int | None = None,
    timeout_ms: int | None = None,
    config: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> Component:
    """Load the component at ``path``: a plugin (``.so``), a JSON manifest,
    a Python component (a Tesseract's folder with ``tesseract_api.py``,
    or the file; in-process it runs in this interpreter, in worker mode in
    its own, e.g. ``python="/path/venv/bin/python"``, or in an environment
    built from its ``tesseract_requirements.txt``), or the URL of a served
    Tesseract (``"http://host:8000"``: tesseract-runtime serve, tessera serve).

    Args:
        mode: ``"inproc"`` (dlopen), ``"isolated"`` (dlmopen, its own copies
            of the libraries it links) or ``"worker"`` (a separate process;
            arrays cross through shared memory). Default: in-process, except
            a manifest that says its routines may end the process
            (``may_exit``), which runs in a worker.
        workers: worker mode, pool size (concurrent calls from several threads).
        timeout_ms: worker mode, per-call limit; a call running longer raises
            :class:`~tessera.CallTimeoutError` and its worker is killed.
        config: configuration for the plugin's init (e.g. ``{"matrix": path}``).
        env: worker mode, environment variables for the worker.
        **options: any other option of ``tsr_options_set`` (``spawn``,
            ``restart``, ``cwd``, ``clear_env``, ``spin_ns``, ``log_level``, ...).

    Failures raise the :class:`~tessera.TesseraError` subclass of their code.
    """
    return Component(path, mode, workers=workers, timeout_ms=timeout_ms, config=config,
                     env=env, **options)
