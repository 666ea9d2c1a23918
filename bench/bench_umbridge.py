#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""UM-Bridge through `tessera serve` against its baselines, all measured in
the same run (loopback only, bounded in requests and time).

Rows (the model: y = x, the noop plugin; in Python the same map as an
umbridge.Model):
  evaluate-1      one kept-alive client, POST of one float64:
                  tessera /apply       Tesseract's own route of the same server
                  tessera /Evaluate    UM-Bridge's route
                  umbridge.serve_models the reference Python server, same model
  shmem-1e6       umbridge.HTTPModel(use_shmem=True) calling Evaluate:
                  memcpy + 1-element   np.copyto of its input and output (2 x 8 MB)
                                       plus the same client's 1-element call
                  tessera HTTPModel    the client's call at 1e6 elements
                  tessera by hand      /EvaluateShMem alone, segments made once (the
                                       server's share of the call above)

The one-client rows are timed by ApacheBench (`ab -k -c 1`, Debian's
apache2-utils; a C client, so that the client does not hide the server's
cost) when installed, else by Python's http.client on one connection.

Budgets (issue 30): /Evaluate <= 2x /apply; tessera /Evaluate >= 20x faster
than umbridge.serve_models; shmem-1e6 HTTPModel <= 1.5x (memcpy + 1-element).

    python3 bench/bench_umbridge.py [--quick] [--load N] [--csv PATH]

--load N (default 0) runs it again beside N busy processes. Prints a table
and writes CSV (default build/bench/results/bench_umbridge.csv). Medians of
repeated batches. Exit status 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import csv
import http.client
import json
import multiprocessing
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import Server, free_port, health_answers  # noqa: E402

import umbridge  # noqa: E402

PY_SERVER = """
import sys, umbridge
class Noop(umbridge.Model):
    def __init__(self): super().__init__("noop")
    def get_input_sizes(self, config): return [int(config.get("n", 1))]
    def get_output_sizes(self, config): return [int(config.get("n", 1))]
    def __call__(self, parameters, config): return [list(parameters[0])]
    def supports_evaluate(self): return True
umbridge.serve_models([Noop()], port=int(sys.argv[1]))
"""


def ab_seconds(url: str, body: bytes, n: int) -> float | None:
    """Median time per request of `ab -k -c 1`, or None without ab."""
    ab = shutil.which("ab")
    if not ab:
        return None
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        f.write(body)
        f.flush()
        out = subprocess.run([ab, "-q", "-k", "-c", "1", "-n", str(n), "-p", f.name, "-T",
                              "application/json", url], capture_output=True, text=True,
                             timeout=300).stdout
    m = re.search(r"^\s+50%\s+(\d+)", out, re.M)
    mean = re.search(r"Time per request:\s+([\d.]+) \[ms\] \(mean\)", out)
    if "Non-2xx responses" in out:
        raise RuntimeError(f"ab got errors from {url}:\n{out}")
    # ab's percentiles are whole milliseconds: the mean is finer below 1 ms.
    if mean and (not m or int(m.group(1)) <= 1):
        return float(mean.group(1)) / 1e3
    return int(m.group(1)) / 1e3 if m else None


def py_seconds(host: str, port: int, path: str, body: bytes, n: int) -> float:
    conn = http.client.HTTPConnection(host, port)
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        conn.request("POST", path, body, {"Content-Type": "application/json"})
        r = conn.getresponse()
        r.read()
        times.append(time.perf_counter() - t0)
        assert r.status == 200, r.status
    conn.close()
    return statistics.median(times)


def one_client(url: str, path: str, body: bytes, n: int) -> tuple[float, str]:
    t = ab_seconds(url + path, body, n)
    if t is not None:
        return t, "ab -k"
    host, port = url.removeprefix("http://").split(":")
    return py_seconds(host, int(port), path, body, n), "http.client"


def median_of(fn, reps: int) -> float:
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def evaluate_rows(tessera_url: str, py_url: str, quick: bool) -> list[tuple[str, str, float, str]]:
    n = 300 if quick else 3000
    rows = []
    apply_body = json.dumps({"inputs": {"x": [1.0]}}).encode()
    um_body = json.dumps({"name": "noop", "input": [[1.0]], "config": {}}).encode()
    for name, url, path, body, count in [
            ("tessera /apply", tessera_url, "/apply", apply_body, n),
            ("tessera /Evaluate", tessera_url, "/Evaluate", um_body, n),
            ("umbridge.serve_models", py_url, "/Evaluate", um_body, max(100, n // 10))]:
        t, how = one_client(url, path, body, count)
        rows.append(("evaluate-1", name, t, how))
    return rows


def shmem_rows(url: str, quick: bool) -> list[tuple[str, str, float, str]]:
    n = 10 ** 6
    reps = 5 if quick else 15
    m = umbridge.HTTPModel(url, "noop", use_shmem=True)
    assert m.supports_shmem()
    x = np.random.default_rng(0).standard_normal(n)
    xs = [x.tolist()]
    out = m(xs, {"n": n})
    assert np.array_equal(out[0], x)
    src, dst = x.copy(), np.empty(n)

    def copies():
        np.copyto(dst, src)
        np.copyto(dst, src)

    one = median_of(lambda: m([[1.0]], {"n": 1}), reps * 4)
    copy = median_of(copies, reps * 4)
    big = median_of(lambda: m(xs, {"n": n}), reps)

    # The server's share: /EvaluateShMem with segments made once.
    tid = f"b{os.getpid()}"
    seg_in = shared_memory.SharedMemory(f"/umbench_in_{tid}_0", create=True, size=8 * n)
    seg_out = shared_memory.SharedMemory(f"/umbench_out_{tid}_0", create=True, size=8 * n)
    try:
        np.ndarray((n,), dtype=np.float64, buffer=seg_in.buf)[:] = x
        body = json.dumps({"name": "noop", "shmem_name": "/umbench", "tid": tid,
                           "shmem_num_inputs": 1, "shmem_size_0": n, "config": {}}).encode()
        host, port = url.removeprefix("http://").split(":")
        by_hand = py_seconds(host, int(port), "/EvaluateShMem", body, reps * 4)
        assert np.array_equal(np.ndarray((n,), dtype=np.float64, buffer=seg_out.buf), x)
    finally:
        for s in (seg_in, seg_out):
            s.close()
            s.unlink()
    return [("shmem-1e6", "memcpy + 1-element", copy + one, f"{copy * 1e3:.2f} ms + "
             f"{one * 1e3:.2f} ms"),
            ("shmem-1e6", "tessera HTTPModel", big, "umbridge client"),
            ("shmem-1e6", "tessera by hand", by_hand, "http.client")]


def busy() -> None:
    while True:
        pass


def run_all(tessera_url: str, py_url: str, quick: bool, load: int):
    procs = [multiprocessing.Process(target=busy, daemon=True) for _ in range(load)]
    for p in procs:
        p.start()
    try:
        return evaluate_rows(tessera_url, py_url, quick) + shmem_rows(tessera_url, quick)
    finally:
        for p in procs:
            p.terminate()


def verdicts(rows: dict[tuple[str, str], float]) -> dict[tuple[str, str], str]:
    ev = {k[1]: v for k, v in rows.items() if k[0] == "evaluate-1"}
    sh = {k[1]: v for k, v in rows.items() if k[0] == "shmem-1e6"}
    out = {("evaluate-1", "tessera /Evaluate"):
           ("ok" if ev["tessera /Evaluate"] <= 2 * ev["tessera /apply"] else "OVER") + " (<= 2x apply)",
           ("evaluate-1", "umbridge.serve_models"):
           ("ok" if ev["umbridge.serve_models"] >= 20 * ev["tessera /Evaluate"] else "UNDER")
           + f" ({ev['umbridge.serve_models'] / ev['tessera /Evaluate']:.0f}x; >= 20x)",
           ("shmem-1e6", "tessera HTTPModel"):
           ("ok" if sh["tessera HTTPModel"] <= 1.5 * sh["memcpy + 1-element"] else "OVER")
           + " (<= 1.5x memcpy + 1-element)"}
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", type=int, default=0)
    ap.add_argument("--csv", type=Path, default=BUILD / "bench" / "results" / "bench_umbridge.csv")
    args = ap.parse_args()
    tessera = Server([BUILD / "bin" / "tessera", "serve", "--port", "{port}", "--quiet",
                      "--option", "log_level=off", BUILD / "plugins" / "noop.so"],
                     what="tessera serve")
    py_port = free_port()
    py = subprocess.Popen([sys.executable, "-c", PY_SERVER, str(py_port)],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        tessera.wait_healthy(60)
        py_url = f"http://127.0.0.1:{py_port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                umbridge.supported_models(py_url)
                break
            except Exception:
                if time.monotonic() > deadline or py.poll() is not None:
                    raise RuntimeError("umbridge.serve_models did not start")
                time.sleep(0.1)
        table = []
        for load in [0] + ([args.load] if args.load else []):
            rows = run_all(tessera.url, py_url, args.quick, load)
            keyed = {(g, n): t for g, n, t, _ in rows}
            verdict = verdicts(keyed)
            for g, n, t, how in rows:
                base = keyed[(g, rows[[r[0] for r in rows].index(g)][1])]
                table.append({"load": load, "group": g, "row": n, "seconds": f"{t:.6g}",
                              "ratio": f"{t / base:.3g}", "how": how,
                              "verdict": verdict.get((g, n), "")})
    finally:
        tessera.stop()
        tessera.remove_log()
        py.terminate()
        py.wait(timeout=30)
    print(f"{'load':>4}  {'group':<11} {'row':<22} {'median':>11} {'ratio':>7}  how / verdict")
    for r in table:
        t = float(r["seconds"])
        shown = f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"
        print(f"{r['load']:>4}  {r['group']:<11} {r['row']:<22} {shown:>11} {r['ratio']:>7}  "
              f"{r['how']}  {r['verdict']}")
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        w.writerows(table)
    print(f"(ratios: to the group's first row, measured in the same run; CSV: {args.csv})")


if __name__ == "__main__":
    main()
