# SPDX-License-Identifier: MIT
"""Exceptions: one class per library error code, all subclasses of TesseraError.

Every failure of the C library arrives as the class of its ``TSR_E_*`` code,
carrying the code (``.code``, ``.code_name``), the library's message, which
names the component, the endpoint, the field and the cause, and where it
happened (``.loc``). ``.detail`` gives the same in the shape of pydantic's
``ValidationError.errors()``, as tesseract-core reports a bad request.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _ext


class _Absent:
    """No offending input recorded (None is a value a caller may give)."""

    def __repr__(self) -> str:
        return "<absent>"

    def __reduce__(self) -> str:
        return "_ABSENT"   # unpickles as this module's one instance


_ABSENT: Any = _Absent()

# Inputs kept in .detail: numbers and short strings, as the library's
# messages quote them; never an array.
_SMALL_STR = 64


def small_input(value: Any) -> Any:
    """``value`` if it is small enough to repeat in ``.detail``, else absent."""
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return value.item()
    if isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "biufc":
        return value.item()
    if isinstance(value, (bool, int, float, complex)):
        return value
    if isinstance(value, str) and len(value) <= _SMALL_STR:
        return value
    return _ABSENT


def loc_from_text(text: str) -> tuple[str | int, ...]:
    """The library's dotted location ("inputs.mesh.nodes", "jvp_inputs.1")
    as a tuple of parts, list indices as ints; ``()`` for ""."""
    if not text:
        return ()
    return tuple(int(p) if p.isdigit() else p for p in text.split("."))


def field_loc(section: str, name: str) -> tuple[str | int, ...]:
    """The location of a field: ``field_loc("inputs", "mesh.nodes")`` is
    ``("inputs", "mesh", "nodes")``."""
    return (section, *name.split("."))


class TesseraError(Exception):
    """A failure reported by the Tessera library.

    Attributes:
        code: the negative ``TSR_E_*`` value.
        message: the library's message.
        loc: where: a tuple of parts, section first (``("inputs", "mesh",
            "nodes")``, ``("jvp_inputs", 1)``); ``()`` when the failure is
            about no one place.
    """

    def __init__(self, code: int, message: str, loc: tuple = (), input: Any = _ABSENT) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.loc = tuple(loc)
        self.input = input

    @property
    def code_name(self) -> str:
        """The code's C name, e.g. ``"TSR_E_DTYPE"``."""
        return _NAMES.get(self.code, f"TSR_E_{-self.code}")

    @property
    def type(self) -> str:
        """The kind of failure in one word, as the library names it for
        its JSON errors (``tsr_error_type``)."""
        return _ext.error_type(self.code)

    @property
    def detail(self) -> list[dict[str, Any]]:
        """``[{"type", "loc", "msg", "input"}]``: the failure as one entry
        of pydantic's ``ValidationError.errors()`` (``input`` only when the
        offending value is small)."""
        entry: dict[str, Any] = {"type": self.type, "loc": self.loc, "msg": self.message}
        if self.input is not _ABSENT:
            entry["input"] = self.input
        return [entry]

    def __str__(self) -> str:
        return f"{self.message} [{self.code_name}]"

    def __reduce__(self):
        # Pickled whole (a Dask task's failure travels pickled): every
        # argument of the constructor, not Exception's one.
        return (type(self), (self.code, self.message, self.loc, self.input))


class ArgumentError(TesseraError, ValueError):
    """TSR_E_ARGUMENT: a bad argument, or a call on a closed component."""


class OutOfMemoryError(TesseraError, MemoryError):
    """TSR_E_NOMEM."""


class LoadError(TesseraError, OSError):
    """TSR_E_LOAD: the file is missing, not a shared object, or has no entry symbol."""


class AbiError(TesseraError):
    """TSR_E_ABI: the plugin was built for an incompatible ABI."""


class DescriptorError(TesseraError):
    """TSR_E_DESCRIPTOR: the plugin's descriptor is malformed."""


class UnsupportedError(TesseraError, NotImplementedError):
    """TSR_E_UNSUPPORTED: the mode or endpoint is not available."""


class UnknownFieldError(TesseraError, LookupError):
    """TSR_E_UNKNOWN_FIELD: a name that is not in the schema."""


class MissingError(TesseraError, LookupError):
    """TSR_E_MISSING: a required input, tangent or cotangent was not given."""


class DtypeError(TesseraError, TypeError):
    """TSR_E_DTYPE: the wrong element type (a kind above the field's), or a
    value the field's type cannot hold."""


class ShapeError(TesseraError, ValueError):
    """TSR_E_SHAPE: the wrong rank or dimension, or symbolic dims disagree."""


class NotDifferentiableError(TesseraError, ValueError):
    """TSR_E_NOT_DIFFERENTIABLE: a derivative asked of a non-differentiable field."""


class PluginError(TesseraError):
    """TSR_E_PLUGIN: the endpoint reported a failure."""


class PluginResultError(TesseraError):
    """TSR_E_PLUGIN_RESULT: the endpoint returned something the schema forbids."""


class InitError(TesseraError):
    """TSR_E_INIT: the plugin's init failed."""


class PayloadError(TesseraError, ValueError):
    """TSR_E_PAYLOAD: a malformed payload or encoded array."""


class IOFailure(TesseraError, OSError):
    """TSR_E_IO: reading or writing a file failed."""


class WorkerError(TesseraError):
    """TSR_E_WORKER: the worker process died or could not start."""


class CallTimeoutError(TesseraError, TimeoutError):
    """TSR_E_TIMEOUT: the call exceeded timeout_ms; its worker was killed."""


class SharedMemoryError(TesseraError, MemoryError):
    """TSR_E_SHM: shared memory is unavailable or full."""


class LimitError(TesseraError, ValueError):
    """TSR_E_LIMIT: refused by a limit (the max_*_bytes options)."""


class ValueNotAllowedError(TesseraError, ValueError):
    """TSR_E_VALUE: a value the field does not allow: text outside its
    choices or not UTF-8, or an input the component's own validation
    refused (``.type`` is pydantic's ``"literal_error"``; ``.loc`` the
    field's path, ``("inputs", "method")``). A 422 in Tesseract's terms."""


class CancelledError(TesseraError):
    """TSR_E_CANCELLED: the call was cancelled (``tsr_call_cancel``).

    Ctrl-C (or any signal handler that raises) during a call from the main
    thread raises the handler's exception instead: ``KeyboardInterrupt``.
    """


_CLASSES: dict[int, tuple[str, type[TesseraError]]] = {
    -1: ("TSR_E_ARGUMENT", ArgumentError),
    -2: ("TSR_E_NOMEM", OutOfMemoryError),
    -3: ("TSR_E_LOAD", LoadError),
    -4: ("TSR_E_ABI", AbiError),
    -5: ("TSR_E_DESCRIPTOR", DescriptorError),
    -6: ("TSR_E_UNSUPPORTED", UnsupportedError),
    -7: ("TSR_E_UNKNOWN_FIELD", UnknownFieldError),
    -8: ("TSR_E_MISSING", MissingError),
    -9: ("TSR_E_DTYPE", DtypeError),
    -10: ("TSR_E_SHAPE", ShapeError),
    -11: ("TSR_E_NOT_DIFFERENTIABLE", NotDifferentiableError),
    -12: ("TSR_E_PLUGIN", PluginError),
    -13: ("TSR_E_PLUGIN_RESULT", PluginResultError),
    -14: ("TSR_E_INIT", InitError),
    -15: ("TSR_E_PAYLOAD", PayloadError),
    -16: ("TSR_E_IO", IOFailure),
    -17: ("TSR_E_WORKER", WorkerError),
    -18: ("TSR_E_TIMEOUT", CallTimeoutError),
    -19: ("TSR_E_SHM", SharedMemoryError),
    -20: ("TSR_E_LIMIT", LimitError),
    -21: ("TSR_E_CANCELLED", CancelledError),
    -22: ("TSR_E_VALUE", ValueNotAllowedError),
}
_NAMES = {code: name for code, (name, _) in _CLASSES.items()}

# Named codes, e.g. tessera.errors.TSR_E_DTYPE == -9.
globals().update({name: code for code, name in _NAMES.items()})


def error_class(code: int) -> type[TesseraError]:
    """The exception class raised for a library code."""
    return _CLASSES.get(code, ("", TesseraError))[1]


_ext._set_error_types({code: cls for code, (_, cls) in _CLASSES.items()}, TesseraError, _NAMES)
