# SPDX-License-Identifier: MIT
"""Text and JSON fields: Python values <-> the UTF-8 text the library carries.

* A text field takes a ``str`` (a str enum member counts as its value).
  Anything else is a ``TypeError`` naming the field. The library checks
  the text against the field's choices: a value outside them raises
  :class:`~tessera.ValueNotAllowedError` (TSR_E_VALUE) with ``.loc`` the
  field's path, in pydantic's words ("Input should be 'a' or 'b'").
* A JSON field takes any JSON-able Python value: numbers, bools, None,
  str, lists, tuples, dicts with str keys, nested to any depth. NumPy
  arrays inside (and JAX arrays, PyTorch tensors, anything with
  ``__dlpack__``) become Tesseract's encoded array objects, base64 of the
  little-endian, C-ordered bytes; NumPy scalars become Python numbers.
  Anything else is a ``TypeError`` naming where it lies
  (``"input 'config.{a}.[2]'"``). Non-finite floats have no JSON form and
  are refused alike.
* Results: text -> ``str``; JSON -> the decoded value, array objects
  (base64 or json encoding) turned back into NumPy arrays.

Paths inside a JSON value use Tesseract's syntax: ``{key}`` for a dict
key, ``[i]`` for a list item (``"weights.{a}"``, ``"layers.[0].k"``).
"""

from __future__ import annotations

import base64
import enum
import json
import math
from typing import Any, NamedTuple

import numpy as np

from . import _errors
from ._coerce import where

TEXT, JSON = "text", "json"


def _section(what: str) -> str:
    return "inputs" if what == "input" else what


def encode_text(value: Any, name: str, what: str = "input", label: str = "") -> str:
    """The text for a text field (its choices are the library's to check)."""
    if isinstance(value, enum.Enum) and isinstance(value.value, str):
        value = value.value
    if not isinstance(value, str):
        raise TypeError(f"{label}{what} '{name}' is a text field: a str is expected, "
                        f"not {type(value).__name__}")
    if "\0" in value:
        raise _errors.ArgumentError(
            _errors.TSR_E_ARGUMENT, f"{label}{what} '{name}': text holds a NUL character",
            _errors.field_loc(_section(what), name), _errors.small_input(value))
    return value


def array_object(arr: np.ndarray) -> dict[str, Any]:
    """Tesseract's encoded array object of ``arr`` (base64, little-endian,
    C order)."""
    if arr.dtype.fields is not None or arr.dtype.kind not in "biufc":
        raise TypeError(f"dtype {arr.dtype} has no encoded array form")
    le = np.ascontiguousarray(arr, dtype=arr.dtype.newbyteorder("<"))
    return {"object_type": "array", "shape": list(arr.shape), "dtype": arr.dtype.name,
            "data": {"buffer": base64.b64encode(le.tobytes()).decode("ascii"),
                     "encoding": "base64"}}


def _host_array(obj: Any) -> np.ndarray:
    if getattr(obj, "requires_grad", False):
        raise TypeError("a tensor that requires grad; pass tensor.detach(), or call "
                        "tessera.torch.apply to differentiate through the component")
    if "Tracer" in type(obj).__name__:
        raise TypeError("a JAX tracer; inside jax.jit, grad or vmap call tessera.jax.apply")
    try:
        return np.from_dlpack(obj)
    except (BufferError, RuntimeError, TypeError, ValueError):
        return np.asarray(obj)


def _jsonable(value: Any, path: str) -> Any:
    """``value`` as plain JSON types, arrays as encoded array objects."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise TypeError(f"'{path}': {value!r} has no JSON form (not a finite number)")
        return float(value)
    if isinstance(value, enum.Enum):
        return _jsonable(value.value, path)
    if isinstance(value, np.generic):
        if value.dtype.kind in "biuf":
            return _jsonable(value.item(), path)
        raise TypeError(f"'{path}': a NumPy {value.dtype} scalar has no JSON form")
    if isinstance(value, np.ndarray):
        return _array(value, path)
    if hasattr(value, "__dlpack__") and not isinstance(value, (bytes, bytearray, memoryview)):
        try:
            arr = _host_array(value)
        except TypeError as exc:
            raise TypeError(f"'{path}': {exc}") from None
        return _array(arr, path)
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if isinstance(k, enum.Enum):
                k = k.value
            if not isinstance(k, str):
                raise TypeError(f"'{path}': dict keys must be str, got {k!r}")
            out[k] = _jsonable(v, f"{path}.{{{k}}}")
        return out
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{path}.[{i}]") for i, v in enumerate(value)]
    raise TypeError(f"'{path}': an object of type {type(value).__name__} has no JSON form")


def _array(arr: np.ndarray, path: str) -> dict[str, Any]:
    try:
        return array_object(arr)
    except TypeError as exc:
        raise TypeError(f"'{path}': {exc}") from None


def encode_json(value: Any, name: str, what: str = "input", label: str = "") -> str:
    """The JSON document for a JSON field."""
    try:
        plain = _jsonable(value, name)
    except TypeError as exc:
        raise TypeError(f"{label}{what} {exc}") from None
    return json.dumps(plain, separators=(",", ":"), allow_nan=False)


def encode(value: Any, kind: str, name: str, what: str = "input", component: Any = None,
           endpoint: str | None = None) -> bytes:
    """UTF-8 bytes of the value for a text or JSON field (the C extension
    calls this for each such input)."""
    label = where(component, endpoint)
    if kind == TEXT:
        text = encode_text(value, name, what, label)
    else:
        text = encode_json(value, name, what, label)
    return text.encode("utf-8")


def decode_array(obj: dict[str, Any]) -> np.ndarray:
    """An encoded array object (base64 or json encoding) as a NumPy array."""
    dtype = np.dtype(obj["dtype"])
    shape = tuple(int(d) for d in obj["shape"])
    data = obj["data"]
    encoding = data.get("encoding", "base64")
    if encoding == "base64":
        raw = base64.b64decode(data["buffer"])
        arr = np.frombuffer(raw, dtype=dtype.newbyteorder("<")).reshape(shape)
        return arr.astype(dtype)   # native order, a writeable copy
    if encoding == "json":
        return np.asarray(data["buffer"], dtype=dtype).reshape(shape)
    raise ValueError(f"encoded array with encoding {encoding!r} cannot be read here")


def _is_array_object(obj: Any) -> bool:
    return (isinstance(obj, dict) and obj.get("object_type") == "array"
            and "data" in obj and "dtype" in obj and "shape" in obj)


def _arrays_back(obj: Any) -> Any:
    if _is_array_object(obj):
        return decode_array(obj)
    if isinstance(obj, dict):
        return {k: _arrays_back(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_arrays_back(v) for v in obj]
    return obj


def decode(data: bytes | str, kind: str) -> Any:
    """A text result as str; a JSON result as its Python value, with
    array objects as NumPy arrays."""
    text = data.decode("utf-8") if isinstance(data, (bytes, bytearray, memoryview)) else data
    if kind == TEXT:
        return text
    return _arrays_back(json.loads(text))


# ---- paths inside JSON values ---------------------------------------------

def array_leaves(value: Any, path: str) -> list[tuple[str, Any]]:
    """The (path, array) of each array leaf inside a JSON value, in the
    order of a depth-first walk: dict keys as ``{key}`` (a dict inside a
    list is taken as a nested model: its keys as ``.key``), list and tuple
    items as ``[i]``."""
    out: list[tuple[str, Any]] = []

    def walk(node: Any, at: str, in_list: bool) -> None:
        if isinstance(node, dict):
            for k, v in node.items():
                walk(v, f"{at}.{k}" if in_list else f"{at}.{{{k}}}", False)
        elif isinstance(node, (list, tuple)):
            for i, v in enumerate(node):
                walk(v, f"{at}.[{i}]", True)
        elif is_array_like(node):
            out.append((at, node))

    walk(value, path, False)
    return out


def is_array_like(obj: Any) -> bool:
    """An array (NumPy, JAX, PyTorch or other DLPack producer), not a
    Python or NumPy scalar."""
    if isinstance(obj, np.ndarray):
        return True
    if isinstance(obj, (bool, int, float, complex, str, bytes, np.generic)) or obj is None:
        return False
    return hasattr(obj, "__dlpack__") or (hasattr(obj, "shape") and hasattr(obj, "dtype"))


def refuse_path(component: Any, endpoint: str, what: str, path: str,
                why: str) -> _errors.TesseraError:
    """The library's error for a derivative path it cannot take."""
    return _errors.NotDifferentiableError(
        _errors.TSR_E_NOT_DIFFERENTIABLE,
        f"{where(component, endpoint)}{what} '{path}': {why}",
        _errors.field_loc(what, path))


# ---- JSON values with their array leaves taken out (JAX, PyTorch) -----------

class _Leaf:
    """A placeholder for the k-th operand inside a JSON value."""

    __slots__ = ("k",)

    def __init__(self, k: int) -> None:
        self.k = k


def split_leaves(value: Any, path: str, ops: list, paths: list, in_list: bool = False) -> Any:
    """The value with its array leaves replaced by _Leaf placeholders,
    appending each leaf to ops and its path to paths (the walk of
    tessera._values.array_leaves)."""
    if isinstance(value, dict):
        return {k: split_leaves(v, f"{path}.{k}" if in_list else f"{path}.{{{k}}}", ops, paths)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [split_leaves(v, f"{path}.[{i}]", ops, paths, True) for i, v in enumerate(value)]
    if is_array_like(value):
        ops.append(value)
        paths.append(path)
        return _Leaf(len(ops) - 1)
    return value


class SplitInputs(NamedTuple):
    """A call's inputs split for a tracing face (JAX, PyTorch): the array
    fields and the array leaves inside JSON fields become operands; the
    rest stays as given."""
    statics: dict        # text and array-free JSON inputs, by name
    skeletons: dict      # JSON inputs with leaves, placeholders for them
    arrays: list         # names of the array inputs given, in schema order
    ops: list            # their operands, as to_operand made them
    leaves: list         # the JSON inputs' leaves, as to_leaf made them
    paths: list          # the leaves' paths ("weights.{a}")


def split_inputs(schema: Any, inputs: dict, to_operand: Any, to_leaf: Any) -> SplitInputs:
    """Split inputs (by dotted name) for a tracing face; to_operand(value,
    field) makes an array input an operand, to_leaf(x) a leaf found inside a
    JSON input. One list of leaves serves every JSON input: a placeholder's
    index counts from the first leaf of the first such input."""
    out = SplitInputs({}, {}, [], [], [], [])
    found: list = []
    for f in schema.inputs:
        if f.name not in inputs:
            continue
        value = inputs[f.name]
        if f.is_array:
            out.arrays.append(f.name)
            out.ops.append(to_operand(value, f))
        elif f.kind == "json":
            sk = split_leaves(value, f.name, found, out.paths)
            if len(found) > len(out.leaves):
                out.skeletons[f.name] = sk
                out.leaves.extend(to_leaf(x) for x in found[len(out.leaves):])
            else:
                out.statics[f.name] = value
        else:
            out.statics[f.name] = value
    return out


def fill_leaves(skeleton: Any, ops: tuple) -> Any:
    if isinstance(skeleton, _Leaf):
        return ops[skeleton.k]
    if isinstance(skeleton, dict):
        return {k: fill_leaves(v, ops) for k, v in skeleton.items()}
    if isinstance(skeleton, list):
        return [fill_leaves(v, ops) for v in skeleton]
    return skeleton


def static_key(skeleton: Any) -> str:
    """A hashable text of a static value (leaves as their index)."""
    def plain(node: Any) -> Any:
        if isinstance(node, _Leaf):
            return {"\0leaf": node.k}
        if isinstance(node, dict):
            return {k: plain(v) for k, v in node.items()}
        if isinstance(node, list):
            return [plain(v) for v in node]
        return node
    return json.dumps(plain(skeleton), sort_keys=True, default=repr)


def pick(out: dict, dotted: str) -> Any:
    if dotted in out:
        return out[dotted]
    node: Any = out
    for part in dotted.split("."):
        node = node[part]
    return node
