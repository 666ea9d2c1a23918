# SPDX-License-Identifier: MIT
"""How an object given for a field becomes an array the plugin can read.

The C extension uses a NumPy array in place when it already has the field's
dtype, native byte order, C order and alignment. Everything else comes here,
once per call:

* PyTorch tensors, JAX arrays and other DLPack producers are viewed without
  a copy (``np.from_dlpack``), then treated like NumPy arrays;
* objects with the buffer protocol are viewed too; lists are converted;
* a dtype that differs is converted (a copy) when NumPy's ``"safe"`` rule
  allows it (float32 -> float64, int32 -> int64, ...) and refused with
  :class:`~tessera.DtypeError` otherwise (float64 -> float32, float -> int);
  Python scalars may also take a narrower type of the same kind when the
  value fits (``1.5`` for a float32 field);
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


def _refuse(what: str, name: str, message: str) -> _errors.TesseraError:
    return _errors.DtypeError(_errors.TSR_E_DTYPE, f"{what} '{name}': {message}")


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


def _scalar(obj: Any, want: np.dtype, what: str, name: str) -> np.ndarray:
    """A Python number for a field: any type of the same kind or a wider
    one (bool < int < float < complex), if the value fits."""
    kind = ("b" if isinstance(obj, bool) else "i" if isinstance(obj, int)
            else "f" if isinstance(obj, float) else "c")
    if _KIND_ORDER[kind] > _KIND_ORDER[want.kind]:
        raise _refuse(what, name, f"{obj!r} cannot become {want} without losing its value")
    if want.kind in "iu" and kind == "i":
        info = np.iinfo(want)
        if not info.min <= obj <= info.max:
            raise _refuse(what, name, f"{obj!r} does not fit in {want}")
    try:
        value = (complex(obj) if want.kind == "c" else float(obj) if want.kind == "f"
                 else obj)
    except OverflowError:
        raise _refuse(what, name, f"{obj!r} overflows {want}") from None
    with np.errstate(over="ignore", invalid="ignore"):
        val = np.asarray(value).astype(want)
    if want.kind in "fc" and np.isfinite(value) and not np.all(np.isfinite(val)):
        raise _refuse(what, name, f"{obj!r} overflows {want}")
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
        raise type(exc)(exc.code, where(component, endpoint) + exc.message) from None
    except TypeError as exc:
        if component is None or type(exc) is not TypeError:
            raise
        raise TypeError(where(component, endpoint) + str(exc)) from exc.__cause__


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
        same = arr.dtype.kind == want.kind and arr.dtype.itemsize == want.itemsize
        if not same and not np.can_cast(arr.dtype, want, "safe"):
            raise _refuse(
                what,
                name,
                f"dtype {arr.dtype} given, {want} expected, and NumPy's 'safe' "
                "casting rule does not allow the conversion (convert it explicitly)",
            )
    # A copy only when the dtype, the order, the alignment or the byte
    # order is not what the plugin reads.
    return np.require(arr, dtype=want, requirements="CA")
