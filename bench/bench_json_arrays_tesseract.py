#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A json-encoded float64 array ("encoding": "json", nested lists of
numbers) read and written by tesseract-core's own array models and by
Tessera, in the same run.

tesseract-core: a pydantic model with one ``Array[(None,), Float64]``
field, ``model_validate_json`` of the payload (decode) and
``model_dump_json(context={"array_encoding": "json"})`` (encode), which is
what its runtime does with a request and a response. Tessera: the public
functions ``tsr_array_from_json`` and ``tsr_array_to_json`` through ctypes
(the Python bindings have no JSON array function of their own), on the
same text, the result a NumPy array over the decoded buffer (decode) and a
Python ``str`` (encode), so both sides end in the same Python objects.
``--lib-today`` adds the same rows for another libtessera (an older build).

    python3 bench/bench_json_arrays_tesseract.py [--quick] [--n N] [--csv PATH]
        [--lib PATH] [--lib-today PATH]

Prints a table and writes CSV (default build/bench/results/
json_arrays_tesseract.csv); medians of interleaved batches, of the wall
time and of the thread's CPU time (which a busy machine disturbs least). The verdict
line compares Tessera's decode + encode with tesseract-core's (budget:
faster). Exit status 0 whatever the verdict (a report, not a test).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("TESSERA_BUILD_DIR", os.path.join(ROOT, "build"))

TSR_FLOAT64 = 12
TSR_ENCODING_JSON = 0
TSR_MAX_RANK = 16


class TsrArray(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int), ("rank", ctypes.c_int32),
                ("shape", ctypes.c_int64 * TSR_MAX_RANK)]


class TesseraJson:
    """tsr_array_from_json / tsr_array_to_json of one libtessera."""

    def __init__(self, path: str) -> None:
        lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        lib.tsr_array_from_json.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_int,
                                            ctypes.POINTER(TsrArray),
                                            ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        lib.tsr_array_to_json.argtypes = [ctypes.POINTER(TsrArray), ctypes.c_int,
                                          ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]
        lib.tsr_array_buffer_free.argtypes = [ctypes.c_void_p]
        lib.tsr_json_free.argtypes = [ctypes.c_void_p]
        self.lib = lib
        self.err = ctypes.create_string_buffer(4096)  # a tsr_error, struct_size 0

    def decode(self, text: bytes) -> np.ndarray:
        a = TsrArray()
        buf = ctypes.c_void_p()
        if self.lib.tsr_array_from_json(text, len(text), TSR_FLOAT64, ctypes.byref(a),
                                        ctypes.byref(buf), self.err) != 0:
            raise RuntimeError(self.err.raw[8:200])
        n = a.shape[0]
        out = np.ctypeslib.as_array((ctypes.c_double * n).from_address(a.data)).copy()
        self.lib.tsr_array_buffer_free(buf)
        return out

    def encode(self, x: np.ndarray) -> str:
        a = TsrArray(x.ctypes.data, TSR_FLOAT64, 1)
        a.shape[0] = x.size
        out = ctypes.c_void_p()
        if self.lib.tsr_array_to_json(ctypes.byref(a), TSR_ENCODING_JSON, ctypes.byref(out),
                                      self.err) != 0:
            raise RuntimeError(self.err.raw[8:200])
        text = ctypes.string_at(out.value).decode()
        self.lib.tsr_json_free(out)
        return text


def verdict(tessera_s: float, tesseract_s: float) -> str:
    """The budget line: Tessera's decode + encode against tesseract-core's."""
    x = tesseract_s / tessera_s
    return f"{x:.1f}x tesseract-core (budget >= 1x: {'met' if x >= 1 else 'NOT met'})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="1000 values, 3 batches")
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--lib", default=os.path.join(BUILD, "lib", "libtessera.so"))
    ap.add_argument("--lib-today", default=None)
    ap.add_argument("--csv", default=os.path.join(BUILD, "bench", "results",
                                                  "json_arrays_tesseract.csv"))
    args = ap.parse_args()
    n, reps = (1000, 3) if args.quick else (args.n, args.reps)

    from pydantic import BaseModel
    from tesseract_core.runtime import Array, Float64

    class Inputs(BaseModel):
        x: Array[(None,), Float64]

    rng = np.random.default_rng(7)
    x = rng.uniform(-1.0, 1.0, n)
    impls = {"tessera": TesseraJson(args.lib)}
    if args.lib_today:
        impls["tessera --lib-today"] = TesseraJson(args.lib_today)

    model = Inputs(x=x)
    payload = model.model_dump_json(context={"array_encoding": "json"})
    body = payload[payload.index(":") + 1:-1]  # the encoded array itself
    body_bytes = body.encode()
    # Both sides read what the other writes, to the bit.
    assert np.array_equal(impls["tessera"].decode(body_bytes), x)
    assert np.array_equal(Inputs.model_validate_json('{"x":' + impls["tessera"].encode(x) +
                                                     "}").x, x)

    ops = {("tesseract-core", "decode"): lambda: Inputs.model_validate_json(payload),
           ("tesseract-core", "encode"):
               lambda: model.model_dump_json(context={"array_encoding": "json"})}
    for name, impl in impls.items():
        ops[(name, "decode")] = lambda impl=impl: impl.decode(body_bytes)
        ops[(name, "encode")] = lambda impl=impl: impl.encode(x)
    times: dict[tuple[str, str], list[float]] = {k: [] for k in ops}
    cpu: dict[tuple[str, str], list[float]] = {k: [] for k in ops}
    for _ in range(reps):
        for key, fn in ops.items():
            c0, t0 = time.thread_time(), time.perf_counter()
            fn()
            times[key].append(time.perf_counter() - t0)
            cpu[key].append(time.thread_time() - c0)
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}

    rows = []
    print(f"{n} float64 values, {len(body_bytes) / 1e6:.1f} MB of JSON, median of {reps}")
    print(f"{'impl':<22} {'op':<7} {'ms':>9} {'MB/s':>8} {'ns/value':>9} {'x tesseract-core':>17}"
          f" {'cpu ms':>9} {'cpu x':>6}")
    for (name, op), s in med.items():
        x_tc = med[("tesseract-core", op)] / s
        c = med_cpu[(name, op)]
        xc = med_cpu[("tesseract-core", op)] / c if c > 0 else float("nan")
        rows.append([n, name, op, f"{s * 1e9:.0f}", f"{len(body_bytes) / s / 1e6:.1f}",
                     f"{s * 1e9 / n:.1f}", f"{x_tc:.2f}", f"{c * 1e9:.0f}", f"{xc:.2f}"])
        print(f"{name:<22} {op:<7} {s * 1e3:9.2f} {len(body_bytes) / s / 1e6:8.1f} "
              f"{s * 1e9 / n:9.1f} {x_tc:17.2f} {c * 1e3:9.2f} {xc:6.2f}")
    for name in impls:
        both = med[(name, "decode")] + med[(name, "encode")]
        tc = med[("tesseract-core", "decode")] + med[("tesseract-core", "encode")]
        print(f"{name}, decode + encode: {both * 1e3:.1f} ms against {tc * 1e3:.1f} ms: "
              f"{verdict(both, tc)}")
    os.makedirs(os.path.dirname(args.csv), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["n", "impl", "op", "median_ns", "mb_per_s", "ns_per_value",
                    "x_vs_tesseract_core", "median_cpu_ns", "cpu_x_vs_tesseract_core"])
        w.writerows(rows)
    print(f"csv: {args.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
