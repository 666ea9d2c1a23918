# SPDX-License-Identifier: MIT
"""bench/bench_json_arrays_tesseract.py and build/bin/bench_json_arrays run
in their quick forms (tiny sizes) and write their CSV; the verdict line
follows the budget on given numbers. No timing is asserted."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(ROOT / "bench"))
import bench_json_arrays_tesseract as bench  # noqa: E402


def test_verdict_is_met_when_tessera_takes_less_time_than_tesseract_core():
    assert bench.verdict(0.5, 1.5) == "3.0x tesseract-core (budget >= 1x: met)"
    assert bench.verdict(1.0, 1.0).endswith("budget >= 1x: met)")
    assert bench.verdict(2.0, 1.0) == "0.5x tesseract-core (budget >= 1x: NOT met)"


def test_python_script_quick_form_runs_and_writes_its_csv(tmp_path):
    pytest.importorskip("tesseract_core")
    lib = BUILD / "lib" / "libtessera.so"
    if not lib.exists():
        pytest.skip(f"{lib} not built")
    out = tmp_path / "t.csv"
    run = subprocess.run([sys.executable, str(ROOT / "bench" / "bench_json_arrays_tesseract.py"),
                          "--quick", "--lib", str(lib), "--csv", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "tessera, decode + encode:" in run.stdout
    rows = list(csv.DictReader(out.open()))
    assert {(r["impl"], r["op"]) for r in rows} == {
        ("tesseract-core", "decode"), ("tesseract-core", "encode"),
        ("tessera", "decode"), ("tessera", "encode")}


def test_c_benchmark_quick_form_compares_with_another_library(tmp_path):
    exe = BUILD / "bin" / "bench_json_arrays"
    lib = BUILD / "lib" / "libtessera.so"
    if not exe.exists() or not lib.exists():
        pytest.skip(f"{exe} not built")
    out = tmp_path / "j.csv"
    # The same library as "another": the run's logic, not a speed-up, is checked.
    run = subprocess.run([str(exe), "--quick", "--lib", str(lib), "--csv", str(out)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "largest float64 case, parse + print:" in run.stdout
    rows = list(csv.DictReader(out.open()))
    assert {r["impl"] for r in rows} == {"tessera", "tessera --lib", "jansson", "memcpy"}
    assert {r["op"] for r in rows} == {"parse", "print"}
    assert all(float(r["median_ns"]) > 0 for r in rows)
