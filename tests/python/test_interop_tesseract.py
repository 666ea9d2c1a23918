# SPDX-License-Identifier: MIT
"""Interoperability with the real tesseract-core (from PyPI).

Payloads written by tesseract-core's own encoders -- the runtime's
serialiser of array fields (output_to_bytes over Array fields: json,
json+base64, json+binref, lz4 on and off) and its Python client's request
encoder (which leaves "object_type" out) -- reach a Tessera plugin bit for
bit through `tessera apply`; and what `tessera apply` writes (json,
json+base64, json+binref; lz4, checksums, an output directory) decodes bit
for bit with tesseract-core's decoders: the runtime's strict model and the
client's response decoder.

The plugins are echoes (tests/plugins/echo_dtypes.c, echo_complex.c): every
input comes back as the output of the same name, so a result shows what the
payload was decoded to. noop and vectoradd check real components.
"""

from __future__ import annotations

import functools
import json
import subprocess
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tesseract_core")

from pydantic import BaseModel, ValidationError, create_model  # noqa: E402
from tesseract_core.runtime import Array  # noqa: E402
from tesseract_core.runtime.file_interactions import output_to_bytes  # noqa: E402
from tesseract_core.sdk.tesseract import (  # noqa: E402
    _decode_array,
    _encode_array,
    _encode_payload,
)

from conftest import BUILD, plugin_path  # noqa: E402

CLI = BUILD / "bin" / "tessera"
REAL = ("float64", "float32", "int32", "int64", "bool", "uint8")
COMPLEX = ("complex128", "complex64")
SHAPES = {
    "regular": ((), (5,), (2, 3), (2, 3, 2)),
    "empty": ((), (0,), (3, 0), (2, 0, 4)),
}
# How tesseract-core writes arrays: (format, compression).
ENCODINGS = [("json", None), ("json+base64", None), ("json+base64", "lz4"),
             ("json+binref", None), ("json+binref", "lz4")]
BINARY = [e for e in ENCODINGS if e[0] != "json"]


# ---- arrays ---------------------------------------------------------------

def values(dtype: str, shape: tuple, rng: np.random.Generator, nonfinite: bool) -> np.ndarray:
    """Random values of a dtype, led by its extremes: the largest and
    smallest numbers, -0.0 and a subnormal for floats (and infinities and a
    NaN with a payload when the encoding can carry them)."""
    dt = np.dtype(dtype)
    size = int(np.prod(shape))
    if dt.kind == "b":
        flat = rng.integers(0, 2, size).astype(bool)
        special = [True, False]
    elif dt.kind in "iu":
        info = np.iinfo(dt)
        flat = rng.integers(info.min, info.max, size, dtype=dt, endpoint=True)
        special = [info.min, info.max, 0]
    else:
        real = np.dtype({"complex128": "float64", "complex64": "float32"}.get(dtype, dtype))
        fi = np.finfo(real)
        special = [-0.0, fi.max, -fi.max, fi.smallest_subnormal, fi.tiny, fi.eps]
        if nonfinite:
            bits = (np.array([0x7FF8000000000123], np.uint64) if real == np.float64
                    else np.array([0x7FC00123], np.uint32))
            special += [np.inf, -np.inf, bits.view(real)[0]]
        flat = rng.standard_normal(size).astype(real)
        if dt.kind == "c":
            flat = flat + 1j * rng.standard_normal(size).astype(real)
            special = [complex(x, -x) for x in special]
    flat = np.asarray(flat, dtype=dt)
    k = min(size, len(special))
    with np.errstate(invalid="ignore", over="ignore"):
        flat[:k] = np.asarray(special[:k]).astype(dt)
    return flat.reshape(shape)


def echo_arrays(dtypes, shapes: str, seed: int, nonfinite: bool = False) -> dict:
    """One array per field of an echo plugin: "<dtype>_<rank>"."""
    rng = np.random.default_rng(seed)
    return {f"{d}_{r}": values(d, s, rng, nonfinite)
            for d in dtypes for r, s in enumerate(SHAPES[shapes])}


def assert_same_bits(got: dict, want: dict) -> None:
    assert sorted(got) == sorted(want)
    for name, w in want.items():
        g = np.asarray(got[name])
        assert g.dtype == w.dtype, f"{name}: dtype {g.dtype}, sent {w.dtype}"
        assert g.shape == w.shape, f"{name}: shape {g.shape}, sent {w.shape}"
        assert g.tobytes() == np.ascontiguousarray(w).tobytes(), f"{name}: the bits differ"


# ---- tesseract-core's models of the echo plugins ----------------------------

@functools.lru_cache(maxsize=None)
def models(dtypes: tuple) -> tuple[type[BaseModel], type[BaseModel], type[BaseModel]]:
    """Inputs, the request {"inputs": ...} and the outputs, as a Tesseract
    would declare them."""
    fields = {f"{d}_{r}": (Array[(None,) * r, d], ...) for d in dtypes for r in range(4)}
    inputs = create_model("EchoInputs", **fields)
    request = create_model("EchoRequest", inputs=(inputs, ...))
    outputs = create_model("EchoOutputs", **fields)
    return inputs, request, outputs


def runtime_payload(dtypes: tuple, arrays: dict, fmt: str, compression, base_dir: Path) -> bytes:
    """The request as tesseract-core's runtime serialises it."""
    inputs, request, _ = models(dtypes)
    return output_to_bytes(request(inputs=inputs(**arrays)), fmt, base_dir=base_dir,
                           compression=compression)


# ---- the command line -----------------------------------------------------

def tessera(*args: str, cwd: Path | None = None) -> str:
    assert CLI.exists(), f"{CLI} is missing: build first"
    done = subprocess.run([str(CLI), *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)
    assert done.returncode == 0, f"tessera {' '.join(args[:3])}: {done.stderr}"
    return done.stdout


def echo(plugin: str, payload: bytes, tmp: Path, *options: str) -> str:
    """`tessera apply` of a payload file whose binrefs lie in tmp."""
    path = tmp / "payload.json"
    path.write_bytes(payload)
    return tessera("apply", "--input-path", str(tmp), *options, str(plugin_path(plugin)),
                   f"@{path}")


def client_decode(text: str, output_path: Path | None = None) -> dict:
    """A response as tesseract-core's client decodes it."""
    return {k: _decode_array(v, output_path=output_path) for k, v in json.loads(text).items()}


# ---- (a) payloads from tesseract-core, read by Tessera ----------------------

@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize(("fmt", "compression"), ENCODINGS)
def test_runtime_encoded_payloads_reach_the_plugin_bit_for_bit(tmp_path, fmt, compression, shapes):
    # JSON has no infinities or NaN (orjson writes null): only finite
    # extremes there.
    arrays = echo_arrays(REAL, shapes, seed=1, nonfinite=fmt != "json")
    payload = runtime_payload(REAL, arrays, fmt, compression, tmp_path)
    if fmt == "json+binref":
        assert list(tmp_path.glob("*.bin")), "tesseract-core wrote no .bin file"
    assert_same_bits(client_decode(echo("echo_dtypes", payload, tmp_path, "-f", "json+base64")),
                     arrays)


@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize(("fmt", "compression"), BINARY)
def test_complex_payloads_reach_the_plugin_bit_for_bit(tmp_path, fmt, compression, shapes):
    arrays = echo_arrays(COMPLEX, shapes, seed=2, nonfinite=True)
    payload = runtime_payload(COMPLEX, arrays, fmt, compression, tmp_path)
    assert_same_bits(client_decode(echo("echo_complex", payload, tmp_path, "-f", "json+base64")),
                     arrays)


@pytest.mark.parametrize("fmt", ["json+base64", "json+binref"])
def test_client_encoded_requests_are_read(tmp_path, fmt):
    # The client's encoder writes no "object_type" (the runtime defaults it).
    arrays = echo_arrays(REAL, "regular", seed=3, nonfinite=True)
    with _encode_payload({"inputs": arrays}, output_format=fmt, input_path=tmp_path) as request:
        first = next(iter(request["inputs"].values()))
        assert "object_type" not in first
        assert first["data"]["encoding"] == fmt.split("+")[1]
        text = json.dumps(request).encode()
        out = echo("echo_dtypes", text, tmp_path, "-f", "json+base64")
    assert_same_bits(client_decode(out), arrays)


def test_client_raw_encoding_is_read_as_json(tmp_path):
    arrays = echo_arrays(REAL, "regular", seed=4)
    request = {"inputs": {k: _encode_array(v, "raw") for k, v in arrays.items()}}
    out = echo("echo_dtypes", json.dumps(request).encode(), tmp_path, "-f", "json+base64")
    assert_same_bits(client_decode(out), arrays)


class NoopInputs(BaseModel):
    x: Array[(None,), "float64"]


class NoopRequest(BaseModel):
    inputs: NoopInputs


class VectoraddInputs(BaseModel):
    a: Array[(None,), "int32"]   # converted to the plugin's float64 by Tessera
    b: Array[(None,), "float64"]
    s: Array[(), "float64"]


class VectoraddRequest(BaseModel):
    inputs: VectoraddInputs


@pytest.mark.parametrize(("fmt", "compression"), ENCODINGS)
def test_bundled_plugins_compute_from_runtime_encoded_payloads(tmp_path, fmt, compression):
    rng = np.random.default_rng(5)
    x = rng.standard_normal(7)
    payload = output_to_bytes(NoopRequest(inputs=NoopInputs(x=x)), fmt, base_dir=tmp_path,
                              compression=compression)
    y = client_decode(echo("noop", payload, tmp_path, "-f", "json+base64"))["y"]
    assert y.dtype == np.float64 and y.tobytes() == x.tobytes()

    a = rng.integers(-1000, 1000, 6, dtype=np.int32)
    b, s = rng.standard_normal(6), np.float64(-2.5)
    payload = output_to_bytes(VectoraddRequest(inputs=VectoraddInputs(a=a, b=b, s=s)), fmt,
                              base_dir=tmp_path, compression=compression)
    result = client_decode(echo("vectoradd", payload, tmp_path, "-f", "json+base64"))["result"]
    np.testing.assert_allclose(result, a.astype(np.float64) * s + b, rtol=1e-15, atol=0)


# ---- (b) Tessera's outputs, decoded by tesseract-core ----------------------

def tessera_outputs(tmp: Path, dtypes: tuple, arrays: dict, fmt: str, *options: str,
                    output_path: Path | None = None) -> str:
    payload = runtime_payload(dtypes, arrays, "json+base64", None, tmp)
    plugin = "echo_complex" if dtypes == COMPLEX else "echo_dtypes"
    extra = ["--output-path", str(output_path)] if output_path else []
    return echo(plugin, payload, tmp, "-f", fmt, *extra, *options)


def runtime_decode(dtypes: tuple, text: str, base_dir: Path) -> dict:
    """A response as tesseract-core's runtime validates it (strict)."""
    outputs = models(dtypes)[2].model_validate_json(text, context={"base_dir": str(base_dir)})
    return {k: getattr(outputs, k) for k in type(outputs).model_fields}


@pytest.mark.parametrize("shapes", sorted(SHAPES))
@pytest.mark.parametrize("lz4", [False, True])
@pytest.mark.parametrize("fmt", ["json", "json+base64", "json+binref"])
def test_tessera_outputs_decode_with_tesseract_core(tmp_path, fmt, lz4, shapes):
    arrays = echo_arrays(REAL, shapes, seed=6, nonfinite=fmt != "json")
    out_dir = tmp_path / "out"
    options = ["--compression", "lz4"] if lz4 else []
    text = tessera_outputs(tmp_path, REAL, arrays, fmt, *options, output_path=out_dir)
    encoded = json.loads(text)
    encodings = {v["data"]["encoding"] for v in encoded.values()}
    assert encodings == {fmt.split("+")[-1]}
    if lz4 and fmt != "json":
        assert {v["data"].get("compression") for v in encoded.values()} == {"lz4"}
    if fmt == "json+binref":
        for v in encoded.values():
            name = v["data"]["buffer"].split(":")[0]
            assert not Path(name).is_absolute() and (out_dir / name).is_file()
    assert_same_bits(runtime_decode(REAL, text, out_dir), arrays)
    assert_same_bits(client_decode(text, out_dir), arrays)


@pytest.mark.parametrize("lz4", [False, True])
@pytest.mark.parametrize("fmt", ["json+base64", "json+binref"])
def test_complex_outputs_decode_with_tesseract_core(tmp_path, fmt, lz4):
    arrays = echo_arrays(COMPLEX, "regular", seed=7, nonfinite=True)
    text = tessera_outputs(tmp_path, COMPLEX, arrays, fmt,
                           *(["--compression", "lz4"] if lz4 else []), output_path=tmp_path)
    assert_same_bits(runtime_decode(COMPLEX, text, tmp_path), arrays)
    assert_same_bits(client_decode(text, tmp_path), arrays)


@pytest.mark.parametrize("fmt", ["json+base64", "json+binref"])
def test_outputs_with_checksums_decode_with_the_client(tmp_path, fmt):
    # The client's decoder reads past the extra key; the runtime's strict
    # model refuses it, which is why payloads for Tesseract go without one.
    arrays = echo_arrays(REAL, "regular", seed=8, nonfinite=True)
    text = tessera_outputs(tmp_path, REAL, arrays, fmt, "--checksum", "--compression", "lz4",
                           output_path=tmp_path)
    assert all(v["data"]["checksum"].startswith("xxh3:") for v in json.loads(text).values())
    assert_same_bits(client_decode(text, tmp_path), arrays)
    with pytest.raises(ValidationError, match="checksum"):
        runtime_decode(REAL, text, tmp_path)


def test_binref_outputs_default_to_the_working_directory(tmp_path):
    arrays = echo_arrays(REAL, "regular", seed=9)
    payload = runtime_payload(REAL, arrays, "json", None, tmp_path)
    (tmp_path / "payload.json").write_bytes(payload)
    work = tmp_path / "work"
    work.mkdir()
    text = tessera("apply", "-f", "json+binref", str(plugin_path("echo_dtypes")),
                   f"@{tmp_path / 'payload.json'}", cwd=work)
    assert list(work.glob("*.bin"))
    assert_same_bits(runtime_decode(REAL, text, work), arrays)


def test_jacobian_outputs_decode_with_the_client(tmp_path):
    # {"result": {"a": ..., "b": ..., "s": ...}}, nested as Tesseract writes it
    a, b, s = np.array([1.5, -2.0, 3.25]), np.array([0.5, 4.0, -1.0]), 3.0
    request = {"inputs": {"a": a.tolist(), "b": b.tolist(), "s": s},
               "jac_inputs": ["a", "b", "s"], "jac_outputs": ["result"]}
    text = tessera("jacobian", "-f", "json+binref", "--output-path", str(tmp_path),
                   str(plugin_path("vectoradd")), json.dumps(request))
    blocks = {k: _decode_array(v, output_path=tmp_path)
              for k, v in json.loads(text)["result"].items()}
    np.testing.assert_array_equal(blocks["a"], s * np.eye(3))
    np.testing.assert_array_equal(blocks["b"], np.eye(3))
    np.testing.assert_array_equal(blocks["s"], a)
