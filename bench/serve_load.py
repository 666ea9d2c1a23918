#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`tessera serve` beside `tesseract-runtime serve`, serving the same
computation, under the same load, with the same resources, in one run
(loopback only, bounded in requests and time).

Servers, each row stating its resources (worker processes, request
threads, dtype and encoding of the request) in the table and the CSV:
  tessera-c t1     tessera serve --threads 1 build/plugins/vectoradd.so (the C
                   plugin, in-process: one process, one request thread)
  tessera-c t2     the same with --threads 2
  tessera-py w1    tessera serve FOLDER --mode worker --threads 1 --option workers=1
                   (tesseract-core's own examples/vectoradd, its Python code in
                   one Tessera worker process)
  tessera-py w2    the same with --threads 2 and workers=2
  tesseract w1     tesseract-runtime serve --num-workers 1 of the same
                   examples/vectoradd (one process; its async endpoint computes on
                   the event loop, one request at a time per process)
  tesseract w2     the same with --num-workers 2
Each Tessera row is compared with the Tesseract row of as many computing
processes or threads: t1 and w1 with tesseract w1, t2 and w2 with
tesseract w2. For the no-op row, tessera serve --threads 1
build/plugins/noop.so beside tesseract-runtime serve --num-workers 1 of
bench/tesseract_noop (y = x, float64).

Each cell: C concurrent clients (1, 8, 32), each on its own kept-alive
connection, POST /apply with json+base64 in and out (Accept:
application/json+base64), for a fixed number of requests or seconds. Every
server gets the same request bytes: vectoradd's inputs in float32 (the
dtype tesseract-core's example declares; the C plugin converts them to its
float64) at every size and client count, and in float64 (the C plugin's
dtype; the example's schema casts them) at 1 client. The load comes from
ApacheBench (`ab -k`, Debian's apache2-utils), a C client that does not
become the bottleneck as Python threads would (without it, Python threads
with http.client, noted in the output). Reported: requests/s, p50 and p99
latency; ratios to the paired Tesseract cell of the same size, dtype and
clients, measured in the same run.

Budgets: a no-op apply at 1 client, p50 <= 40 us and >= 50x faster than the
paired Tesseract's p50; at 8 clients, 1e3 elements, >= 20,000 requests/s and
>= 20x the paired Tesseract's; a 1e6 float64 apply at 1 client, p50 <= 15 ms.

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


ENCODING = "json+base64"


def tessera_server(name: str, path: Path, threads: int, *extra: str) -> LoadServer:
    return LoadServer(name, [str(BUILD / "bin" / "tessera"), "serve", "--quiet", "--port",
                             "{port}", "--threads", str(threads), *extra, str(path)])


def tesseract_server(name: str, api: Path, workers: int) -> LoadServer:
    env = dict(os.environ, TESSERACT_API_PATH=str(api))
    env.pop("TESSERACT_OUTPUT_PATH", None)  # its run folders go to its cwd, the scratch
    return LoadServer(name, runtime_serve_argv("--num-workers", str(workers)), env=env)


class Spec:
    """One server of the comparison and the resources it is given: worker
    processes (the processes computing; 0 for in-process), request threads
    of the server process, and the Tesseract row it is compared with."""

    def __init__(self, name: str, workers: int, threads: int, versus: str, make) -> None:
        self.name, self.workers, self.threads, self.versus = name, workers, threads, versus
        self.make = make

    def resources(self) -> str:
        if self.name.startswith("tesseract"):
            return f"{self.workers} process{'es' if self.workers > 1 else ''}, 1 thread each"
        if self.workers:
            return f"1 + {self.workers} worker process{'es' if self.workers > 1 else ''}, " \
                   f"{self.threads} thread{'s' if self.threads > 1 else ''}"
        return f"1 process, {self.threads} thread{'s' if self.threads > 1 else ''}"


def specs(kind: str) -> list[Spec]:
    folder = EXAMPLES / "vectoradd"
    if kind == "noop":
        noop_api = ROOT / "bench" / "tesseract_noop" / "tesseract_api.py"
        return [Spec("tessera-c t1", 0, 1, "tesseract w1",
                     lambda: tessera_server("tessera-c t1", BUILD / "plugins" / "noop.so", 1)),
                Spec("tesseract w1", 1, 1, "",
                     lambda: tesseract_server("tesseract w1", noop_api, 1))]
    out = []
    for n in (1, 2):
        out.append(Spec(f"tessera-c t{n}", 0, n, f"tesseract w{n}",
                        lambda n=n: tessera_server(f"tessera-c t{n}",
                                                   BUILD / "plugins" / "vectoradd.so", n)))
        out.append(Spec(f"tessera-py w{n}", n, n, f"tesseract w{n}",
                        lambda n=n: tessera_server(f"tessera-py w{n}", folder, n, "--mode",
                                                   "worker", "--option", "python_env=none",
                                                   "--option", f"workers={n}")))
        out.append(Spec(f"tesseract w{n}", n, 1, "",
                        lambda n=n: tesseract_server(f"tesseract w{n}",
                                                     folder / "tesseract_api.py", n)))
    return out


def b64(a: np.ndarray) -> dict:
    return {"object_type": "array", "shape": list(a.shape), "dtype": str(a.dtype),
            "data": {"buffer": base64.b64encode(a.tobytes()).decode(), "encoding": "base64"}}


def body_for(kind: str, n: int, dtype: str) -> bytes:
    """The request, the same bytes for every server of kind."""
    rng = np.random.default_rng(0)
    if kind == "noop":
        return json.dumps({"inputs": {"x": b64(rng.random(n).astype(dtype))}}).encode()
    inputs = {"a": b64(rng.random(n).astype(dtype)), "b": b64(rng.random(n).astype(dtype)),
              "s": b64(np.array(2.0, dtype))}  # normalize: the example's default, False
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


def cell(server: LoadServer, spec: Spec, kind: str, n: int, dtype: str, clients: int,
         quick: bool) -> dict:
    body = body_for(kind, n, dtype)
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
    return {"server": spec.name, "resources": spec.resources(), "workers": spec.workers,
            "threads": spec.threads, "dtype": dtype, "encoding": ENCODING, "kind": kind,
            "n": n, "clients": clients, "requests": done, "rps": round(rps, 1),
            "p50_ms": round(p50 * 1e3, 3), "p99_ms": round(p99 * 1e3, 3) if p99 == p99 else "",
            "versus": spec.versus}


def spinners(count: int) -> list[subprocess.Popen]:
    return [subprocess.Popen([sys.executable, "-c", SPINNER], start_new_session=True)
            for _ in range(count)]


def cells(kind: str, quick: bool) -> list[tuple[int, str, int]]:
    """(elements, dtype, clients) of every cell of kind, the same for every
    server: float32 at every size and client count, float64 at 1 client."""
    if kind == "noop":
        return [(1, "float64", 1)]
    clients = [1, 8] if quick else [1, 8, 32]
    return [(n, dtype, c) for n in (10**3, 10**6)
            for dtype, cs in (("float32", clients), ("float64", [1])) for c in cs]


def run(quick: bool) -> list[dict]:
    rows = []
    for kind in ("noop", "vectoradd"):
        for spec in specs(kind):
            server = spec.make()
            try:
                for n, dtype, c in cells(kind, quick):
                    row = cell(server, spec, kind, n, dtype, c, quick)
                    rows.append(row)
                    print(f"  {spec.name:<13} {kind:<9} n={n:<8} {dtype:<7} clients={c:<3} "
                          f"{row['rps']:>9.1f} req/s  p50 {row['p50_ms']:.3f} ms",
                          flush=True)
            finally:
                server.stop()
    return with_ratios(rows)


def with_ratios(rows: list[dict]) -> list[dict]:
    """Each row's requests/s over its paired Tesseract row's (same kind,
    elements, dtype and clients); "" where it has none."""
    key = ("kind", "n", "dtype", "clients")
    theirs = {(r["server"], *(r[k] for k in key)): r for r in rows}
    for r in rows:
        t = theirs.get((r["versus"], *(r[k] for k in key))) if r["versus"] else None
        r["rps_ratio"] = round(r["rps"] / t["rps"], 1) if t and t["rps"] else ""
    return rows


def verdicts(rows: list[dict]) -> list[str]:
    """The budgets, judged on the rows (with_ratios applied): only
    Tessera's rows get a verdict, each against its paired Tesseract row."""
    def find(server, kind, n, dtype, c):
        return next((r for r in rows if (r["server"], r["kind"], r["n"], r["dtype"],
                                         r["clients"]) == (server, kind, n, dtype, c)), None)
    out = []
    for r in rows:
        if r["server"].startswith("tessera-") and r["kind"] == "noop" and r["clients"] == 1:
            out.append(f"{r['server']} no-op p50, 1 client: {r['p50_ms'] * 1e3:.0f} us "
                       f"(budget 40 us): {'ok' if r['p50_ms'] <= 0.04 else 'OVER'}")
            theirs = find(r["versus"], "noop", 1, "float64", 1) if r["versus"] else None
            if theirs and r["p50_ms"] > 0:
                speed = theirs["p50_ms"] / r["p50_ms"]
                out.append(f"{r['server']} no-op p50, 1 client: {speed:.1f}x faster than "
                           f"{r['versus']}'s (budget 50x): {'ok' if speed >= 50 else 'OVER'}")
    for r in rows:
        if (r["server"].startswith("tessera-") and r["kind"] == "vectoradd"
                and r["n"] == 10**3 and r["clients"] == 8):
            if r["rps_ratio"] != "":
                out.append(f"{r['server']} ({r['resources']}) req/s at 8 clients, 1e3 "
                           f"{r['dtype']}: {r['rps_ratio']:.1f}x {r['versus']}'s (budget 20x): "
                           f"{'ok' if r['rps_ratio'] >= 20 else 'OVER'}")
            out.append(f"{r['server']} ({r['resources']}) req/s at 8 clients, 1e3 {r['dtype']}: "
                       f"{r['rps']:,.0f} (budget 20,000): {'ok' if r['rps'] >= 20000 else 'OVER'}")
    for server in sorted({r["server"] for r in rows if r["server"].startswith("tessera-c")}):
        big = find(server, "vectoradd", 10**6, "float64", 1)
        if big:
            out.append(f"{server} 1e6 float64 apply, 1 client, p50: {big['p50_ms']:.1f} ms "
                       f"(budget 15 ms): {'ok' if big['p50_ms'] <= 15 else 'OVER'}")
    return out


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    servers = list(dict.fromkeys(r["server"] for r in rows if r["kind"] == "vectoradd"))
    for ax, n in zip(axes, (10**3, 10**6)):
        for server in servers:
            mine = [r for r in rows if r["server"] == server and r["kind"] == "vectoradd"
                    and int(r["n"]) == n and r["dtype"] == "float32"]
            pts = sorted((int(r["clients"]), float(r["rps"])) for r in mine)
            if pts:
                ax.plot(*zip(*pts), marker="o", label=f"{server} ({mine[0]['resources']})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("concurrent clients")
        ax.set_ylabel("requests/s")
        ax.set_title(f"vectoradd, {n:.0e} float32 elements, json+base64")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def table(rows: list[dict]) -> list[str]:
    out = [f"{'server':<13} {'resources':<32} {'dtype':<7} {'kind':<9} {'n':>8} {'clients':>7} "
           f"{'req/s':>9} {'p50 ms':>9} {'p99 ms':>9}  vs Tesseract"]
    for r in rows:
        p99 = f"{r['p99_ms']:>9.3f}" if r["p99_ms"] != "" else f"{'-':>9}"
        vs = f"{r['rps_ratio']}x {r['versus']}" if r["rps_ratio"] != "" else ""
        out.append(f"{r['server']:<13} {r['resources']:<32} {r['dtype']:<7} {r['kind']:<9} "
                   f"{r['n']:>8} {r['clients']:>7} {r['rps']:>9.1f} {r['p50_ms']:>9.3f} {p99}  "
                   f"{vs}")
    return out


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
    print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    busy = spinners(args.load)
    try:
        rows = run(args.quick)
    finally:
        for p in busy:
            p.kill()
    print()
    for line in table(rows):
        print(line)
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
    print(f"(client: {client}; encoding {ENCODING} in and out; load: {args.load} busy "
          f"processes; load average {os.getloadavg()[0]:.1f} at the end; CSV {args.csv}; "
          f"plot {args.plot})")


if __name__ == "__main__":
    main()
