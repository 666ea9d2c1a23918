#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Calling a served Tesseract: Tessera's remote backend against
tesseract-core's own client, on the same `tesseract-runtime serve` of
bench/tesseract_noop (y = x), in the same run.

Rows, for x of 1e3 and of 1e6 float64:
  from_url              Tesseract.from_url(url).apply: tesseract-core's client
                        (requests), answers in the server's default (json): the baseline
  from_url base64       the same, asking for json+base64 answers (with_encoding)
  tessera               tessera.load(url).apply from this Python (json+base64 answers)
  tessera C host        one tsr_call_run (ctypes) on a call prepared once: the
                        library alone, no Python on the call's path

    python3 bench/remote_client.py [--quick] [--csv PATH]

Prints a table (median seconds per call of interleaved batches, and the
ratio to from_url) and writes CSV (default build/bench/results/remote_client.csv).
Loopback only; the server is started and stopped here. Exit status 0
unless the server cannot be started.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import os
import statistics
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
NOOP = ROOT / "bench" / "tesseract_noop" / "tesseract_api.py"
sys.path.insert(0, str(ROOT / "bench"))
# tests/support/servers.py: starting a server and waiting until healthy,
# shared with the tests and the examples.
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import Server, ServerError, runtime_serve_argv, tesseract_runtime  # noqa: E402

from bench_python import ctypes_library, per_call  # noqa: E402
from python_component import PreparedCall  # noqa: E402

import tessera  # noqa: E402


@contextlib.contextmanager
def served(api: Path, log: Path) -> Iterator[str]:
    if tesseract_runtime() is None:
        sys.exit("tesseract-runtime is not installed (pip install 'tesseract-core[runtime]')")
    # tesseract-runtime writes a run_<id> folder per request into its
    # output path: a scratch folder, removed at the end.
    runs = tempfile.TemporaryDirectory(prefix="remote-client-")
    env = {**os.environ, "TESSERACT_API_PATH": str(api), "TESSERACT_OUTPUT_PATH": runs.name}
    server = Server(runtime_serve_argv(), env=env, cwd=runs.name, log=log)
    try:
        try:
            server.wait_healthy(120)
        except ServerError:
            sys.exit(f"the server did not start; its log: {log}")
        yield server.url
    finally:
        server.stop()
        runs.cleanup()


def group_rows(url: str, lib, n: int, calls: int, batches: int) -> list[tuple[str, str, float]]:
    from tesseract_core import Tesseract
    x = np.random.default_rng(0).random(n)
    theirs = Tesseract.from_url(url)
    theirs_b64 = theirs.with_encoding(output_format="json+base64")
    mine = tessera.load(url)
    prepared = PreparedCall(lib, mine, {"x": x})
    for check in (theirs.apply({"x": x})["y"], theirs_b64.apply({"x": x})["y"],
                  mine.apply({"x": x})["y"]):
        np.testing.assert_array_equal(check, x)
    fns = {"from_url": lambda: theirs.apply({"x": x}),
           "from_url base64": lambda: theirs_b64.apply({"x": x}),
           "tessera": lambda: mine.apply({"x": x}),
           "tessera C host": prepared.run}
    times = per_call(fns, calls, batches)
    prepared.close()
    mine.close()
    return [(f"noop {n:.0e} float64", k, statistics.median(v)) for k, v in times.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "remote_client.csv")
    args = ap.parse_args()
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    lib = ctypes_library()
    with served(NOOP, args.csv.with_suffix(".server.log")) as url:
        rows = group_rows(url, lib, 1000, 30 if args.quick else 100, 3 if args.quick else 7)
        rows += group_rows(url, lib, 10**6, 2 if args.quick else 3, 3 if args.quick else 5)
    base = {}
    for group, variant, seconds in rows:
        base.setdefault(group, seconds)  # from_url, the first row of each group
    table = [{"group": g, "variant": v, "median_us": round(s * 1e6, 1),
              "ratio_to_from_url": round(s / base[g], 3)} for g, v, s in rows]
    print(f"{'group':<20} {'variant':<16} {'median per call':>16} {'vs from_url':>12}")
    for r in table:
        us = r["median_us"]
        text = f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.0f} us"
        print(f"{r['group']:<20} {r['variant']:<16} {text:>16} {r['ratio_to_from_url']:>11.3f}x")
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    print(f"(same server, same run, batches interleaved; CSV: {args.csv})")


if __name__ == "__main__":
    main()
