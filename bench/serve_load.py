#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`tessera serve` beside `tesseract-runtime serve`, serving the same
computation, under the same load, in one run (loopback only, bounded in
requests and time).

Servers:
  tessera-c        tessera serve build/plugins/vectoradd.so   (the C plugin, in-process)
  tessera-py       tessera serve FOLDER --mode worker            (tesseract-core's own
                   examples/vectoradd, its Python code in a Tessera worker)
  tesseract        tesseract-runtime serve of the same examples/vectoradd
and, for the no-op row, tessera serve build/plugins/noop.so beside
tesseract-runtime serve of bench/tesseract_noop (y = x).

Each cell: C concurrent clients (1, 8, 32), each on its own kept-alive
connection, POST /apply with json+base64 in and out (Accept:
application/json+base64), for a fixed number of requests or seconds. The
load comes from ApacheBench (`ab -k`, Debian's apache2-utils), a C client
that does not become the bottleneck as Python threads would (without it,
Python threads with http.client, noted in the output). Reported:
requests/s, p50 and p99 latency; ratios to Tesseract's cell of the same
size and clients, measured in the same run.

Budgets (issue "HTTP both ways"): no-op p50 at 1 client <= 100 us; requests/s
at 8 clients, 1e3 elements >= 20x Tesseract's; 1e6 float64 apply at 1
client p50 <= 15 ms.

    python3 bench/serve_load.py [--quick] [--load N] [--csv PATH] [--plot PATH]

--load N (default 0) runs it beside N busy processes. Writes CSV (default
build/bench/results/serve_load.csv) and a plot (default
build/bench/results/serve_load.png). Exit status 0 whatever the verdicts.
"""

from __future__ import annotations

import argparse
import base64
import csv
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
EXAMPLES = BUILD / "third_party" / "tesseract-examples"
SPINNER = "while True:\n    pass\n"

# tests/support/servers.py: starting a server and waiting until healthy,
# shared with the tests and the examples.
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import Server, runtime_serve_argv  # noqa: E402


class LoadServer:
    """A server under load: its run folders (tesseract-runtime writes one
    per request into its cwd) in a scratch folder, its output discarded."""

    def __init__(self, name: str, argv: list[str], env: dict | None = None) -> None:
        self.name = name
        self.scratch = tempfile.TemporaryDirectory(prefix="serve-load-")
        self.server = Server(argv, env=env, cwd=self.scratch.name, what=name)
        self.port = self.server.port
        self.proc = self.server.proc
        self.server.wait_healthy(120)

    def stop(self) -> None:
        self.server.stop()
        self.server.remove_log()
        self.scratch.cleanup()


def tessera_server(name: str, path: Path, *extra: str) -> LoadServer:
    return LoadServer(name, [str(BUILD / "bin" / "tessera"), "serve", "--quiet", "--port",
                             "{port}", "--threads", "32", *extra, str(path)])


def tesseract_server(name: str, api: Path) -> LoadServer:
    env = dict(os.environ, TESSERACT_API_PATH=str(api))
    env.pop("TESSERACT_OUTPUT_PATH", None)  # its run folders go to its cwd, the scratch
    return LoadServer(name, runtime_serve_argv(), env=env)


def b64(a: np.ndarray) -> dict:
    return {"object_type": "array", "shape": list(a.shape), "dtype": str(a.dtype),
            "data": {"buffer": base64.b64encode(a.tobytes()).decode(), "encoding": "base64"}}


def body_for(kind: str, n: int) -> bytes:
    rng = np.random.default_rng(0)
    if kind == "noop":
        return json.dumps({"inputs": {"x": b64(rng.random(n))}}).encode()
    dtype = np.float32 if kind == "vectoradd-py" else np.float64
    inputs = {"a": b64(rng.random(n).astype(dtype)), "b": b64(rng.random(n).astype(dtype)),
              "s": b64(np.array(2.0, dtype))}
    if kind == "vectoradd-py":
        inputs["normalize"] = False
    return json.dumps({"inputs": inputs}).encode()


def drive_ab(port: int, body: bytes, clients: int, requests: int, seconds: float):
    """The same with ApacheBench: its requests/s and its latency percentiles."""
    with tempfile.TemporaryDirectory(prefix="serve-load-ab-") as d:
        (Path(d) / "body").write_bytes(body)
        out = subprocess.run(["ab", "-k", "-q", "-c", str(clients), "-n", str(requests),
                              "-t", str(int(seconds)), "-n", str(requests), "-s", "120",
                              "-p", str(Path(d) / "body"), "-T", "application/json",
                              "-H", "Accept: application/json+base64",
                              "-e", str(Path(d) / "pct.csv"),
                              f"http://127.0.0.1:{port}/apply"],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"ab failed: {out.stderr.strip() or out.stdout[-300:]}")
        text = out.stdout
        for bad in ("Non-2xx responses:",):
            if bad in text:
                raise RuntimeError(f"ab: {bad} {text.split(bad)[1].split()[0]}")
        done = int(text.split("Complete requests:")[1].split()[0])
        rps = float(text.split("Requests per second:")[1].split()[0])
        pct = {}
        for line in (Path(d) / "pct.csv").read_text().splitlines()[1:]:
            p, ms = line.split(",")
            pct[int(float(p))] = float(ms)
    # ab's percentiles of fewer than 100 requests are not meaningful at 99%.
    p99 = pct[99] / 1e3 if done >= 100 else float("nan")
    return done, rps, pct[50] / 1e3, p99


def drive(port: int, body: bytes, clients: int, requests: int, seconds: float):
    """clients threads, each with its own connection, until requests are
    done or the time is up; latencies of every request."""
    headers = {"Content-Type": "application/json", "Accept": "application/json+base64"}
    latencies: list[float] = []
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds
    per_client = max(1, requests // clients)
    errors: list[str] = []

    def client() -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        mine = []
        for _ in range(per_client):
            if time.monotonic() > stop_at:
                break
            t0 = time.perf_counter()
            conn.request("POST", "/apply", body=body, headers=headers)
            r = conn.getresponse()
            data = r.read()
            mine.append(time.perf_counter() - t0)
            if r.status != 200:
                errors.append(f"HTTP {r.status}: {data[:200]!r}")
                break
        conn.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise RuntimeError(errors[0])
    return latencies, wall


def cell(server: LoadServer, kind: str, n: int, clients: int, quick: bool) -> dict:
    body = body_for(kind, n)
    big = n >= 10**6
    requests = (8 if big else 500) if quick else (40 if big else 20000)
    seconds = 5.0 if quick else 20.0
    drive(server.port, body, 1, 2, 10)  # warm: connections, caches, lazy imports
    if shutil.which("ab"):
        done, rps, p50, p99 = drive_ab(server.port, body, clients, max(requests, clients),
                                       seconds)
    else:
        lat, wall = drive(server.port, body, clients, max(requests, clients), seconds)
        lat.sort()
        done, rps = len(lat), len(lat) / wall
        p50, p99 = statistics.median(lat), lat[min(len(lat) - 1, int(0.99 * len(lat)))]
    return {"server": server.name, "kind": kind, "n": n, "clients": clients,
            "requests": done, "rps": round(rps, 1), "p50_ms": round(p50 * 1e3, 3),
            "p99_ms": round(p99 * 1e3, 3) if p99 == p99 else ""}


def spinners(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", SPINNER], start_new_session=True)
            for _ in range(count)]


def run(quick: bool) -> list[dict]:
    rows = []
    clients = [1, 8] if quick else [1, 8, 32]
    sizes = [10**3, 10**6]
    folder = EXAMPLES / "vectoradd"
    groups = [
        ("noop", [lambda: tessera_server("tessera-c", BUILD / "plugins" / "noop.so"),
                  lambda: tesseract_server("tesseract", ROOT / "bench/tesseract_noop/"
                                                            "tesseract_api.py")], [1], [1]),
        ("vectoradd", [lambda: tessera_server("tessera-c", BUILD / "plugins" / "vectoradd.so"),
                       lambda: tessera_server("tessera-py", folder, "--mode", "worker",
                                              "--option", "python_env=none", "--option",
                                              "workers=2"),
                       lambda: tesseract_server("tesseract", folder / "tesseract_api.py")],
         sizes, clients),
    ]
    for kind, makers, ns, cs in groups:
        for make in makers:
            server = make()
            try:
                payload_kind = ("vectoradd-py" if server.name != "tessera-c" else "vectoradd"
                                ) if kind == "vectoradd" else "noop"
                for n in ns:
                    for c in cs:
                        row = cell(server, payload_kind, n, c, quick)
                        row["kind"] = kind
                        rows.append(row)
                        print(f"  {server.name:<11} {kind:<9} n={n:<8} clients={c:<3} "
                              f"{row['rps']:>9.1f} req/s  p50 {row['p50_ms']:.3f} ms",
                              flush=True)
            finally:
                server.stop()
    return rows


def verdicts(rows: list[dict]) -> list[str]:
    def find(server, kind, n, c):
        return next((r for r in rows if (r["server"], r["kind"], r["n"], r["clients"]) ==
                     (server, kind, n, c)), None)
    out = []
    noop = find("tessera-c", "noop", 1, 1)
    if noop:
        out.append(f"no-op p50, 1 client: {noop['p50_ms'] * 1e3:.0f} us (budget 100 us): "
                   f"{'ok' if noop['p50_ms'] <= 0.1 else 'OVER'}")
    for server in ("tessera-c", "tessera-py"):
        mine, theirs = find(server, "vectoradd", 10**3, 8), find("tesseract", "vectoradd",
                                                                  10**3, 8)
        if mine and theirs:
            ratio = mine["rps"] / theirs["rps"]
            out.append(f"{server} req/s at 8 clients, 1e3: {ratio:.1f}x Tesseract's "
                       f"(budget 20x): {'ok' if ratio >= 20 else 'OVER'}")
    big = find("tessera-c", "vectoradd", 10**6, 1)
    if big:
        out.append(f"1e6 float64 apply, 1 client, p50: {big['p50_ms']:.1f} ms (budget 15 ms): "
                   f"{'ok' if big['p50_ms'] <= 15 else 'OVER'}")
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    labels = {"tessera-c": "tessera serve, C plugin (float64 in)",
              "tessera-py": "tessera serve, tesseract_api.py (float32 in)",
              "tesseract": "tesseract-runtime serve, same file (float32 in)"}
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, n in zip(axes, (10**3, 10**6)):
        for server in ("tessera-c", "tessera-py", "tesseract"):
            pts = sorted((int(r["clients"]), float(r["rps"])) for r in rows
                         if r["server"] == server and r["kind"] == "vectoradd"
                         and int(r["n"]) == n)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=labels[server])
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("requests/s")
        ax.set_title(f"vectoradd, {n:.0e} elements, json+base64")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", type=int, default=0)
    results = BUILD / "bench" / "results"
    ap.add_argument("--csv", type=Path, default=results / "serve_load.csv")
    ap.add_argument("--plot", type=Path, default=results / "serve_load.png")
    args = ap.parse_args()
    if not (EXAMPLES / "vectoradd" / "tesseract_api.py").exists():
        sys.exit(f"tesseract-core's examples are not in {EXAMPLES}: "
                 "run scripts/fetch_tesseract_examples.sh")
    busy = spinners(args.load)
    try:
        rows = run(args.quick)
    finally:
        for p in busy:
            p.kill()
    theirs = {(r["kind"], r["n"], r["clients"]): r for r in rows if r["server"] == "tesseract"}
    print(f"\n{'server':<11} {'kind':<9} {'n':>8} {'clients':>7} {'req/s':>9} {'p50 ms':>9} "
          f"{'p99 ms':>9} {'vs Tesseract':>12}")
    for r in rows:
        t = theirs.get((r["kind"], r["n"], r["clients"]))
        r["rps_ratio_to_tesseract"] = round(r["rps"] / t["rps"], 1) if t else ""
        p99 = f"{r['p99_ms']:>9.3f}" if r["p99_ms"] != "" else f"{'-':>9}"
        print(f"{r['server']:<11} {r['kind']:<9} {r['n']:>8} {r['clients']:>7} {r['rps']:>9.1f} "
              f"{r['p50_ms']:>9.3f} {p99} "
              f"{str(r['rps_ratio_to_tesseract']) + 'x' if t else '':>12}")
    print()
    for line in verdicts(rows):
        print(line)
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    plot(rows, args.plot)
    client = "ApacheBench (ab -k)" if shutil.which("ab") else "Python threads (no ab found)"
    print(f"(client: {client}; load: {args.load} busy processes; CSV {args.csv}; "
          f"plot {args.plot})")


if __name__ == "__main__":
    main()
