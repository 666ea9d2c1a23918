# SPDX-License-Identifier: MIT
"""The contract table: each case of the "One contract" table (docs/guides/contract.md), run
through every face of Tessera -- the C API (through ctypes, with the
"casting" option set to "same_kind"), the command line, the Python API --
and through tesseract-core's own in-process API on the same schema.

The component is tests/plugins/contract_table.c; its twin for Tesseract is
tests/pycomponents/contract_table/tesseract_api.py. A case gives the
request in Tesseract's form (inputs nested by the dots of the names); each
face turns it into its own form, and the answers are brought to one form:
either the outputs, nested, or an error as (location, kind). Every face of
Tessera must give the same answer, and Tesseract must give it too unless
the case says why it differs (docs/guides/contract.md says the same).
"""

from __future__ import annotations

import base64
import ctypes
import functools
import json
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

import tessera
from conftest import BUILD, ROOT, by_path, paths_kept, plugin_path

pytest.importorskip("tesseract_core")
from tesseract_core import Tesseract  # noqa: E402

CLI = BUILD / "bin" / "tessera"
TWIN = ROOT / "tests" / "pycomponents" / "contract_table" / "tesseract_api.py"
X = np.array([1.0, 2.0, 3.0])
COT = np.array([1.0, 0.5, -1.0])


# ---- answers in one form -------------------------------------------------

@dataclass(frozen=True)
class Refused:
    """A request refused: where (loc without "body") and which family of
    fault: "dtype", "shape", "missing", "unknown" or "argument"."""
    loc: tuple
    kind: str


# Tessera's codes and Tesseract's (pydantic's) error types, by family.
_KIND_OF_CODE = {"TSR_E_DTYPE": "dtype", "TSR_E_SHAPE": "shape", "TSR_E_MISSING": "missing",
                 "TSR_E_UNKNOWN_FIELD": "unknown", "TSR_E_ARGUMENT": "argument",
                 "TSR_E_PAYLOAD": "argument"}
_KIND_OF_TYPE = {"dtype_error": "dtype", "shape_error": "shape", "missing": "missing",
                 "extra_forbidden": "unknown", "array_value_out_of_range": "dtype",
                 "array_dtype_mismatch": "dtype", "array_dimensionality_mismatch": "shape",
                 "array_shape_mismatch": "shape", "value_error": "argument"}


def _loc(parts: Any) -> tuple:
    return tuple(int(p) if isinstance(p, str) and p.isdigit() else p for p in parts)


def _nest(flat: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in flat.items():
        *parents, leaf = name.split(".")
        node = out
        for p in parents:
            node = node.setdefault(p, {})
        node[leaf] = value
    return out


def same_answer(a: Any, b: Any, coarser_loc: bool = False) -> bool:
    """Whether answer a is b, or among b's errors; with coarser_loc, an
    error located at an object holding the place b names counts too."""
    if isinstance(b, tuple):
        return a in b or (coarser_loc and isinstance(a, Refused) and any(
            r.kind == a.kind and r.loc[:len(a.loc)] == a.loc for r in b))
    if isinstance(a, Refused) or isinstance(b, Refused):
        return a == b
    fa, fb = by_path(a), by_path(b)
    return fa.keys() == fb.keys() and all(
        np.allclose(np.asarray(fa[k], float), np.asarray(fb[k], float)) for k in fa)


# ---- the cases -------------------------------------------------------------

@dataclass
class Case:
    name: str
    inputs: dict[str, Any]
    vjp: tuple[list[str], list[str]] | None = None   # (vjp_inputs, vjp_outputs)
    # Faces that cannot express the request (the C API names fields by
    # their dotted paths: nesting is a matter of the JSON and Python faces).
    not_in: tuple[str, ...] = ()
    # Where Tessera deliberately answers otherwise than Tesseract, and why
    # (docs/guides/contract.md says the same).
    unlike_tesseract: str = ""
    # Why Tessera locates the fault at the object holding the place that
    # Tesseract names (docs/guides/contract.md says the same).
    coarser_loc: str = ""
    # Faces of Tessera that deliberately answer otherwise than the others.
    own_answer: dict[str, Callable[[Any], bool]] = field(default_factory=dict)


CASES = [
    Case("int32 array for a float64 field", {"data": {"x": X.astype(np.int32)}}),
    Case("float32 array for a float64 field", {"data": {"x": X.astype(np.float32)}}),
    Case("int64 value that fits a uint8 field", {"data": {"x": X}, "repeat": np.int64(3)}),
    Case("negative value for a uint8 field", {"data": {"x": X}, "repeat": np.int64(-1)}),
    Case("300 for a uint8 field", {"data": {"x": X}, "repeat": np.int64(300)}),
    Case("float for an integer field", {"data": {"x": X}, "repeat": np.float64(2.0)}),
    Case("complex array for a float64 field", {"data": {"x": X.astype(np.complex128)}}),
    Case("nested field given nested", {"data": {"x": X, "scale": np.float64(3.0)}}),
    Case("nested field given as a dotted key", {"data.x": X}, not_in=("c",),
         own_answer={"python": lambda a: not isinstance(a, Refused)},
         coarser_loc="a location of dotted parts cannot name a key holding a dot"),
    Case("field with a default left out", {"data": {"x": X}}),
    Case("optional field given", {"data": {"x": X}, "offset": np.ones(3)}),
    Case("required field missing", {"data": {}}),
    Case("unknown field", {"data": {"x": X}, "bogus": np.float64(1.0)}),
    Case("wrong rank", {"data": {"x": np.ones((2, 2))}}),
    Case("vjp", {"data": {"x": X}}, vjp=(["data.x", "data.scale"], ["out.y"])),
    Case("same field twice in vjp_inputs", {"data": {"x": X}},
         vjp=(["data.x", "data.x"], ["out.y"]),
         unlike_tesseract="Tesseract folds vjp_inputs into a set; Tessera refuses the "
                          "duplicate, because C numbers results by position in the list"),
]


# ---- the faces ---------------------------------------------------------------

def via_tesseract(case: Case, twin: Tesseract) -> Any:
    """The outputs, or every error pydantic reports (a tuple of Refused):
    Tessera reports one, which must be among them."""
    from pydantic import ValidationError
    try:
        if case.vjp:
            ins, outs = case.vjp
            return twin.vector_jacobian_product(case.inputs, ins, outs, {"out.y": COT})
        return twin.apply(case.inputs)
    except ValidationError as exc:
        return tuple(Refused(_loc(e["loc"]), _KIND_OF_TYPE.get(e["type"], e["type"]))
                     for e in exc.errors())


def via_python(case: Case, component: tessera.Component) -> Any:
    try:
        if case.vjp:
            ins, outs = case.vjp
            return component.vjp(case.inputs, ins, outs, {"out.y": COT})
        return component.apply(case.inputs)
    except tessera.TesseraError as exc:
        return Refused(_loc(exc.loc), _KIND_OF_CODE.get(exc.code_name, exc.code_name))


def _encoded(value: Any) -> dict[str, Any]:
    """An encoded array with the value's own dtype (base64: it holds
    complex numbers too)."""
    arr = np.ascontiguousarray(np.asarray(value), dtype=np.asarray(value).dtype.newbyteorder("<"))
    return {"object_type": "array", "shape": list(np.shape(value)), "dtype": arr.dtype.name,
            "data": {"buffer": base64.b64encode(arr.tobytes()).decode(), "encoding": "base64"}}


def via_cli(case: Case, tmp: Path) -> Any:
    def encode(node: Any) -> Any:
        return {k: encode(v) for k, v in node.items()} if isinstance(node, dict) else _encoded(node)
    body: dict[str, Any] = {"inputs": encode(case.inputs)}
    command = "apply"
    if case.vjp:
        command = "vjp"
        body.update(vjp_inputs=case.vjp[0], vjp_outputs=case.vjp[1],
                    cotangent_vector={"out.y": _encoded(COT)})
    request = tmp / "request.json"
    request.write_text(json.dumps(body))
    run = subprocess.run([str(CLI), command, "-f", "json+base64", "--error-format", "json",
                          str(plugin_path("contract_table")), f"@{request}"],
                         capture_output=True, text=True, timeout=60)
    if run.returncode == 0:
        return _decode(json.loads(run.stdout))
    detail = json.loads(run.stderr.strip().splitlines()[-1])["detail"][0]
    loc = _loc(detail["loc"])
    assert loc[0] == "body", detail
    return Refused(loc[1:], _KIND_OF_TYPE.get(detail["type"], detail["type"]))


def _decode(node: Any) -> Any:
    if isinstance(node, dict) and node.get("object_type") == "array":
        raw = base64.b64decode(node["data"]["buffer"])
        return np.frombuffer(raw, dtype=np.dtype(node["dtype"]).newbyteorder("<")).reshape(
            node["shape"])
    if isinstance(node, dict):
        return {k: _decode(v) for k, v in node.items()}
    return np.asarray(node)


class TsrArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * 16)]


class TsrError(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024),
                ("loc", ctypes.c_char * 256)]


@functools.lru_cache(maxsize=None)
def c_library() -> ctypes.CDLL:
    """libtessera.so with the signatures this test calls."""
    lib = ctypes.CDLL(str(BUILD / "lib" / "libtessera.so"))
    lib.tsr_options_new.restype = ctypes.c_void_p
    lib.tsr_options_set.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                    ctypes.POINTER(TsrError)]
    lib.tsr_options_free.argtypes = [ctypes.c_void_p]
    lib.tsr_open.argtypes = [ctypes.c_char_p, ctypes.c_void_p,
                             ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(TsrError)]
    lib.tsr_close.argtypes = [ctypes.c_void_p]
    lib.tsr_call_new.restype = ctypes.c_void_p
    lib.tsr_call_new.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.tsr_call_free.argtypes = [ctypes.c_void_p]
    lib.tsr_call_set_input.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                       ctypes.POINTER(TsrArray)]
    lib.tsr_call_set_wrt.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.c_int32, ctypes.POINTER(ctypes.c_char_p),
                                     ctypes.c_int32]
    lib.tsr_call_set_seed.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                                      ctypes.POINTER(TsrArray)]
    lib.tsr_call_run.argtypes = [ctypes.c_void_p]
    lib.tsr_call_errcode.argtypes = [ctypes.c_void_p]
    for fn in ("tsr_call_errmsg", "tsr_call_errloc"):
        getattr(lib, fn).argtypes = [ctypes.c_void_p]
        getattr(lib, fn).restype = ctypes.c_char_p
    lib.tsr_call_output.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    lib.tsr_call_output.restype = ctypes.POINTER(TsrArray)
    lib.tsr_dtype_from_name.argtypes = [ctypes.c_char_p]
    lib.tsr_dtype_name.argtypes = [ctypes.c_int]
    lib.tsr_dtype_name.restype = ctypes.c_char_p
    lib.tsr_strerror.restype = ctypes.c_char_p
    return lib


class CApi:
    """The C API through ctypes: tsr_open with casting=same_kind, a call,
    inputs bound by their dotted names."""

    def __init__(self) -> None:
        lib = self.lib = c_library()
        opts = lib.tsr_options_new()
        err = TsrError()
        assert lib.tsr_options_set(opts, b"casting", b"same_kind", ctypes.byref(err)) == 0, \
            err.message
        handle = ctypes.c_void_p()
        rc = lib.tsr_open(str(plugin_path("contract_table")).encode(), opts,
                          ctypes.byref(handle), ctypes.byref(err))
        lib.tsr_options_free(opts)
        assert rc == 0, err.message
        self.component = handle


    def close(self) -> None:
        self.lib.tsr_close(self.component)

    def _array(self, value: Any, keep: list) -> TsrArray:
        arr = np.require(value, requirements="C")
        keep.append(arr)
        a = TsrArray(data=arr.ctypes.data, dtype=self.lib.tsr_dtype_from_name(
            arr.dtype.name.encode()), rank=arr.ndim)
        for d, n in enumerate(arr.shape):
            a.shape[d] = n
        return a

    def _result(self, a: TsrArray) -> np.ndarray:
        dt = np.dtype(self.lib.tsr_dtype_name(a.dtype).decode())
        shape = tuple(a.shape[d] for d in range(a.rank))
        n = int(np.prod(shape)) if shape else 1
        buf = (ctypes.c_char * (n * dt.itemsize)).from_address(a.data)
        return np.frombuffer(bytes(buf), dt).reshape(shape)

    def run(self, case: Case) -> Any:
        lib, keep = self.lib, []
        call = lib.tsr_call_new(self.component, 2 if case.vjp else 0)
        try:
            def refused() -> Refused:
                code = lib.tsr_call_errcode(call)
                name = {-1: "TSR_E_ARGUMENT", -7: "TSR_E_UNKNOWN_FIELD", -8: "TSR_E_MISSING",
                        -9: "TSR_E_DTYPE", -10: "TSR_E_SHAPE"}.get(code, str(code))
                loc = lib.tsr_call_errloc(call).decode()
                return Refused(_loc(loc.split(".")) if loc else (), _KIND_OF_CODE.get(name, name))
            for name, value in by_path(case.inputs).items():
                if lib.tsr_call_set_input(call, name.encode(), ctypes.byref(
                        self._array(value, keep))) != 0:
                    return refused()
            if case.vjp:
                ins = (ctypes.c_char_p * 2)(*[n.encode() for n in case.vjp[0]])
                outs = (ctypes.c_char_p * 1)(*[n.encode() for n in case.vjp[1]])
                if lib.tsr_call_set_wrt(call, ins, len(case.vjp[0]), outs, 1) != 0:
                    return refused()
                if lib.tsr_call_set_seed(call, b"out.y", ctypes.byref(
                        self._array(COT, keep))) != 0:
                    return refused()
            if lib.tsr_call_run(call) != 0:
                return refused()
            names = case.vjp[0] if case.vjp else ["out.y", "out.total"]
            flat = {n: self._result(lib.tsr_call_output(call, n.encode()).contents)
                    for n in names}
            return flat if case.vjp else _nest(flat)
        finally:
            lib.tsr_call_free(call)


# ---- the table -----------------------------------------------------------------

@pytest.fixture(scope="module")
def faces(tmp_path_factory: pytest.TempPathFactory):
    c_api = CApi()
    component = tessera.load(plugin_path("contract_table"))
    with paths_kept():
        twin = Tesseract.from_tesseract_api(str(TWIN))
    tmp = tmp_path_factory.mktemp("cli")
    yield {
        "c": c_api.run,
        "cli": lambda case: via_cli(case, tmp),
        "python": lambda case: via_python(case, component),
        "tesseract": lambda case: via_tesseract(case, twin),
    }
    component.close()
    c_api.close()


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_one_answer_per_row(case: Case, faces) -> None:
    answers = {face: run(case) for face, run in faces.items() if face not in case.not_in}
    tesseract = answers.pop("tesseract")
    for face, check in case.own_answer.items():
        assert check(answers.pop(face)), (face, case.name)
    reference = next(iter(answers.values()))
    for face, answer in answers.items():
        assert same_answer(answer, reference), (face, answer, reference)
    if case.unlike_tesseract:
        assert not same_answer(reference, tesseract), case.unlike_tesseract
    else:
        assert same_answer(reference, tesseract, bool(case.coarser_loc)), (reference, tesseract)


def test_the_c_face_without_the_option_keeps_exact_dtypes() -> None:
    lib = c_library()
    err, handle = TsrError(), ctypes.c_void_p()
    assert lib.tsr_open(str(plugin_path("contract_table")).encode(), None,
                        ctypes.byref(handle), ctypes.byref(err)) == 0
    call = lib.tsr_call_new(handle, 0)
    x = np.array([1, 2, 3], np.int32)
    a = TsrArray(data=x.ctypes.data, dtype=lib.tsr_dtype_from_name(b"int32"), rank=1)
    a.shape[0] = 3
    lib.tsr_call_set_input(call, b"data.x", ctypes.byref(a))
    assert lib.tsr_call_run(call) == -9
    assert lib.tsr_call_errloc(call) == b"inputs.data.x"
    lib.tsr_call_free(call)
    lib.tsr_close(handle)
