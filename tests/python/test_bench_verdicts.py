# SPDX-License-Identifier: MIT
"""The pure logic of bench/report.py and bench/bench_python.py on given
numbers: which p99 is printed, how the rows of a column are interleaved,
what each figure is measured over, which differences are inside the noise,
and the budget verdicts. No timing is asserted: every number here is given."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
import bench_python  # noqa: E402
import report  # noqa: E402


def stat(samples: int, p99: float = 2e-6) -> report.Stat:
    return report.Stat(p50=1e-6, p99=p99, p10=0.9e-6, p90=1.5e-6, samples=samples)


def test_p99_is_withheld_below_100_calls():
    assert report.p99_text(stat(3)) == "n<100"
    assert report.p99_text(stat(99)) == "n<100"
    assert report.p50_p99(stat(3)) == "1 us / n<100"


def test_p99_is_printed_from_100_calls():
    assert report.p99_text(stat(100, 2.5e-6)) == "2.5 us"
    assert report.p50_p99(stat(20000, 2.5e-6)) == "1 us / 2.5 us"


def test_cell_without_calls_prints_a_dash():
    assert report.p50_p99(report.NAN_STAT) == "-"


def test_round_order_puts_each_row_first_in_turn():
    names = ["a", "b", "c"]
    assert [report.rotated(names, r) for r in range(4)] == [
        ["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"], ["a", "b", "c"]]
    assert report.rotated([], 5) == []


def test_run_length_fills_the_slice_between_one_call_and_the_cap():
    assert report.run_length(1e-3, 1e-6, 100) == 100   # fast: capped
    assert report.run_length(1e-3, 1e-4, 100) == 10    # fills 1 ms
    assert report.run_length(1e-3, 5e-2, 100) == 1     # slower than the slice: one call
    assert report.run_length(0.0, 1e-6, 100) == 1      # no time budget: one call a round
    assert report.run_length(1e-3, 0.0, 100) == 100    # unmeasurably fast: the cap


def test_rows_of_a_column_are_sampled_in_the_same_rotating_rounds():
    log: list[str] = []
    fns = {k: (lambda k=k: log.append(k)) for k in "abc"}
    stats = report.sample_rounds(fns, report.Budget(0.0, 3, 100))
    # One untimed call each, then three rounds of one call each, rotated.
    assert log == list("abc" "abc" "bca" "cab")
    assert {k: s.samples for k, s in stats.items()} == {"a": 3, "b": 3, "c": 3}


def test_binding_figures_are_over_the_reference_they_name():
    assert bench_python.over(1.0e-6, 0.4e-6) == pytest.approx(0.6)
    assert bench_python.over(1.0e-6, None) is None


def test_difference_inside_the_noise_is_marked():
    noise = bench_python.noise_us(0.05e-6, -0.2e-6, None)
    assert noise == pytest.approx(0.2)
    assert bench_python.us(-0.08, 8, noise) == "  -0.08~"
    assert bench_python.us(0.5, 8, noise) == "    0.50"
    assert bench_python.us(None, 8, noise) == "       -"
    assert bench_python.noise_us() == 0.0


def test_a_negative_difference_over_the_code_called_is_marked_as_noise():
    # at 10^6 elements the C loop (its own process) came out 66 us slower
    # than a ctypes call of the same code: outside the spread, yet no caller
    # can undercut what it calls
    assert bench_python.us(-62.68, 9, 32.3) == "  -62.68~"
    assert bench_python.us(62.68, 9, 32.3) == "    62.68"


def test_verdicts_follow_the_budgets_that_apply():
    v = bench_python.verdict
    assert v(2.9, 9.0, 3.0, None) == "PASS"
    assert v(3.1, 1.0, 3.0, None) == "OVER"
    assert v(50.0, 1.1, None, 1.2) == "PASS"
    assert v(0.0, 1.3, None, 1.2) == "OVER"
    assert v(1.0, 1.3, 3.0, 1.2) == "OVER"
    assert v(1.0, 1.0, None, None) == ""
    # No ctypes reference (calls inside a compiled loop): no verdict on it.
    assert v(None, None, 3.0, None) == "-"


CSV_BEFORE = """n,dtype,bytes,variant,calls_per_batch,batches,p10_ns,median_ns,p90_ns
1000,float64,8000,direct,500,101,53.2,53.6,54.6
1000,float64,8000,library,500,101,184.2,180.0,189.0
1000000,float64,8000000,library,4,21,1.0,300000.0,1.0
"""
CSV_AFTER = """n,dtype,bytes,variant,calls_per_batch,batches,p10_ns,median_ns,p90_ns
1000,float64,8000,library,500,101,184.2,200.0,189.0
"""


def test_c_reference_is_the_library_loop_of_each_run():
    runs = bench_python.c_reference(CSV_BEFORE, CSV_AFTER)
    assert runs == {1000: [pytest.approx(180e-9), pytest.approx(200e-9)],
                    1000000: [pytest.approx(300e-6)]}
    assert bench_python.c_reference("") == {}


def test_c_reference_fills_only_in_process_noop_rows_of_a_measured_size():
    def row(variant: str, mode: str, n: int) -> dict:
        return {"variant": variant, "mode": mode, "n": n, "binding_us": 0.5,
                "binding_p10_us": 0.45, "c_us": None, "over_c_us": None,
                "over_c_noise_us": None}
    rows = [row("numpy apply", "inproc", 1000), row("numpy apply", "worker", 1000),
            row("rosenbrock 0-d a, b", "inproc", 1000), row("jax jit", "inproc", 10**7)]
    bench_python.with_c_reference(rows, bench_python.c_reference(CSV_BEFORE, CSV_AFTER))
    assert rows[0]["c_us"] == pytest.approx(0.19)
    assert rows[0]["over_c_us"] == pytest.approx(0.31)
    # Noise: the larger of the binding's median - p10 (0.05) and the runs' spread (0.02).
    assert rows[0]["over_c_noise_us"] == pytest.approx(0.05)
    assert [r["c_us"] for r in rows[1:]] == [None, None, None]
