# SPDX-License-Identifier: MIT
"""Nested fields: a field named by a dotted path (``"mesh.nodes"``) may be
given nested, as on Tesseract's wire and in tesseract-core's Python API
(``{"mesh": {"nodes": a}}``), or by its dotted path (``{"mesh.nodes": a}``).
The library names fields by their dotted paths; apply's outputs go back
nested (``{"moved": {"nodes": array}}``), as Tesseract's apply returns them.
Derivatives keep Tesseract's keys: dotted paths.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from . import _errors
from ._coerce import where


@lru_cache(maxsize=256)
def _known(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(names)


@lru_cache(maxsize=256)
def _prefixes(names: tuple[str, ...]) -> frozenset[str]:
    """Every proper dotted prefix of the names: "a", "a.b" for "a.b.c"."""
    out = set()
    for name in names:
        parts = name.split(".")
        out.update(".".join(parts[:k]) for k in range(1, len(parts)))
    return frozenset(out)


def flatten(names: Sequence[str], values: Mapping[str, Any], *, label: str = "") -> dict[str, Any]:
    """Inputs as ``{dotted name: value}``, given nested, dotted or both.

    Raises :class:`~tessera.UnknownFieldError` for a key that names no
    field (its full dotted path) and :class:`~tessera.ArgumentError` for a
    field given twice (nested and dotted). ``label`` begins messages
    ("component 'X', endpoint 'Y': ").
    """
    if not isinstance(values, Mapping):
        raise TypeError(f"{label}inputs must be a dict of arrays by field name, "
                        f"not {type(values).__name__}")
    names = tuple(names)
    known = _known(names)
    prefixes = _prefixes(names)
    flat: dict[str, Any] = {}

    def walk(node: Mapping[str, Any], prefix: str) -> None:
        for key, value in node.items():
            if not isinstance(key, str):
                raise TypeError(f"{label}input names must be str, got {key!r}")
            path = prefix + key
            if path in known:
                if path in flat:
                    raise _errors.ArgumentError(
                        _errors.TSR_E_ARGUMENT,
                        f"{label}input '{path}' is given twice, nested and as a dotted key",
                        _errors.field_loc("inputs", path))
                flat[path] = value
            elif path in prefixes and isinstance(value, Mapping):
                walk(value, path + ".")
            else:
                raise _errors.UnknownFieldError(
                    _errors.TSR_E_UNKNOWN_FIELD,
                    f"{label}'{path}' is not an input (inputs: {', '.join(names)})",
                    _errors.field_loc("inputs", path))

    walk(values, "")
    return flat


def flatten_inputs(component: Any, inputs: Mapping[str, Any], endpoint: str) -> dict[str, Any]:
    """A component's inputs by dotted name (the C extension calls this for
    components with dotted input names)."""
    return flatten(component.schema.input_names, inputs,
                   label=where(component, endpoint))


def nest(flat: Mapping[str, Any]) -> dict[str, Any]:
    """``{"out.p": a, "q": b}`` -> ``{"out": {"p": a}, "q": b}``."""
    out: dict[str, Any] = {}
    for name, value in flat.items():
        if "." not in name:
            out[name] = value
            continue
        *parents, leaf = name.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def is_nested(names: Sequence[str]) -> bool:
    return any("." in n for n in names)


def flatten_tree(tree: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """The inverse of :func:`nest`: ``{"out": {"p": a}}`` -> ``{"out.p": a}``."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        if isinstance(value, Mapping):
            flat.update(flatten_tree(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat
