# SPDX-License-Identifier: MIT
"""Tessera from Python: load a component (a plugin ``.so``) in-process, in
its own link-map namespace or in a worker process, and call it and its
derivatives with NumPy, PyTorch or JAX arrays, without copying them.

    import tessera
    with tessera.load("build/plugins/rosenbrock.so") as rosen:
        out = rosen.apply({"x": x, "a": 1.0, "b": 100.0})    # {"value": array}

``tessera.jax`` makes components JAX primitives (jit, grad, jvp, vjp,
jacfwd, jacrev, vmap, and second derivatives such as hessian through the
component's hvp); ``tessera.torch`` makes them autograd Functions (double
backward included).
"""

# No `from __future__ import annotations` and no plain imports here:
# every name this module binds is public (in __all__) or starts with _.
import atexit as _atexit

from . import _coerce, _ext, _nesting, _values
from ._component import Component, load
from ._errors import (
    AbiError,
    ArgumentError,
    CallTimeoutError,
    CancelledError,
    DescriptorError,
    DtypeError,
    InitError,
    IOFailure,
    LimitError,
    LoadError,
    MissingError,
    NotDifferentiableError,
    OutOfMemoryError,
    PayloadError,
    PluginError,
    PluginResultError,
    ShapeError,
    SharedMemoryError,
    TesseraError,
    UnknownFieldError,
    UnsupportedError,
    ValueNotAllowedError,
    WorkerError,
    error_class,
)
from ._schema import Field, Schema, ShapeDtype
from ._serve import Server, serve

# One version for the package and the library, written once in CMake's
# project(tessera VERSION ...); pyproject.toml reads it from there too.
LIBRARY_VERSION: str = _ext.LIBRARY_VERSION
__version__ = LIBRARY_VERSION

_ext._set_coerce(_coerce.coerce)
_ext._set_nesting(_nesting.flatten_inputs, _nesting.nest)
_ext._set_values(_values.encode, _values.decode)
# Components still open at exit are closed, so that no worker process or
# shared-memory segment outlives the interpreter.
_atexit.register(_ext._close_all)

__all__ = [
    "AbiError",
    "ArgumentError",
    "CallTimeoutError",
    "CancelledError",
    "Component",
    "DescriptorError",
    "DtypeError",
    "Field",
    "InitError",
    "IOFailure",
    "LIBRARY_VERSION",
    "LimitError",
    "LoadError",
    "MissingError",
    "NotDifferentiableError",
    "OutOfMemoryError",
    "PayloadError",
    "PluginError",
    "PluginResultError",
    "Schema",
    "Server",
    "ShapeDtype",
    "ShapeError",
    "SharedMemoryError",
    "TesseraError",
    "UnknownFieldError",
    "UnsupportedError",
    "ValueNotAllowedError",
    "WorkerError",
    "error_class",
    "load",
    "serve",
]
