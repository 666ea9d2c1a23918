#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Held results over a long run, from Python: the cost of a call at the start
and at the end of a trace that keeps every result, and what copying a small
result costs against viewing it in place (the copy limit).

    python3 bench/bench_python_trace.py [--quick] [--csv PATH] [--steps N]

Two tables:

* **trace**: ``trace.append(c.apply(d)[name])`` for N steps (default 100 000;
  --quick 20 000), timed in batches of 500 steps. ``start`` is the per-step
  time over the first tenth of the batches, ``end`` over the last tenth
  (their 10th percentile: other processes only ever add time), and
  ``ratio`` = end / start, measured in the same run (budget: <= 1.5); each
  row is run three times, in fresh interpreters, and shows the medians. Also
  a loop that drops its results, timed just before and just after the trace
  (``drop``: the machine's drift over the run), the memory per held result
  (tracemalloc, in a second run of the same trace; and the process's
  resident memory in the timed run, which tracemalloc does not see: call
  objects, result buffers, the arena) and the call objects alive before and
  after (``tessera._ext._debug_counts``). Rows: rosenbrock's 0-d value (the
  MCMC trace of the issue; budget under 200 traced bytes per held value)
  and noop's 1 000-element result (a view), each in-process and in worker
  mode. Each row runs in a fresh interpreter.

* **copy limit**: noop at result sizes from 8 B to 64 KiB, each result
  either copied out or viewed in place (``_ext._set_copy_limit``), in a
  loop that drops its results and in one that holds them (fresh memory
  every step, as a long run has), plus bytes per held result: the numbers
  behind the 4 KiB limit. Each cell is the best of three fresh interpreters
  (one with --quick).

Prints the tables and writes CSV (default build/bench/results/python_trace.csv
and python_copy_limit.csv). Exit status 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import csv
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
RATIO_BUDGET = 1.5
SCALAR_BYTES_BUDGET = 200
BATCH = 500
RUNS = 3


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def debug_counts() -> dict | None:
    from tessera import _ext
    fn = getattr(_ext, "_debug_counts", None)   # absent before the copy limit
    return fn() if fn else None


def case(plugin: str, mode: str):
    import numpy as np
    import tessera
    comp = tessera.load(BUILD / "plugins" / f"{plugin}.so", mode)
    if plugin == "rosenbrock":
        d = {"x": np.array([0.5, 1.5]), "a": np.array(1.0), "b": np.array(100.0)}
        return comp, d, "value"
    x = comp.empty(1000)
    x[:] = np.arange(1000.0)
    return comp, {"x": x}, "y"


def child_trace(plugin: str, mode: str, steps: int, traced: bool) -> dict:
    """One trace in this (fresh) interpreter: timings, or traced bytes."""
    comp, d, name = case(plugin, mode)
    apply = comp.apply

    def dropped(n: int = 5 * BATCH) -> float:
        best = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(n // 5):
                apply(d)[name]
            best.append((time.perf_counter() - t) / (n // 5))
        return statistics.median(best)

    for _ in range(2000):
        apply(d)
    gc.collect()
    out = {"drop_before_us": dropped() * 1e6}
    counts0 = debug_counts()
    if traced:
        import tracemalloc
        tracemalloc.start()
        t0 = tracemalloc.get_traced_memory()[0]
    rss0 = rss_bytes()
    trace: list = []
    append = trace.append
    per_batch = []
    for _ in range(steps // BATCH):
        t = time.perf_counter()
        for _ in range(BATCH):
            append(apply(d)[name])
        per_batch.append((time.perf_counter() - t) / BATCH)
    rss1 = rss_bytes()
    if traced:
        out["traced_per_held"] = (tracemalloc.get_traced_memory()[0] - t0) / len(trace)
        tracemalloc.stop()
        return out
    counts1 = debug_counts()
    edge = max(1, len(per_batch) // 10)
    out.update({
        "start_us": p10(per_batch[:edge]) * 1e6,
        "end_us": p10(per_batch[-edge:]) * 1e6,
        "drop_after_us": dropped() * 1e6,
        "rss_per_held": (rss1 - rss0) / len(trace),
        "calls_before": counts0["calls"] if counts0 else None,
        "calls_after": counts1["calls"] if counts1 else None,
    })
    if counts1 is not None:
        import numpy as np
        want = np.asarray(apply(d)[name])
        assert all(np.array_equal(v, want) for v in trace[:: max(1, len(trace) // 50)]), \
            "a held result changed"
    return out


def p10(values: list[float]) -> float:
    return sorted(values)[len(values) // 10]


def child_copy_limit(mode: str, nbytes: int, copy: bool, hold: bool, steps: int) -> dict:
    """Per-call time of noop at one result size, copied or viewed, results
    dropped or held; with hold, resident bytes per held result."""
    import numpy as np
    import tessera
    from tessera import _ext
    _ext._set_copy_limit(1 << 40 if copy else 0)
    comp = tessera.load(BUILD / "plugins" / "noop.so", mode)
    x = comp.empty(nbytes // 8)
    x[:] = 1.0
    d = {"x": x}
    for _ in range(500):
        comp.apply(d)
    gc.collect()
    trace: list = []
    rss0 = rss_bytes()
    t = time.perf_counter()
    if hold:
        for _ in range(steps):
            trace.append(comp.apply(d)["y"])
    else:
        for _ in range(steps):
            comp.apply(d)["y"]
    us = (time.perf_counter() - t) / steps * 1e6
    assert np.array_equal(trace[0] if hold else comp.apply(d)["y"], x)
    return {"us": us, "bytes_per_held": (rss_bytes() - rss0) / steps if hold else None}


def run_child(*args: str) -> dict:
    done = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True,
                          text=True, timeout=1200)
    if done.returncode != 0:
        raise RuntimeError(f"child {args} failed:\n{done.stderr}")
    return json.loads(done.stdout.splitlines()[-1])


def trace_rows(steps: int, runs: int) -> list[dict]:
    rows = []
    for plugin, what, n in (("rosenbrock", "0-d value (copied)", steps),
                            ("noop", "1000 x float64 (a view)", min(steps, 20_000))):
        for mode in ("inproc", "worker"):
            each = [run_child("trace", plugin, mode, str(n), "0") for _ in range(runs)]
            # the run whose ratio is the median one
            timed = sorted(each, key=lambda r: r["end_us"] / r["start_us"])[len(each) // 2]
            traced = run_child("trace", plugin, mode, str(min(n, 100_000)), "1")
            ratio = timed["end_us"] / timed["start_us"]
            budget = plugin == "rosenbrock"
            ok = ratio <= RATIO_BUDGET and traced["traced_per_held"] < SCALAR_BYTES_BUDGET
            rows.append({
                "result": f"{plugin} {what}", "mode": mode, "steps": n,
                "start_us": timed["start_us"], "end_us": timed["end_us"], "ratio": ratio,
                "drop_before_us": timed["drop_before_us"],
                "drop_after_us": timed["drop_after_us"],
                "traced_bytes_per_held": traced["traced_per_held"],
                "rss_bytes_per_held": timed["rss_per_held"],
                "calls_before": timed["calls_before"], "calls_after": timed["calls_after"],
                "verdict": ("PASS" if ok else "OVER") if budget else "-",
            })
            print(f"  measured trace {plugin} {mode}: end/start ratios of the runs "
                  f"{[round(r['end_us'] / r['start_us'], 2) for r in each]}", file=sys.stderr)
    return rows


def copy_limit_rows(quick: bool) -> list[dict]:
    sizes = (8, 512, 2048, 4096, 8192, 16384, 65536)
    rows = []
    for mode in ("inproc", "worker"):
        for nbytes in sizes:
            steps = 4000 if quick else 20_000
            rep = 1 if quick else RUNS
            cell = {}
            for copy in (True, False):
                for hold in (False, True):
                    runs = [run_child("copy", mode, str(nbytes), str(int(copy)), str(int(hold)),
                                      str(steps)) for _ in range(rep)]
                    key = ("copy" if copy else "view") + ("_held" if hold else "_dropped")
                    cell[key + "_us"] = min(r["us"] for r in runs)
                    if hold:
                        cell[key + "_bytes"] = min(r["bytes_per_held"] for r in runs)
            rows.append({"mode": mode, "bytes": nbytes, **cell,
                         "copied_at_4k_limit": nbytes <= 4096})
            print(f"  measured copy limit {mode} {nbytes} B", file=sys.stderr)
    return rows


def print_tables(trace: list[dict], limit: list[dict]) -> None:
    print("\nHeld traces: trace.append(c.apply(d)[name]); per-step time at the start and at "
          f"the end of the same run (p10 of batches of {BATCH} steps over each tenth; "
          "medians of the runs)")
    head = (f"{'result':<32}{'mode':<8}{'steps':>8}{'start us':>10}{'end us':>9}{'ratio':>7}"
            f"{'drop us before/after':>22}{'B/held traced':>15}{'B/held RSS':>12}"
            f"{'calls':>9}  verdict")
    print(head)
    print("-" * len(head))
    for r in trace:
        calls = ("-" if r["calls_before"] is None
                 else f"{r['calls_before']}->{r['calls_after']}")
        print(f"{r['result']:<32}{r['mode']:<8}{r['steps']:>8}{r['start_us']:>10.2f}"
              f"{r['end_us']:>9.2f}{r['ratio']:>7.2f}"
              f"{r['drop_before_us']:>12.2f}/{r['drop_after_us']:<9.2f}"
              f"{r['traced_bytes_per_held']:>15.0f}{r['rss_bytes_per_held']:>12.0f}"
              f"{calls:>9}  {r['verdict']}")
    print(f"budget (the 0-d value): ratio <= {RATIO_BUDGET} and < {SCALAR_BYTES_BUDGET} traced "
          "bytes per held result. The 1000-element rows are for context: each step holds "
          "8 KB of fresh memory (page faults); in worker mode that memory is the arena's, "
          "whose growth, first-fit allocation and host/worker spinning on a shared CPU move "
          "the numbers (docs/guides/performance.md).")
    if not limit:
        return
    print("\nCopy or view: noop, us per call (best of runs, each in a fresh interpreter) "
          "and resident bytes per held result")
    head = (f"{'mode':<8}{'bytes':>7}{'dropped: copy':>15}{'view':>7}"
            f"{'held: copy':>12}{'view':>7}{'B/held: copy':>14}{'view':>8}  at the 4 KiB limit")
    print(head)
    print("-" * len(head))
    for r in limit:
        print(f"{r['mode']:<8}{r['bytes']:>7}{r['copy_dropped_us']:>15.2f}"
              f"{r['view_dropped_us']:>7.2f}{r['copy_held_us']:>12.2f}{r['view_held_us']:>7.2f}"
              f"{r['copy_held_bytes']:>14.0f}{r['view_held_bytes']:>8.0f}  "
              f"{'copied' if r['copied_at_4k_limit'] else 'viewed'}")


def write_csv(path: Path, rows: list[dict]) -> None:
    if not rows:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"CSV: {path}")


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, *a = sys.argv[2:]
        if kind == "trace":
            res = child_trace(a[0], a[1], int(a[2]), a[3] == "1")
        else:
            res = child_copy_limit(a[0], int(a[1]), a[2] == "1", a[3] == "1", int(a[4]))
        print(json.dumps(res))
        return 0
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="20 000 steps, one run per size")
    p.add_argument("--steps", type=int, help="steps of the 0-d trace (default 100 000)")
    p.add_argument("--no-copy-limit", action="store_true", help="only the trace table")
    p.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "python_trace.csv")
    args = p.parse_args()
    steps = args.steps or (20_000 if args.quick else 100_000)
    trace = trace_rows(steps, 1 if args.quick else RUNS)
    from tessera import _ext
    limit = ([] if args.no_copy_limit or not hasattr(_ext, "_set_copy_limit")
             else copy_limit_rows(args.quick))
    print_tables(trace, limit)
    print()
    write_csv(args.csv, trace)
    write_csv(args.csv.with_name("python_copy_limit.csv"), limit)
    return 0


if __name__ == "__main__":
    sys.exit(main())
