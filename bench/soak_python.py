#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The Python face under a long soak: how much RSS and tracemalloc's traced
memory grow per 10^6 calls, per face, mode and endpoint, after a warm-up;
what 10^4 open/close cycles per mode leave behind; what `tessera serve`
holds after 10^5 requests per route.

Calls: apply, jvp, vjp and jacobian of the rosenbrock plugin (n = 4)
through NumPy (Component.apply/jvp/vjp/jacobian), JAX jitted and eager
(tessera.jax.apply under jax.jvp, jax.vjp, jax.jacrev) and PyTorch
(tessera.torch.apply, torch.func.jvp, autograd.grad,
autograd.functional.jacobian), in-process and in worker mode. The
baseline rows ("mode" baseline) run the same loop over the same maths
written in NumPy, jax.numpy or torch, in the same process: growth there is
the interpreter's and the framework's own, not Tessera's. "live" is the
change in the extension's own count of call objects and results alive
(tessera._ext._debug_counts()) over the window: 0 when nothing is kept.

Cycles: tessera.load, one apply, close, in inproc, isolated and worker
mode; this process's RSS, open fds and threads before and after.
Serve: `tessera serve build/plugins/rosenbrock.so`, each route (apply, jvp,
vjp, jacobian) warmed up and then sent --requests requests by ApacheBench
(`ab -k`, 4 clients; http.client on one kept-alive connection without it);
the server's VmRSS, fds and threads from /proc/PID/status before and after.

    python3 bench/soak_python.py [--quick] [--calls N] [--cycles N] [--requests N]
                                 [--faces numpy,jax-jit,...] [--modes baseline,inproc,worker]
                                 [--skip calls,cycles,serve] [--csv PATH]

--calls is the count of each (face, mode, endpoint) row (default 10^6; the
slow faces, JAX eager and torch's jvp, run --calls / --slow-share); growth is
reported as measured and scaled to 10^6 calls. --quick: 10^4 calls, 300
cycles, 5*10^3 requests. Writes CSV (default build/bench/results/soak.csv).
Exit status 0 whatever the figures (this is a report; tests/python/
test_soak.py holds the bounds).
"""

from __future__ import annotations

import argparse
import csv
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
sys.path.insert(0, str(ROOT / "tests" / "support"))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # rosenbrock is float64

import soak  # noqa: E402
import tessera  # noqa: E402

PLUGIN = BUILD / "plugins" / "rosenbrock.so"
TESSERA = BUILD / "bin" / "tessera"
# Rows whose one call costs milliseconds (JAX eager re-traces every call;
# torch.func.jvp builds a dual-tensor graph): --calls / SLOW_SHARE of them.
SLOW = {("jax-eager", e) for e in soak.ENDPOINTS} | {("torch", "jvp")}


def kib(n: float) -> str:
    return f"{n / 1024:10.1f}"


def run_calls(faces, modes, calls, slow_share, rows, out):
    comps = {m: tessera.load(PLUGIN, m) for m in soak.CALL_MODES}
    try:
        for face in faces:
            for mode in modes:
                steps = (soak.baseline_steps(face) if mode == "baseline"
                         else soak.component_steps(face, comps[mode]))
                for endpoint, step in steps.items():
                    n = calls // slow_share if (face, endpoint) in SLOW else calls
                    n = max(n, 100)
                    warm = max(n // 10, 50)
                    t = time.perf_counter()
                    g = soak.measure_calls(step, n, warm)
                    us = (time.perf_counter() - t) / (n + warm) * 1e6
                    row = {"kind": "calls", "face": face, "mode": mode, "what": endpoint,
                           "count": n, "warmup": warm, "rss_growth": g.rss,
                           "traced_growth": g.traced,
                           "rss_per_1e6": round(g.per_million(g.rss)),
                           "traced_per_1e6": round(g.per_million(g.traced)),
                           "us_per_call": round(us, 1),
                           "live_objects_delta": sum(g.objects.values())}
                    rows.append(row)
                    print(f"{face:10} {mode:9} {endpoint:9} {n:>9} {kib(g.rss)} {kib(g.traced)}"
                          f" {kib(row['rss_per_1e6'])} {kib(row['traced_per_1e6'])} {us:9.1f}"
                          f" {row['live_objects_delta']:+5d}",
                          file=out, flush=True)
    finally:
        for comp in comps.values():
            comp.close()


def run_cycles(cycles, rows, out):
    for mode in soak.CYCLE_MODES:
        warm = max(cycles // 10, 10)
        g = soak.measure_cycles(PLUGIN, mode, cycles, warm)
        rows.append({"kind": "cycles", "face": "numpy", "mode": mode, "what": "load+apply+close",
                     "count": cycles, "warmup": warm, "rss_growth": g.after.rss - g.before.rss,
                     "traced_growth": g.traced, "rss_before": g.before.rss,
                     "rss_after": g.after.rss, "fds_before": g.before.fds,
                     "fds_after": g.after.fds, "threads_before": g.before.threads,
                     "threads_after": g.after.threads})
        print(f"{mode:9} {cycles:>7} RSS {g.before.rss / 2**20:7.1f} -> {g.after.rss / 2**20:7.1f}"
              f" MiB  fds {g.before.fds} -> {g.after.fds}  threads {g.before.threads} -> "
              f"{g.after.threads}  traced {g.traced:+d} B", file=out, flush=True)


def run_serve(requests, rows, out):
    use_ab = shutil.which("ab") is not None
    with soak.serving_rosenbrock(TESSERA, PLUGIN) as server:
        start = soak.proc_state(server.proc.pid)
        got = soak.measure_serve(server.proc.pid, server.port, requests,
                                 max(requests // 10, 100), use_ab=use_ab)
    print(f"client: {'ab -k -c 4' if use_ab else 'http.client, one connection'}; "
          f"server at start: RSS {start.rss / 2**20:.1f} MiB, {start.threads} threads",
          file=out)
    for g in got:
        rows.append({"kind": "serve", "face": "http", "mode": "inproc", "what": g.route,
                     "count": g.requests, "warmup": max(requests // 10, 100),
                     "rss_growth": g.after.rss - g.before.rss, "rss_before": g.before.rss,
                     "rss_after": g.after.rss, "fds_before": g.before.fds,
                     "fds_after": g.after.fds, "threads_before": g.before.threads,
                     "threads_after": g.after.threads})
        print(f"{g.route:26} {g.requests:>7} RSS {g.before.rss / 2**20:6.2f} -> "
              f"{g.after.rss / 2**20:6.2f} MiB  fds {g.before.fds} -> {g.after.fds}  "
              f"threads {g.before.threads} -> {g.after.threads}", file=out, flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="10^4 calls, 300 cycles, 5*10^3 requests")
    ap.add_argument("--calls", type=int, help="calls per row (default 10^6)")
    ap.add_argument("--slow-share", type=int, default=100,
                    help="the slow rows run --calls / this (default 100)")
    ap.add_argument("--cycles", type=int, help="open/close cycles per mode (default 10^4)")
    ap.add_argument("--requests", type=int, help="requests per serve route (default 10^5)")
    ap.add_argument("--faces", default=",".join(soak.FACES),
                    help=f"comma-separated subset of {','.join(soak.FACES)}")
    ap.add_argument("--modes", default=",".join(("baseline", *soak.CALL_MODES)),
                    help="comma-separated subset of baseline,inproc,worker for the calls")
    ap.add_argument("--skip", default="", help="comma-separated parts to skip: calls,cycles,serve")
    ap.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "soak.csv")
    args = ap.parse_args()
    calls = args.calls or (10_000 if args.quick else 1_000_000)
    cycles = args.cycles or (300 if args.quick else 10_000)
    requests = args.requests or (5_000 if args.quick else 100_000)
    faces = [f for f in args.faces.split(",") if f]
    if "torch" in faces:
        try:
            import torch  # noqa: F401
        except ImportError:
            print("torch is not installed: no torch rows", file=sys.stderr)
            faces.remove("torch")
    skip = set(args.skip.split(","))
    out = sys.stdout
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} "
          f"{os.getloadavg()[2]:.2f} on {os.cpu_count()} CPUs", file=out)
    rows: list[dict] = []
    if "calls" not in skip:
        print(f"\n{'face':10} {'mode':9} {'endpoint':9} {'calls':>9} {'RSS KiB':>10} "
              f"{'traced KiB':>10} {'RSS/1e6':>10} {'trc/1e6':>10} {'us/call':>9} {'live':>5}",
              file=out)
        run_calls(faces, [m for m in args.modes.split(",") if m], calls, args.slow_share,
                  rows, out)
    if "cycles" not in skip:
        print("\nopen/close cycles (load, one apply, close):", file=out)
        run_cycles(cycles, rows, out)
    if "serve" not in skip:
        print("\ntessera serve:", file=out)
        run_serve(requests, rows, out)
    print(f"\nload average at the end {os.getloadavg()[0]:.2f}", file=out)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    fields = ["kind", "face", "mode", "what", "count", "warmup", "rss_growth", "traced_growth",
              "rss_per_1e6", "traced_per_1e6", "us_per_call", "live_objects_delta",
              "rss_before", "rss_after",
              "fds_before", "fds_after", "threads_before", "threads_after"]
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {args.csv}", file=out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
