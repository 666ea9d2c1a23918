# SPDX-License-Identifier: MIT
"""A component's schema as Python objects: fields, their kinds, dims and dtypes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple, Optional, Union

import numpy as np

#: One declared dimension: a fixed size, a symbol shared between fields
#: (e.g. ``"n"``), or ``None`` for any size.
Dim = Union[int, str, None]


class ShapeDtype(NamedTuple):
    """The shape and dtype of an array, as ``abstract_eval`` returns them
    (duck-compatible with ``jax.ShapeDtypeStruct``)."""

    shape: tuple[int, ...]
    dtype: np.dtype


#: The kinds of field: an array, UTF-8 text (``str``, ``Literal``, a str
#: enum), or one JSON value (numbers, bools, None, lists, dicts, nested
#: models; arrays inside as Tesseract's encoded array objects).
ARRAY, TEXT, JSON = "array", "text", "json"


@dataclass(frozen=True)
class Field:
    """An input or output field of a component.

    ``kind`` is ``"array"``, ``"text"`` or ``"json"``. An array field has a
    ``dtype`` and ``dims`` (``None``: any rank); a text field takes a
    ``str``, one of ``choices`` when they are set; a JSON field takes any
    JSON-able Python value, with NumPy (JAX, PyTorch) arrays inside. Text
    and JSON fields have ``dtype`` ``object`` and ``dims`` ``None``.

    An input may be left out of a call when it has a ``default`` (the
    value it then takes: a read-only NumPy array, a str or a JSON value) or
    is ``optional`` (the component then gets it as absent, ``None`` in a
    Python component)."""

    name: str
    dtype: np.dtype
    dims: Optional[tuple[Dim, ...]]
    differentiable: bool
    doc: str = ""
    default: Any = field(default=None, compare=False)
    optional: bool = False
    kind: str = ARRAY
    choices: Optional[tuple[str, ...]] = None

    @property
    def rank(self) -> Optional[int]:
        """The number of dims; None for any rank (and for text and JSON)."""
        return None if self.dims is None else len(self.dims)

    @property
    def is_array(self) -> bool:
        return self.kind == ARRAY

    @property
    def required(self) -> bool:
        """Whether a call must give this input: it has no default and is
        not optional."""
        return self.default is None and not self.optional


@dataclass(frozen=True)
class Schema:
    """Name, version, description, and the input and output fields in
    schema order."""

    name: str
    version: str
    description: str
    inputs: tuple[Field, ...]
    outputs: tuple[Field, ...]

    @classmethod
    def from_ext(cls, raw: tuple) -> Schema:
        name, version, description, ins, outs = raw

        def default(raw: Optional[tuple], dtype: np.dtype, kind: str) -> Any:
            if raw is None:
                return None
            data, shape = raw
            if kind != ARRAY:
                # The text of the value (a uint8 array on the ABI).
                from ._values import decode
                return decode(data, kind)
            return np.frombuffer(data, dtype).reshape(shape)  # read-only: bytes

        def fields(items: tuple) -> tuple[Field, ...]:
            out = []
            for n, dt, dims, d, doc, dflt, opt, kind, choices in items:
                dtype = np.dtype(object) if kind != ARRAY or dt is None else np.dtype(dt)
                out.append(Field(n, dtype, None if dims is None else tuple(dims), bool(d), doc,
                                 default(dflt, dtype, kind), bool(opt), kind,
                                 None if choices is None else tuple(choices)))
            return tuple(out)

        return cls(name, version, description, fields(ins), fields(outs))

    def input(self, name: str) -> Field:
        """The input field called ``name`` (KeyError if there is none)."""
        for f in self.inputs:
            if f.name == name:
                return f
        raise KeyError(name)

    def output(self, name: str) -> Field:
        """The output field called ``name`` (KeyError if there is none)."""
        for f in self.outputs:
            if f.name == name:
                return f
        raise KeyError(name)

    @property
    def input_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.inputs)

    @property
    def output_names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.outputs)

    @property
    def differentiable_inputs(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.inputs if f.differentiable)

    @property
    def differentiable_outputs(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.outputs if f.differentiable)

    @property
    def has_values(self) -> bool:
        """Whether a field is text or JSON (not an array)."""
        return any(not f.is_array for f in self.inputs + self.outputs)

    @property
    def output_shapes_static(self) -> bool:
        """Whether every output's shape follows from the inputs' shapes by the
        schema alone: each dim fixed, or a symbol some input carries. When
        it does not (``linear``'s ``m``), the library cannot size a batch of
        results ahead of the call."""
        # An optional input may be absent, so its symbols do not count.
        symbols = {d for f in self.inputs if not f.optional for d in f.dims or ()
                   if isinstance(d, str)}
        # Text, JSON and any-rank outputs have shapes only values tell.
        if any(f.dims is None for f in self.outputs):
            return False
        return all(d is not None and (not isinstance(d, str) or d in symbols)
                   for f in self.outputs for d in f.dims)
