# SPDX-License-Identifier: MIT
# The types of tessera._ext, the C half of the package (src/ext): what
# editors and type checkers see of it. tests/python/test_typing.py checks
# it against the built module (mypy.stubtest where mypy is installed).
from collections.abc import Callable, Mapping
from typing import Any, final

from typing_extensions import disjoint_base

import numpy as np

HAVE_XLA_FFI: int
MAX_RANK: int
LIBRARY_VERSION: str

# Its instances have a C layout: a class cannot derive from it and another
# such type at once.
@disjoint_base
class Component:
    """A loaded Tessera component (use tessera.load)."""

    def __init__(
        self,
        path: str | bytes,
        options: Mapping[str, str] | None = None,
        config: Mapping[str, str] | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None: ...
    @property
    def closed(self) -> bool: ...
    @property
    def mode(self) -> str: ...
    @property
    def hvp_source(self) -> str: ...
    @property
    def _address(self) -> int: ...
    def close(self, /) -> None: ...
    def apply(self, inputs: Mapping[str, Any], /) -> dict[str, Any]: ...
    def _call(
        self,
        endpoint: str,
        wrt_in: tuple[str, ...],
        wrt_out: tuple[str, ...],
        inputs: Mapping[str, Any],
        seeds: Mapping[str, Any] | tuple[Mapping[str, Any], Mapping[str, Any]] | None = None,
        batch: int = 0,
        /,
    ) -> tuple[np.ndarray, ...]: ...
    def _abstract_eval(
        self, specs: tuple[tuple[tuple[int, ...], str] | bytes | None, ...], /
    ) -> tuple[tuple[tuple[int, ...], str] | None, ...]: ...
    def _schema(self, /) -> tuple[Any, ...]: ...
    def has_endpoint(self, name: str, native: bool = False, /) -> bool: ...
    def stats(self, /) -> dict[str, Any]: ...
    def restart(self, /) -> None: ...
    def empty(self, /, shape: int | tuple[int, ...], dtype: Any = "float64") -> np.ndarray: ...
    def _ffi_op(
        self,
        endpoint: str,
        wrt_in: tuple[str, ...],
        wrt_out: tuple[str, ...],
        input_indices: tuple[int, ...],
        seed_names: tuple[str, ...],
        batch: int,
        result_map: tuple[int, ...],
        /,
    ) -> FfiOp: ...

@final
class Slot:
    """One call object of a pool."""

@final
class Pool:
    """The idle call objects of one endpoint and one choice of wrt fields."""

@final
class ArenaBuffer:
    """Memory from tsr_component_alloc; the base of the arrays component.empty returns."""

@final
class ResultBuffer:
    """The memory of one result viewed in place: the base of its arrays."""

@final
class FfiOp:
    """What one tessera_call custom call runs; made by Component._ffi_op."""

    @property
    def handle(self) -> int: ...

def _set_error_types(
    classes: Mapping[int, type[BaseException]], fallback: type[BaseException],
    names: Mapping[int, str], /,
) -> None: ...
def _set_coerce(fn: Callable[..., np.ndarray], /) -> None: ...
def _set_nesting(flatten: Callable[..., dict[str, Any]], nest: Callable[..., Any], /) -> None: ...
def _set_values(encode: Callable[..., bytes], decode: Callable[..., Any], /) -> None: ...
def error_type(code: int, /) -> str: ...
def _close_all() -> None: ...
def strerror(code: int, /) -> str: ...
def _serve_start(
    component: Component, host: str, port: int, token: str | None, input_dir: str | None,
    output_dir: str | None, encoding: int, lz4: bool, max_body_bytes: int, threads: int, /,
) -> Any: ...
def _serve_port(server: Any, /) -> int: ...
def _serve_stop(server: Any, /) -> None: ...
def _debug_counts() -> dict[str, int]: ...
def _set_copy_limit(limit: int, /) -> int: ...
def _ffi_handler() -> Any: ...
