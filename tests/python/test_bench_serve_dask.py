# SPDX-License-Identifier: MIT
"""The verdict and labelling logic of bench/serve_load.py and
bench/dask_distributed.py, on given numbers: which row is compared with
which, which rows get a budget verdict, and what each verdict says. No
server is started and nothing is timed."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


def _module(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


serve_load = _module("serve_load")
dask_bench = _module("dask_distributed")


def _row(server: str, rps: float, *, kind="vectoradd", n=10**3, dtype="float32", clients=8,
         p50_ms=1.0, versus=None):
    spec = next(s for s in serve_load.specs(kind) if s.name == server)
    return {"server": server, "resources": spec.resources(), "workers": spec.workers,
            "threads": spec.threads, "dtype": dtype, "encoding": serve_load.ENCODING,
            "kind": kind, "n": n, "clients": clients, "requests": 100, "rps": rps,
            "p50_ms": p50_ms, "p99_ms": "", "versus": spec.versus if versus is None else versus}


# ---- serve_load -------------------------------------------------------------------

def test_serve_load_pairs_every_tessera_server_with_the_tesseract_of_as_many_workers():
    for kind in ("noop", "vectoradd"):
        specs = {s.name: s for s in serve_load.specs(kind)}
        ours = [s for s in specs.values() if s.name.startswith("tessera-")]
        assert ours
        for s in ours:
            theirs = specs[s.versus]
            assert theirs.name.startswith("tesseract ")
            # computing processes (worker mode) or request threads (in-process)
            assert (s.workers or s.threads) == theirs.workers
        assert all(s.versus == "" for s in specs.values() if s.name.startswith("tesseract "))


def test_serve_load_states_the_resources_of_each_server():
    res = {s.name: s.resources() for s in serve_load.specs("vectoradd")}
    assert res["tessera-c t1"] == "1 process, 1 thread"
    assert res["tessera-py w2"] == "1 + 2 worker processes, 2 threads"
    assert res["tesseract w2"] == "2 processes, 1 thread each"


def test_serve_load_sends_every_server_the_same_cells_in_both_dtypes():
    got = serve_load.cells("vectoradd", quick=False)
    assert {d for _, d, _ in got} == {"float32", "float64"}
    assert {(n, c) for n, d, c in got if d == "float32"} == {
        (n, c) for n in (10**3, 10**6) for c in (1, 8, 32)}
    assert serve_load.cells("noop", quick=True) == [(1, "float64", 1)]
    assert serve_load.body_for("vectoradd", 10, "float32") == \
        serve_load.body_for("vectoradd", 10, "float32")
    assert b'"float64"' in serve_load.body_for("vectoradd", 10, "float64")
    assert b'"float64"' not in serve_load.body_for("vectoradd", 10, "float32")


def test_serve_load_ratio_is_to_the_paired_tesseract_row_of_the_same_cell():
    rows = serve_load.with_ratios([
        _row("tessera-c t1", 3000.0), _row("tessera-c t2", 9000.0),
        _row("tesseract w1", 150.0), _row("tesseract w2", 300.0),
        _row("tessera-c t1", 900.0, dtype="float64", clients=1),  # no Tesseract row: no ratio
    ])
    assert [r["rps_ratio"] for r in rows] == [20.0, 30.0, "", "", ""]


def test_serve_load_budgets_judge_only_tessera_rows_against_their_pair():
    rows = serve_load.with_ratios([
        _row("tessera-c t1", 2990.0), _row("tessera-py w2", 6000.0),
        _row("tesseract w1", 150.0), _row("tesseract w2", 300.0),
        _row("tessera-c t1", 50.0, n=10**6, dtype="float64", clients=1, p50_ms=15.0),
        _row("tessera-c t1", 10000.0, kind="noop", n=1, dtype="float64", clients=1,
             p50_ms=0.101),
        _row("tesseract w1", 300.0, kind="noop", n=1, dtype="float64", clients=1, p50_ms=3.0),
    ])
    lines = serve_load.verdicts(rows)
    assert not [v for v in lines if v.startswith("tesseract")]

    def line(*parts: str) -> str:
        found = [v for v in lines if all(part in v for part in parts)]
        assert len(found) == 1, (parts, lines)
        return found[0]

    assert line("tessera-c t1 (", "8 clients", "x tesseract").endswith(
        "19.9x tesseract w1's (budget 20x): OVER")
    assert line("tessera-py w2 (", "8 clients", "x tesseract").endswith(
        "20.0x tesseract w2's (budget 20x): ok")
    assert line("tessera-c t1 (", "8 clients", "20,000").endswith(
        "2,990 (budget 20,000): OVER")
    assert line("tessera-py w2 (", "8 clients", "20,000").endswith(
        "6,000 (budget 20,000): OVER")
    assert line("tessera-c t1 1e6").endswith("15.0 ms (budget 15 ms): ok")
    assert line("tessera-c t1 no-op", " us (").endswith("101 us (budget 40 us): OVER")
    # 3.0 ms against 0.101 ms: 29.7x
    assert line("tessera-c t1 no-op", "faster").endswith(
        "29.7x faster than tesseract w1's (budget 50x): OVER")
    assert len(lines) == 7


def test_serve_load_no_op_budgets_pass_at_40_us_and_50x():
    rows = serve_load.with_ratios([
        _row("tessera-c t1", 30000.0, kind="noop", n=1, dtype="float64", clients=1,
             p50_ms=0.040),
        _row("tesseract w1", 400.0, kind="noop", n=1, dtype="float64", clients=1, p50_ms=2.0),
    ])
    lines = serve_load.verdicts(rows)
    assert "40 us (budget 40 us): ok" in lines[0]
    assert lines[1].endswith("50.0x faster than tesseract w1's (budget 50x): ok")


# ---- dask_distributed -------------------------------------------------------------

@pytest.mark.parametrize("name, ours", [
    ("tessera inproc", True), ("tessera serve http", True), ("tessera serve dask", True),
    ("tesseract http --num-workers 2", False), ("tesseract http x 2 servers", False),
    ("dask no-op", False), ("serial here", False)])
def test_dask_bench_tells_tessera_rows_from_tesseract_rows(name, ours):
    assert dask_bench.is_tessera(name) is ours
    assert dask_bench.is_tesseract(name) is name.startswith("tesseract ")


def test_dask_bench_sweep_budget_is_given_to_tessera_rows_only_against_the_best_http():
    med = {"serial here": 1e-4, "tessera map": 2e-4, "tessera batch": 1e-5,
           "tessera serve dask": 1.01e-3, "tesseract http --num-workers 2": 5e-3,
           "tesseract http x 2 servers": 1e-3, "tessera serve http": 1e-4}
    got = dask_bench.sweep_budgets(med)
    assert got["tesseract http --num-workers 2"] == ""
    assert got["tesseract http x 2 servers"] == ""
    assert got["serial here"] == ""
    assert got["tessera batch"] == "ok (100.0x http)"
    assert got["tessera serve http"] == "ok (10.0x http)"
    assert got["tessera map"] == "OVER (5.0x http)"
    assert got["tessera serve dask"] == "OVER (1.0x http)"


def test_dask_bench_sweep_budget_without_a_tesseract_row_gives_no_verdict():
    assert dask_bench.sweep_budgets({"tessera map": 1e-3, "serial here": 1e-3}) == {
        "tessera map": "", "serial here": ""}


def test_dask_bench_per_task_budget_is_for_tessera_inproc_at_110_percent():
    assert dask_bench.per_task_budget("tessera inproc", 1.10e-3, 1e-3) == "ok"
    assert dask_bench.per_task_budget("tessera inproc", 1.11e-3, 1e-3) == "OVER"
    for other in ("dask no-op", "tessera worker", "tesseract http x 2 servers"):
        assert dask_bench.per_task_budget(other, 9e-3, 1e-3) == ""


def test_dask_bench_resources_name_the_server_and_the_client_side():
    r = dask_bench.resources
    assert r("tessera serve http", 2) == "tessera serve --threads 2, 8 client threads here"
    assert r("tessera serve dask", 2) == \
        "tessera serve --threads 2, dask 2 worker processes x 1 thread"
    assert r("tesseract http --num-workers 2", 2) == \
        "tesseract-runtime serve --num-workers 2, 8 client threads here"
    assert r("tesseract http x 2 servers", 2) == \
        "2 tesseract-runtime serve x 1 worker, 8 client threads here"
    assert r("tessera inproc", 1) == "dask 1 worker process x 1 thread"
    assert r("serial here", 2) == "1 process here"
