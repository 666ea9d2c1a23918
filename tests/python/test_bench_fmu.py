# SPDX-License-Identifier: MIT
"""bench/bench_fmu.py and bench_fmu (C) in their smallest forms: every
(benchmark, load, variant) row is written and each verdict follows from the
row's own figure; and the verdict functions on given numbers. No timing is
asserted."""

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
FMU_DIR = BUILD / "fmu"

spec = importlib.util.spec_from_file_location("bench_fmu", BENCH / "bench_fmu.py")
bench_fmu = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench_fmu
spec.loader.exec_module(bench_fmu)

needs_fmus = pytest.mark.skipif(not (FMU_DIR / "spring.fmu").exists(),
                                reason=f"{FMU_DIR} has no FMUs: build tessera_fmus")


# ---- verdicts on given numbers ---------------------------------------------------

def test_rhs_per_call_time_passes_at_10_us_and_is_over_above():
    assert bench_fmu.at_most(10.0, bench_fmu.BUDGET_RHS_US) == "PASS"
    assert bench_fmu.at_most(3.2, 10.0) == "PASS"
    assert bench_fmu.at_most(10.01, 10.0) == "OVER"
    assert bench_fmu.at_most(math.nan, 10.0) == "-"


def test_speedups_are_baseline_over_this_and_judged_at_their_bounds():
    assert bench_fmu.speedup(2.4e-3, 1.2e-4) == pytest.approx(20.0)
    assert math.isnan(bench_fmu.speedup(1.0, 0.0))
    assert bench_fmu.at_least(10.0, bench_fmu.BUDGET_COSIM_SPEEDUP) == "PASS"
    assert bench_fmu.at_least(9.99, 10.0) == "OVER"
    assert bench_fmu.at_least(1.7, bench_fmu.BUDGET_FD_SPEEDUP) == "PASS"
    assert bench_fmu.at_least(1.69, 1.7) == "OVER"
    assert bench_fmu.at_least(math.nan, 1.7) == "-"
    assert bench_fmu.at_least(5.0, None) == "-"


def test_parallel_speedup_is_judged_only_with_a_free_cpu_per_worker():
    assert bench_fmu.fd_budget(0, 2) == 1.7
    assert bench_fmu.fd_budget(1, 2) is None
    assert bench_fmu.fd_budget(2, 2) is None
    assert bench_fmu.fd_budget(2, 16) == 1.7
    assert bench_fmu.fd_budget(0, 1) is None


def test_rows_carry_each_benchmarks_figure_and_verdict():
    s = {"workers=1": [4e-3, 4e-3, 4e-3], "workers=2": [2e-3, 2.5e-3, 3e-3]}
    rows = bench_fmu.rows_for("fd", 0, 2, bench_fmu.rounds_median(s), s)
    two = next(r for r in rows if r["variant"] == "workers=2")
    assert two["figure"] == pytest.approx(1.6) and two["verdict"] == "OVER"
    rows = bench_fmu.rows_for("fd", 2, 2, bench_fmu.rounds_median(s), s)
    two = next(r for r in rows if r["variant"] == "workers=2")
    assert two["verdict"] == "-" and math.isnan(two["budget"])
    s = {"tessera worker": [1e-4], "tessera inproc": [5e-5], "fmpy reused": [2.5e-3],
         "fmpy plain": [2.5e-2]}
    rows = {r["variant"]: r for r in bench_fmu.rows_for("cosim", 0, 2,
                                                        bench_fmu.rounds_median(s), s)}
    assert rows["tessera worker"]["figure"] == pytest.approx(250.0)   # plain / worker
    assert rows["tessera worker"]["vs_reused"] == pytest.approx(25.0)
    assert rows["tessera worker"]["verdict"] == "PASS"
    assert rows["fmpy plain"]["verdict"] == ""
    s["fmpy plain"] = [5e-4]
    rows = {r["variant"]: r for r in bench_fmu.rows_for("cosim", 0, 2,
                                                        bench_fmu.rounds_median(s), s)}
    assert rows["tessera worker"]["verdict"] == "OVER"
    s = {"tessera jit": [1.2e-5], "jax.numpy jit": [4e-6]}
    rows = {r["variant"]: r for r in bench_fmu.rows_for("rhs", 0, 2,
                                                        bench_fmu.rounds_median(s), s)}
    assert rows["tessera jit"]["figure"] == pytest.approx(12.0)
    assert rows["tessera jit"]["verdict"] == "OVER"


def test_alternate_runs_every_variant_once_per_round_plus_a_warm_up():
    seen = []
    out = bench_fmu.alternate({"a": lambda: seen.append("a"), "b": lambda: seen.append("b")},
                              rounds=3, calls=2)
    assert [len(v) for v in out.values()] == [3, 3]
    assert seen[:2] == ["a", "b"]                       # the warm-up
    assert seen[2:] == ["a", "a", "b", "b", "b", "b", "a", "a", "a", "a", "b", "b"]


# ---- the smallest runs ---------------------------------------------------------------

def _check_python_rows(rows: list[dict]) -> None:
    cpus = int(rows[0]["cpus"])
    for r in rows:
        if r["verdict"] in ("", None):
            continue
        fig = float(r["figure"])
        if r["bench"] == "rhs":
            assert r["verdict"] == bench_fmu.at_most(fig, bench_fmu.BUDGET_RHS_US)
        elif r["bench"] == "cosim":
            assert r["verdict"] == bench_fmu.at_least(fig, bench_fmu.BUDGET_COSIM_SPEEDUP)
        else:
            assert r["verdict"] == bench_fmu.at_least(fig,
                                                      bench_fmu.fd_budget(int(r["load"]), cpus))


@needs_fmus
def test_python_smoke_run_writes_every_row_and_consistent_verdicts(tmp_path):
    out = tmp_path / "fmu_python.csv"
    p = subprocess.run([sys.executable, str(BENCH / "bench_fmu.py"), "--quick", "--rounds", "2",
                        "--fd-points", "21", "--load", "1", "--fmu-dir", str(FMU_DIR),
                        "--csv", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:]
    rows = list(csv.DictReader(out.open()))
    got = sorted((r["bench"], int(r["load"]), r["variant"]) for r in rows)
    variants = {"rhs": ("tessera jit", "jax.numpy jit"),
                "cosim": ("tessera worker", "tessera inproc", "fmpy reused", "fmpy plain"),
                "fd": ("workers=1", "workers=2")}
    assert got == sorted((b, load, v) for b, vs in variants.items() for load in (0, 1)
                         for v in vs)
    assert all(int(r["batches"]) == 2 and float(r["median_us"]) > 0 for r in rows)
    _check_python_rows(rows)
    assert "== verdicts" in p.stdout


@needs_fmus
def test_python_form_refuses_a_missing_fmu_folder_and_an_unknown_benchmark(tmp_path):
    p = subprocess.run([sys.executable, str(BENCH / "bench_fmu.py"), "--fmu-dir",
                        str(tmp_path), "--csv", str(tmp_path / "x.csv")],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1 and "does not exist" in p.stderr
    assert not (tmp_path / "x.csv").exists()
    p = subprocess.run([sys.executable, str(BENCH / "bench_fmu.py"), "--only", "rhs,nope"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 2 and "unknown benchmark 'nope'" in p.stderr


@needs_fmus
def test_c_smoke_run_writes_every_row_and_consistent_verdicts(tmp_path):
    exe = BUILD / "bin" / "bench_fmu"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    out = tmp_path / "fmu.csv"
    p = subprocess.run([str(exe), "--quick", "--load", "1", "--fmu-dir", str(FMU_DIR),
                        "--csv", str(out)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rows = list(csv.DictReader(out.open()))
    assert sorted((int(r["load"]), r["variant"]) for r in rows) == sorted(
        (load, v) for load in (0, 1) for v in ("direct", "library", "untimed"))
    for r in rows:
        if r["variant"] == "direct":
            assert r["verdict"] == "" and float(r["overhead_ns"]) == 0
            continue
        direct = next(d for d in rows if d["variant"] == "direct" and d["load"] == r["load"])
        assert float(r["overhead_ns"]) == pytest.approx(
            float(r["median_ns"]) - float(direct["median_ns"]), abs=0.02)
        assert r["verdict"] == ("PASS" if float(r["overhead_ns"]) <= 200 else "OVER")


def test_c_form_refuses_an_unknown_flag_and_a_bad_load():
    exe = BUILD / "bin" / "bench_fmu"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    for args in (["--frobnicate"], ["--load", "abc"], ["--load", "-1"], ["--csv"]):
        p = subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, args
        assert "usage: bench_fmu" in p.stderr


def test_c_form_names_a_folder_without_the_fmu(tmp_path):
    exe = BUILD / "bin" / "bench_fmu"
    if not exe.exists():
        pytest.skip(f"{exe} is not built")
    p = subprocess.run([str(exe), "--quick", "--load", "0", "--fmu-dir", str(tmp_path),
                        "--csv", str(tmp_path / "x.csv")], capture_output=True, text=True,
                       timeout=30)
    assert p.returncode == 1
    assert "modelDescription.xml" in p.stderr and not (tmp_path / "x.csv").exists()
