# SPDX-License-Identifier: MIT
"""A component's schema as Python objects: fields, their dims and dtypes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional, Union

import numpy as np

#: One declared dimension: a fixed size, a symbol shared between fields
#: (e.g. ``"n"``), or ``None`` for any size.
Dim = Union[int, str, None]


class ShapeDtype(NamedTuple):
    """The shape and dtype of an array, as ``abstract_eval`` returns them
    (duck-compatible with ``jax.ShapeDtypeStruct``)."""

    shape: tuple[int, ...]
    dtype: np.dtype


@dataclass(frozen=True)
class Field:
    """An input or output field of a component.

    An input may be left out of a call when it has a ``default`` (a
    read-only NumPy array: the value it then takes) or is ``optional`` (the
    component then gets it as absent, ``None`` in a Python component)."""

    name: str
    dtype: np.dtype
    dims: tuple[Dim, ...]
    differentiable: bool
    doc: str = ""
    default: Optional[np.ndarray] = field(default=None, compare=False)
    optional: bool = False

    @property
    def rank(self) -> int:
        return len(self.dims)

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

        def default(raw: Optional[tuple], dtype: np.dtype) -> Optional[np.ndarray]:
            if raw is None:
                return None
            data, shape = raw
            return np.frombuffer(data, dtype).reshape(shape)  # read-only: bytes

        def fields(items: tuple) -> tuple[Field, ...]:
            return tuple(Field(n, np.dtype(dt), tuple(dims), bool(d), doc,
                               default(dflt, np.dtype(dt)), bool(opt))
                         for n, dt, dims, d, doc, dflt, opt in items)

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
    def output_shapes_static(self) -> bool:
        """Whether every output's shape follows from the inputs' shapes by the
        schema alone: each dim fixed, or a symbol some input carries. When
        it does not (``linear``'s ``m``), the library cannot size a batch of
        results ahead of the call."""
        # An optional input may be absent, so its symbols do not count.
        symbols = {d for f in self.inputs if not f.optional for d in f.dims
                   if isinstance(d, str)}
        return all(d is not None and (not isinstance(d, str) or d in symbols)
                   for f in self.outputs for d in f.dims)
