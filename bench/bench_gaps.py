#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A random-walk Metropolis loop from Python, in-process against worker
mode, idle and beside 1..nproc busy processes (issue 31, item 1).

Target: pi(x) ∝ exp(-rosenbrock(x; a=1, b=5)), x in R^2. Each step proposes
y = x + 0.05 * N(0, I) (NumPy), makes one ``c.apply`` through the installed
``tessera`` package and accepts by the log ratio: a few microseconds of
Python between calls. ``--gaps`` adds busy host work per step (a spin on
``time.perf_counter_ns``), 0, 2, 10 and 100 us by default.

Both modes run the same chain from the same seed; before timing, the first
``--check-steps`` steps of each are compared (the same accept decisions and
the same states), so nothing differs but the transport. In each (load, gap)
cell the modes alternate batches of a fixed wall time; per mode: steps per
second (all the cell's steps over its time), the median over the batches of
microseconds per step beyond the gap, host CPU per step (this process,
``time.process_time_ns``) and worker CPU per step (the worker process's CPU
clock through ``clock_getcpuclockid``, nanoseconds; or /proc/PID/stat
utime+stime, clock ticks, when that is unavailable). After each load's
cells this process sleeps and the worker's CPU over that window is
reported: an idle worker must use none.

Budgets (worker ÷ in-process steps/s in the same cell): >= 0.5 beside one
busy process per CPU, >= 0.8 idle.

    python3 bench/bench_gaps.py [--quick] [--cell-ms MS] [--max-load N] [--csv PATH]

Prints a table, writes CSV (default build/bench/results/gaps_python.csv)
and exits 0 whatever the verdicts; 1 when it cannot measure (a component
does not load, or the two modes' chains disagree).
"""

from __future__ import annotations

import argparse
import csv
import ctypes
import ctypes.util
import math
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")

BUDGET_IDLE = 0.8
BUDGET_LOADED = 0.5
# An idle worker: at most this CPU (ns) per second of idle host.
IDLE_CPU_NS_PER_S = 2e6
SEED = 0
STEP = 0.05
A, B = 1.0, 5.0
# After every batch the host sleeps this long before the worker's clock is
# read: a waiter's spin after the last reply is charged to its own batch.
SETTLE_S = 0.002


# ---- pure functions of the measured numbers --------------------------------

def budget(load: int, cpus: int) -> float | None:
    """The budget on worker ÷ in-process at this load: idle, or one busy
    process per CPU; None between."""
    if load == 0:
        return BUDGET_IDLE
    if load == cpus:
        return BUDGET_LOADED
    return None


def verdict(ratio: float | None, bound: float | None) -> str:
    if ratio is None or bound is None or math.isnan(ratio):
        return "-"
    return "PASS" if ratio >= bound else "OVER"


def rate_ratio(worker_rate: float, inproc_rate: float) -> float:
    return worker_rate / inproc_rate if inproc_rate > 0 else math.nan


def idle_verdict(cpu_ns: float | None, window_s: float) -> str:
    if cpu_ns is None or math.isnan(cpu_ns) or window_s <= 0:
        return "-"
    return "PASS" if cpu_ns / window_s <= IDLE_CPU_NS_PER_S else "OVER"


@dataclass
class Acc:
    """One mode in one cell: sums over its batches."""
    steps: int = 0
    wall_ns: int = 0
    host_ns: int = 0
    worker_ns: float = 0.0
    beyond_us: list[float] = field(default_factory=list)

    def add(self, steps: int, wall_ns: int, host_ns: int, worker_ns: float, gap_ns: int) -> None:
        self.steps += steps
        self.wall_ns += wall_ns
        self.host_ns += host_ns
        self.worker_ns += worker_ns
        if steps:
            self.beyond_us.append((wall_ns / steps - gap_ns) / 1e3)

    def rate(self) -> float:
        return self.steps * 1e9 / self.wall_ns if self.wall_ns > 0 else math.nan

    def median_us(self) -> float:
        return statistics.median(self.beyond_us) if self.beyond_us else math.nan

    def per_step_us(self, ns: float) -> float:
        return ns / self.steps / 1e3 if self.steps else math.nan


# ---- the process's surroundings ---------------------------------------------

def children() -> set[int]:
    """Children of every thread of this process."""
    out: set[int] = set()
    for task in Path("/proc/self/task").iterdir():
        try:
            out.update(int(p) for p in (task / "children").read_text().split())
        except OSError:
            pass
    return out


class CpuClock:
    """CPU time of another process in ns: its CPU clock (clock_getcpuclockid,
    ns), else /proc/PID/stat utime+stime (clock ticks)."""

    class _Timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]

    def __init__(self, pid: int | None):
        self.pid = pid
        self.clock: int | None = None
        self.source = "none"
        if pid is None:
            return
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            clk = ctypes.c_int()
            if libc.clock_getcpuclockid(ctypes.c_int(pid), ctypes.byref(clk)) == 0:
                self._gettime = libc.clock_gettime
                self.clock = clk.value
                self.source = "clock_getcpuclockid (ns)"
        except (OSError, AttributeError):
            pass
        if self.clock is None:
            self.source = f"/proc/{pid}/stat utime+stime (1/{os.sysconf('SC_CLK_TCK')} s)"

    def ns(self) -> float:
        if self.pid is None:
            return math.nan
        if self.clock is not None:
            ts = self._Timespec()
            if self._gettime(ctypes.c_int(self.clock), ctypes.byref(ts)) == 0:
                return ts.tv_sec * 1e9 + ts.tv_nsec
            return math.nan
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            return math.nan
        return (int(fields[11]) + int(fields[12])) * 1e9 / os.sysconf("SC_CLK_TCK")


def _die_with_parent() -> None:
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except OSError:
        pass


def start_load(n: int, max_s: float) -> list[subprocess.Popen]:
    """n busy processes, each ending by itself after max_s at the latest
    and killed with this process."""
    code = f"import time\nend = time.monotonic() + {max_s}\nwhile time.monotonic() < end: pass\n"
    procs = [subprocess.Popen([sys.executable, "-c", code], preexec_fn=_die_with_parent)
             for _ in range(n)]
    time.sleep(0.1 if n else 0)  # let the scheduler see them
    return procs


def stop_load(procs: list[subprocess.Popen]) -> None:
    for p in procs:
        p.kill()
    for p in procs:
        p.wait(timeout=10)


# ---- the loop ----------------------------------------------------------------

class Chain:
    """A random-walk Metropolis chain on one component, its own RNG."""

    def __init__(self, comp, seed: int):
        self.c = comp
        self.out = comp.schema.output_names[0]
        self.rng = np.random.default_rng(seed)
        self.x = np.zeros(2)
        self.lp = self.log_target(self.x)
        self.accepts: list[bool] = []

    def log_target(self, x: np.ndarray) -> float:
        return -float(self.c.apply({"x": x, "a": A, "b": B})[self.out])

    def step(self, record: bool = False) -> None:
        y = self.x + STEP * self.rng.standard_normal(2)
        lp_y = self.log_target(y)
        ok = math.log(self.rng.uniform()) < lp_y - self.lp
        if ok:
            self.x, self.lp = y, lp_y
        if record:
            self.accepts.append(ok)


def num(v: float, prec: int = 2) -> str:
    """A figure, or "-" for none."""
    return "-" if math.isnan(v) else f"{v:.{prec}f}"


def spin_ns(ns: int) -> None:
    if ns > 0:
        until = time.perf_counter_ns() + ns
        while time.perf_counter_ns() < until:
            pass


def batch(chain: Chain, clock: CpuClock | None, gap_ns: int, slice_ns: int, acc: Acc) -> None:
    w0 = clock.ns() if clock else math.nan
    h0 = time.process_time_ns()
    steps, t0 = 0, time.perf_counter_ns()
    t1 = t0
    step = chain.step
    while t1 - t0 < slice_ns:
        spin_ns(gap_ns)
        step()
        steps += 1
        t1 = time.perf_counter_ns()
    h1 = time.process_time_ns()
    time.sleep(SETTLE_S)
    w1 = clock.ns() if clock else math.nan
    acc.add(steps, t1 - t0, h1 - h0 - steps * gap_ns, w1 - w0, gap_ns)


def cell(chains: dict[str, Chain], clock: CpuClock, gap_ns: int, cell_ns: int,
         batches: int) -> dict[str, Acc]:
    accs = {m: Acc() for m in chains}
    modes = list(chains)
    for m in modes:  # one untimed step each: the worker may have slept long
        chains[m].step()
    for k in range(batches):
        for j in range(len(modes)):
            m = modes[(k + j) % len(modes)]
            batch(chains[m], clock if m == "worker" else None, gap_ns,
                  max(1, cell_ns // batches), accs[m])
    return accs


def chains_agree(chains: dict[str, Chain], steps: int) -> str:
    """Run the first steps of each chain; "" when they agree, else why not."""
    for ch in chains.values():
        for _ in range(steps):
            ch.step(record=True)
    a, b = chains["inproc"], chains["worker"]
    if a.accepts != b.accepts:
        first = next(i for i, (p, q) in enumerate(zip(a.accepts, b.accepts)) if p != q)
        return f"accept decisions differ first at step {first}"
    if not np.array_equal(a.x, b.x):
        return f"states differ after {steps} steps: {a.x} against {b.x}"
    return ""


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--plugin", type=Path, default=BUILD / "plugins" / "rosenbrock.so")
    p.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "gaps_python.csv")
    p.add_argument("--quick", action="store_true", help="0.1 s per mode and cell, 5 batches")
    p.add_argument("--cell-ms", type=float, help="wall time per mode and cell (smoke: 5)")
    p.add_argument("--max-load", type=int, default=os.cpu_count() or 1,
                   help="loads 0..N busy processes (default: the CPUs)")
    p.add_argument("--gaps", type=float, nargs="+", default=[0, 2, 10, 100],
                   help="extra busy host work per step, us")
    p.add_argument("--spin", type=int, help="worker mode with spin_ns (default: the library's)")
    p.add_argument("--check-steps", type=int, default=500)
    args = p.parse_args(argv)
    cpus = os.cpu_count() or 1
    cell_s = args.cell_ms / 1e3 if args.cell_ms else 0.1 if args.quick else 0.5
    batches = 5 if args.quick or args.cell_ms else 10
    idle_s = cell_s if args.cell_ms else 0.2 if args.quick else 0.5
    gaps_ns = [int(g * 1e3) for g in args.gaps]

    import tessera
    opts = {} if args.spin is None else {"spin_ns": args.spin}
    before = children()
    try:
        comps = {"inproc": tessera.load(str(args.plugin), "inproc"),
                 "worker": tessera.load(str(args.plugin), "worker", **opts)}
    except tessera.TesseraError as e:
        print(f"bench_gaps.py: {args.plugin}: {e}", file=sys.stderr)
        return 1
    new = children() - before
    wpid = new.pop() if len(new) == 1 else None
    clock = CpuClock(wpid)
    chains = {m: Chain(c, SEED) for m, c in comps.items()}
    why = chains_agree(chains, args.check_steps)
    if why:
        print(f"bench_gaps.py: the two modes' chains disagree: {why}", file=sys.stderr)
        return 1

    waits = "the library's waits" if args.spin is None else f"spin_ns={args.spin}"
    print(f"== RWM on rosenbrock from Python ({sys.executable}), tessera {tessera.__file__}\n"
          f"   worker mode: {waits}"
          f"; chains agree on the first {args.check_steps} steps (seed {SEED})\n"
          f"   {cell_s:g} s per mode and cell in {batches} alternating batches; {cpus} CPUs;"
          f" worker CPU: {clock.source}\n"
          f"   us/step: median over batches, beyond the gap; cpu: us per step (host beyond the"
          f" gap, worker all)")
    hdr = ("load", "gap_us", "mode", "steps", "steps/s", "us/step", "host cpu", "wrk cpu",
           "ratio", "budget")
    print("%4s %6s %-6s %8s %9s %8s %8s %8s %6s  %s" % hdr)
    rows: list[dict] = []
    idle: dict[int, float] = {}
    procs: list[subprocess.Popen] = []
    max_s = len(gaps_ns) * 2 * (cell_s + batches * 2 * SETTLE_S) + idle_s + 30
    try:
        for load in range(args.max_load + 1):
            procs = start_load(load, max_s)
            for gap in gaps_ns:
                accs = cell(chains, clock, gap, int(cell_s * 1e9), batches)
                r = rate_ratio(accs["worker"].rate(), accs["inproc"].rate())
                bnd = budget(load, cpus)
                for m, a in accs.items():
                    row = {"kind": "cell", "load": load, "cpus": cpus, "gap_us": gap / 1e3,
                           "mode": m, "steps": a.steps, "batches": len(a.beyond_us),
                           "steps_per_s": a.rate(), "median_us": a.median_us(),
                           "host_cpu_us": a.per_step_us(a.host_ns),
                           "worker_cpu_us": a.per_step_us(a.worker_ns) if m == "worker"
                           else math.nan,
                           "ratio": r if m == "worker" else math.nan,
                           "budget": bnd if m == "worker" and bnd else math.nan,
                           "verdict": verdict(r, bnd) if m == "worker" else ""}
                    rows.append(row)
                    tail = f"  >= {bnd} {row['verdict']}" if m == "worker" and bnd else ""
                    print("%4d %6g %-6s %8d %9s %8s %8s %8s %6s%s" % (
                        load, gap / 1e3, m, a.steps, num(row["steps_per_s"], 0),
                        num(row["median_us"]), num(row["host_cpu_us"]),
                        num(row["worker_cpu_us"]), num(row["ratio"]), tail))
            w0 = clock.ns()
            time.sleep(idle_s)
            idle[load] = clock.ns() - w0
            stop_load(procs)
            procs = []
    finally:
        stop_load(procs)
        for c in comps.values():
            c.close()

    print(f"\n== worker CPU while this process sleeps {idle_s:g} s after each load's steps")
    for load, ns in idle.items():
        print(f"  load {load}: {ns:.0f} ns")
    print("\n== verdicts (worker ÷ in-process steps/s, same cell)")
    for row in rows:
        if row["mode"] == "worker" and row["verdict"] not in ("", "-"):
            state = "idle" if row["load"] == 0 else f"beside {row['load']} busy (nproc)"
            print(f"  Python RWM, gap {row['gap_us']:g} us, {state}: {row['ratio']:.2f} >= "
                  f"{row['budget']}  {row['verdict']}")
    for load, ns in idle.items():
        print(f"  idle worker at no CPU, load {load}: {ns / idle_s:.0f} ns/s <= "
              f"{IDLE_CPU_NS_PER_S:.0f} ns/s  {idle_verdict(ns, idle_s)}")
    for load, ns in idle.items():
        rows.append({"kind": "idle", "load": load, "cpus": cpus, "gap_us": idle_s * 1e6,
                     "mode": "worker", "worker_cpu_us": ns / 1e3,
                     "verdict": idle_verdict(ns, idle_s)})
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["kind"], restval="")
        w.writeheader()
        for row in rows:
            w.writerow({k: (f"{v:.3f}" if isinstance(v, float) and not math.isnan(v)
                            else "" if isinstance(v, float) else v) for k, v in row.items()})
    return 0


if __name__ == "__main__":
    sys.exit(main())
