# SPDX-License-Identifier: MIT
"""How an object given for a field becomes an array the plugin can read.

The C extension uses a NumPy array in place when it already has the field's
dtype, native byte order, C order and alignment. Everything else comes here,
once per call:

* PyTorch tensors, JAX arrays and other DLPack producers are viewed without
  a copy (``np.from_dlpack``), then treated like NumPy arrays;
* objects with the buffer protocol are viewed too; lists are converted;
* a dtype that differs is converted (a copy) by Tesseract's rule, NumPy's
  ``"same_kind"`` refusing values that do not fit: bool < integers (signed
  and unsigned alike) < floats < complex, narrowing within a kind allowed
  (float64 -> float32, int64 -> uint8). Refused with
  :class:`~tessera.DtypeError`: a kind above the field's (float -> int,
  complex -> float), an integer outside the target's range (a negative one
  for an unsigned field) and a finite float that would become infinite
  (1e300 for float32; NaN and infinities carry over). Python numbers
  follow the same rule;
* non-contiguous, misaligned or byte-swapped arrays are copied into a
  C-ordered native array.

Nothing is ever reinterpreted: memory is read as what it is, or copied.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _errors

_DTYPE_CACHE: dict[str, np.dtype] = {}


def _dtype(name: str) -> np.dtype:
    dt = _DTYPE_CACHE.get(name)
    if dt is None:
        dt = _DTYPE_CACHE[name] = np.dtype(name)
    return dt


def where(component: Any, endpoint: str | None) -> str:
    """The prefix of the library's messages: "component 'X', endpoint 'Y': "
    (empty without a component)."""
    if component is None:
        return ""
    return f"component '{component.name}', endpoint '{endpoint or 'apply'}': "


def _section(what: str) -> str:
    """The first part of a location: "inputs" for an input, else the
    argument's name ("tangent_vector")."""
    return "inputs" if what == "input" else what


def _refuse(what: str, name: str, message: str,
            value: Any = _errors._ABSENT) -> _errors.TesseraError:
    return _errors.DtypeError(_errors.TSR_E_DTYPE, f"{what} '{name}': {message}",
                              _errors.field_loc(_section(what), name), value)


def _does_not_fit(what: str, name: str, value: Any, want: np.dtype,
                  index: int | None = None) -> _errors.TesseraError:
    at = "" if index is None else f" at index {index}"
    shown = value.item() if isinstance(value, np.generic) else value
    return _refuse(what, name, f"value {shown!r}{at} does not fit in {want}",
                   _errors.small_input(value))


def _from_dlpack(obj: Any, what: str, name: str) -> np.ndarray:
    if getattr(obj, "requires_grad", False):
        raise _refuse(
            what,
            name,
            "a tensor that requires grad; pass tensor.detach(), or call "
            "tessera.torch.apply to differentiate through the component",
        )
    if "Tracer" in type(obj).__name__:
        raise TypeError(
            f"{what} '{name}': a JAX tracer; inside jax.jit, grad or vmap call "
            "tessera.jax.apply, not the NumPy API"
        )
    try:
        return np.from_dlpack(obj)
    except (BufferError, RuntimeError, TypeError, ValueError) as exc:
        device = getattr(obj, "device", None)
        raise TypeError(
            f"{what} '{name}': cannot view this {type(obj).__name__}"
            + (f" on device {device}" if device is not None else "")
            + f" as host memory ({exc}); components read CPU memory"
        ) from exc


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_KIND_WORD = {"b": "bool", "u": "integer", "i": "integer", "f": "float", "c": "complex"}


def _a(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _scalar(obj: Any, want: np.dtype, what: str, name: str) -> np.ndarray:
    """A Python number for a field: any type of the same kind or a wider
    one (bool < int < float < complex), if the value fits."""
    kind = ("b" if isinstance(obj, bool) else "i" if isinstance(obj, int)
            else "f" if isinstance(obj, float) else "c")
    if _KIND_ORDER[kind] > _KIND_ORDER[want.kind]:
        raise _refuse(what, name, f"{obj!r} given, {want} expected: {_a(_KIND_WORD[kind])} "
                      f"cannot become {_KIND_WORD[want.kind]} by the 'same_kind' casting rule "
                      "(convert it explicitly)", _errors.small_input(obj))
    if want.kind in "iu" and kind == "i":
        info = np.iinfo(want)
        if not info.min <= obj <= info.max:
            raise _does_not_fit(what, name, obj, want)
    try:
        value = (complex(obj) if want.kind == "c" else float(obj) if want.kind == "f"
                 else obj)
    except OverflowError:
        raise _does_not_fit(what, name, obj, want) from None
    with np.errstate(over="ignore", invalid="ignore"):
        val = np.asarray(value).astype(want)
    if want.kind in "fc" and _overflowed(np.asarray(value), val).any():
        raise _does_not_fit(what, name, obj, want)
    return val


def coerce(obj: Any, dtype_name: str, name: str, what: str = "input",
           component: Any = None, endpoint: str | None = None) -> np.ndarray:
    """An array of dtype ``dtype_name``, C-contiguous, aligned and native,
    with the values of ``obj``, viewing its memory whenever that is possible.

    Raises :class:`~tessera.DtypeError` when the conversion would lose
    information, and ``TypeError`` for objects that hold no host memory;
    with a component, their messages begin as the library's do
    ("component 'X', endpoint 'Y': input 'x': ...").
    """
    try:
        return _coerce(obj, dtype_name, name, what)
    except _errors.TesseraError as exc:
        if component is None:
            raise
        raise type(exc)(exc.code, where(component, endpoint) + exc.message, exc.loc,
                        exc.input) from None
    except TypeError as exc:
        if component is None or type(exc) is not TypeError:
            raise
        raise TypeError(where(component, endpoint) + str(exc)) from exc.__cause__


def _overflowed(src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Where a finite value (either part of a complex one) became infinite."""
    bad = np.isfinite(src.real) & ~np.isfinite(dst.real)
    if src.dtype.kind == "c":
        bad |= np.isfinite(src.imag) & ~np.isfinite(dst.imag)
    return bad


def _first_misfit(arr: np.ndarray, want: np.dtype) -> tuple[int, Any] | None:
    """The flat (C order) index and value of the first element of ``arr``
    that ``want`` cannot hold, or None. Kinds are already allowed."""
    if arr.size == 0 or np.can_cast(arr.dtype, want, "safe"):
        return None   # every value fits
    if want.kind in "iu":
        if arr.dtype.kind == "b":
            return None
        info = np.iinfo(want)
        bad = (arr < info.min) | (arr > info.max)
    else:
        with np.errstate(over="ignore", invalid="ignore"):
            bad = _overflowed(arr, arr.astype(want))
    if not bad.any():
        return None
    k = int(np.argmax(bad.reshape(-1)))
    return k, arr.reshape(-1)[k].item()


def cast_refusal(have: np.dtype, want: np.dtype, what: str, name: str,
                 values: np.ndarray | None = None) -> _errors.TesseraError | None:
    """The error for converting ``have`` to ``want`` by Tesseract's rule, or
    None when it is allowed: a kind above the field's is refused, and so
    is a value of ``values`` (when known) that ``want`` cannot hold."""
    if _KIND_ORDER[have.kind] > _KIND_ORDER[want.kind]:
        return _refuse(
            what,
            name,
            f"dtype {have} given, {want} expected: {_a(_KIND_WORD[have.kind])} array cannot "
            f"become {_KIND_WORD[want.kind]} by the 'same_kind' casting rule "
            "(convert it explicitly)",
        )
    misfit = None if values is None else _first_misfit(values, want)
    if misfit is None:
        return None
    index, value = misfit
    return _does_not_fit(what, name, value, want, index if values.ndim else None)


def _coerce(obj: Any, dtype_name: str, name: str, what: str) -> np.ndarray:
    want = _dtype(dtype_name)
    if isinstance(obj, np.ndarray):
        arr = obj
    elif isinstance(obj, (bool, int, float, complex)):
        return _scalar(obj, want, what, name)
    elif isinstance(obj, np.generic):
        arr = np.asarray(obj)
    elif hasattr(obj, "__dlpack__") and not isinstance(obj, (bytes, bytearray, memoryview)):
        arr = _from_dlpack(obj, what, name)
    else:
        arr = np.asarray(obj)
    if arr.dtype.fields is not None or arr.dtype.kind not in "biufc":
        raise _refuse(what, name, f"dtype {arr.dtype} given, {want} expected")
    if arr.dtype != want:
        refusal = cast_refusal(arr.dtype, want, what, name, arr)
        if refusal is not None:
            raise refusal
    # A copy only when the dtype, the order, the alignment or the byte
    # order is not what the plugin reads.
    return np.require(arr, dtype=want, requirements="CA")
