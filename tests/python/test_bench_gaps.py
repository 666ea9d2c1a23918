# SPDX-License-Identifier: MIT
"""bench/bench_gaps.py and bench_gaps (C) run in their smallest form and
write a row for every (load, gap, mode) cell, and their verdicts follow from
the numbers: the Python verdict functions on given numbers, the C verdicts
against the ratios its own CSV reports. No timing is asserted."""

from __future__ import annotations

import csv
import importlib.util
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
BENCH = ROOT / "bench"
GAPS_US = [0.0, 2.0, 10.0, 100.0]

spec = importlib.util.spec_from_file_location("bench_gaps", BENCH / "bench_gaps.py")
bench_gaps = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench_gaps
spec.loader.exec_module(bench_gaps)


# ---- verdicts on given numbers ---------------------------------------------------

def test_budget_is_0_8_idle_and_0_5_beside_one_busy_process_per_cpu():
    assert bench_gaps.budget(0, 2) == 0.8
    assert bench_gaps.budget(2, 2) == 0.5
    assert bench_gaps.budget(16, 16) == 0.5


def test_loads_between_idle_and_nproc_have_no_budget():
    assert bench_gaps.budget(1, 2) is None
    assert bench_gaps.budget(3, 16) is None
    assert bench_gaps.verdict(0.1, bench_gaps.budget(1, 2)) == "-"


def test_ratio_at_the_budget_passes_and_below_it_is_over():
    assert bench_gaps.verdict(0.5, 0.5) == "PASS"
    assert bench_gaps.verdict(0.49, 0.5) == "OVER"
    assert bench_gaps.verdict(0.12, 0.5) == "OVER"   # issue 31's loaded figure
    assert bench_gaps.verdict(0.80, 0.8) == "PASS"   # its idle figure
    assert bench_gaps.verdict(math.nan, 0.8) == "-"


def test_ratio_is_worker_over_inproc_and_undefined_without_inproc_steps():
    assert bench_gaps.rate_ratio(18.6e3, 160e3) == pytest.approx(0.116, abs=1e-3)
    assert math.isnan(bench_gaps.rate_ratio(1.0, 0.0))


def test_idle_worker_passes_below_2_ms_of_cpu_per_second_only():
    assert bench_gaps.idle_verdict(0.0, 0.5) == "PASS"
    assert bench_gaps.idle_verdict(1e6, 0.5) == "PASS"     # 2 ms/s: the bound
    assert bench_gaps.idle_verdict(1.01e6, 0.5) == "OVER"
    assert bench_gaps.idle_verdict(0.5e9, 0.5) == "OVER"   # a worker spinning through it
    assert bench_gaps.idle_verdict(math.nan, 0.5) == "-"
    assert bench_gaps.idle_verdict(0.0, 0.0) == "-"


def test_cell_sums_give_rate_over_all_steps_and_median_beyond_the_gap():
    acc = bench_gaps.Acc()
    acc.add(steps=100, wall_ns=1_000_000, host_ns=400_000, worker_ns=50_000.0, gap_ns=2000)
    acc.add(steps=50, wall_ns=1_000_000, host_ns=200_000, worker_ns=25_000.0, gap_ns=2000)
    acc.add(steps=200, wall_ns=1_000_000, host_ns=800_000, worker_ns=100_000.0, gap_ns=2000)
    assert acc.rate() == pytest.approx(350 / 3e-3)
    # per step 10, 20 and 5 us; beyond the 2 us gap 8, 18 and 3: median 8
    assert acc.median_us() == pytest.approx(8.0)
    assert acc.per_step_us(acc.worker_ns) == pytest.approx(0.5)
    assert math.isnan(bench_gaps.Acc().median_us())
    assert math.isnan(bench_gaps.Acc().rate())


# ---- the smallest runs --------------------------------------------------------------

def _cells(path: Path) -> tuple[list[dict], list[dict]]:
    rows = list(csv.DictReader(path.open()))
    return [r for r in rows if r["kind"] == "cell"], [r for r in rows if r["kind"] == "idle"]


def _check_verdicts(cells: list[dict], cpus: int) -> None:
    for r in cells:
        if r["mode"] != "worker":
            continue
        bound = bench_gaps.budget(int(r["load"]), cpus)
        if bound is None:
            assert r["verdict"] in ("", "-")
            continue
        assert float(r["budget"]) == pytest.approx(bound)
        assert r["verdict"] == bench_gaps.verdict(float(r["ratio"]), bound)


def test_python_smoke_run_writes_every_cell_and_consistent_verdicts(tmp_path):
    plugin = BUILD / "plugins" / "rosenbrock.so"
    if not plugin.exists():
        pytest.skip(f"{plugin} is not built")
    out = tmp_path / "gaps_python.csv"
    p = subprocess.run([sys.executable, str(BENCH / "bench_gaps.py"), "--cell-ms", "2",
                        "--max-load", "1", "--check-steps", "50", "--plugin", str(plugin),
                        "--csv", str(out)], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "chains agree on the first 50 steps" in p.stdout
    cells, idle = _cells(out)
    got = sorted((int(r["load"]), float(r["gap_us"]), r["mode"]) for r in cells)
    assert got == sorted((load, g, m) for load in (0, 1) for g in GAPS_US
                         for m in ("inproc", "worker"))
    assert all(int(r["steps"]) > 0 for r in cells)
    assert [int(r["load"]) for r in idle] == [0, 1]
    _check_verdicts(cells, int(cells[0]["cpus"]))


def test_c_smoke_run_writes_every_cell_and_consistent_verdicts(tmp_path):
    exe = BUILD / "bin" / "bench_gaps"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    out = tmp_path / "gaps.csv"
    p = subprocess.run([str(exe), "--cell-ms", "2", "--max-load", "1", "--csv", str(out)],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert "informative" in p.stdout
    cells, idle = _cells(out)
    got = sorted((int(r["load"]), float(r["gap_ns"]) / 1e3, r["mode"]) for r in cells)
    assert got == sorted((load, g, m) for load in (0, 1) for g in GAPS_US
                         for m in ("inproc", "worker"))
    assert all(int(r["calls"]) > 0 for r in cells)
    assert [int(r["load"]) for r in idle] == [0, 1]
    _check_verdicts(cells, int(cells[0]["cpus"]))


def test_c_form_refuses_an_unknown_flag_and_a_bad_number():
    exe = BUILD / "bin" / "bench_gaps"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    for args in (["--frobnicate"], ["--cell-ms", "abc"], ["--max-load", "-1"], ["--csv"]):
        p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, args
        assert "usage: bench_gaps" in p.stderr
