#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Tessera on Dask, in one run: what a component call adds to a Dask task,
what a sweep of the heat component gets through against Tesseract's HTTP
serving, and how both scale from one worker process to one per core. All
on a LocalCluster of worker processes on loopback, idle and beside CPU
load.

Sections (each against a baseline measured in the same run):
  per task   N tasks of a copying no-op on 10^3 float64 (y = x), cluster of
             one worker per core:
               dask no-op          Dask's own task returning its input (the baseline)
               tessera inproc      tessera.dask map of noop.so's apply
               tessera worker      the same, noop.so in worker mode
               tessera python      bench/tesseract_noop's tesseract_api.py as a
                                   Python component in the Dask worker
               tesseract http      tesseract-runtime serve --num-workers W, a thread
                                   pool of 4 W tesseract-core clients (Tesseract.from_url)
               tesseract http x W  W servers of one worker each, the same pool
                                   spread over them
               tessera serve http  tessera serve --threads W of noop.so, the same
                                   pool of tesseract-core clients
               tessera serve dask  the same server reached from the Dask workers:
                                   tessera.dask.load(client, URL), each worker
                                   opening the URL as a remote component
             and the component opens per Dask worker over every tessera
             inproc task of the run (10,000 in a full run).
  sweep S    R runs of heat (64 cells, S = 100, 1000 and 10000 steps: one run
             costs about 0.03, 0.24 and 2.3 ms), same cluster:
               serial here         one process, a loop of apply (the baseline)
               tessera map         one Dask task per run
               tessera batch       the runs as one batch, two chunks per worker
               tesseract http ...  as above; the Tesseract computes with the same
                                   heat.so in-process, so both sides do the same work
               tessera serve ...   as above, tessera serve of heat.so
  scaling    the 1000-step sweep (map and batch) and the Dask no-op on clusters of 1 .. cores
             worker processes; ratio to one worker.

Resources: every Dask cluster has W = one worker process per core, one
thread each; every HTTP server gets W computing processes or threads
(tesseract-runtime serve --num-workers W, or W servers of one worker;
tessera serve --threads W) and, driven from this process, a pool of 4 W
client threads; all requests json+base64, float64. The CSV's resources
column says which a row had.

Budgets (issue "Beyond one machine"), judged on Tessera's rows only:
tessera inproc per task <= 1.10 x the Dask no-op; 1 open per worker; a
Tessera sweep's runs/s >= 10 x the better Tesseract HTTP setup.

    python3 bench/dask_distributed.py [--quick] [--load N] [--csv PATH]

--load N (default 2) runs everything again beside N busy processes.
Prints a table, writes CSV (default build/bench/results/dask_distributed.csv).
Medians over rounds, the variants of a round interleaved. Exit status 0
whatever the verdicts.
"""

from __future__ import annotations

import argparse
import csv
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# tests/support/servers.py: starting a server and waiting until healthy,
# shared with the tests and the examples.
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import Server, runtime_serve_argv  # noqa: E402
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
NOOP_TESSERACT = ROOT / "bench" / "tesseract_noop"
HEAT = BUILD / "plugins" / "heat.so"
NOOP = BUILD / "plugins" / "noop.so"

# heat as a Tesseract that computes with the same plugin, in-process, so
# that the HTTP side of the sweep does exactly Tessera's work.
HEAT_TESSERACT = '''"""heat as a Tesseract, computed by Tessera's heat plugin in-process
(written by bench/dask_distributed.py)."""
import os
from pydantic import BaseModel
from tesseract_core.runtime import Array, Float64, Int64
import tessera

_heat = tessera.load(os.environ["TESSERA_BENCH_HEAT"])


class InputSchema(BaseModel):
    conductivity: Array[(None,), Float64]
    source: Array[(None,), Float64]
    initial_temperature: Array[(None,), Float64]
    observations: Array[(None,), Float64]
    dt: Float64
    steps: Int64


class OutputSchema(BaseModel):
    temperature: Array[(None,), Float64]
    misfit: Float64


def apply(inputs: InputSchema) -> OutputSchema:
    out = _heat.apply(dict(inputs))
    return OutputSchema(temperature=out["temperature"], misfit=float(out["misfit"]))
'''

CELLS, STEPS = 64, 1000


def dask_noop(inputs: dict) -> dict:
    """Dask's own no-op: the same data in and out as noop.so's apply."""
    return {"y": inputs["x"]}


def heat_runs(count: int, steps: int = STEPS) -> list[dict]:
    rng = np.random.default_rng(0)
    x = (np.arange(CELLS) + 0.5) / CELLS
    return [{"conductivity": k * (1 + x), "source": np.full(CELLS, s),
             "initial_temperature": np.zeros(CELLS), "observations": np.zeros(CELLS),
             "dt": np.float64(1e-3), "steps": np.int64(steps)}
            for k, s in rng.uniform(0.5, 2.0, size=(count, 2))]


# ---- machinery: load, servers, clusters ---------------------------------------

SPIN = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"


@contextmanager
def busy(count: int, limit_s: float = 3600):
    """count processes that keep a CPU busy each (and leave by themselves
    after limit_s)."""
    procs = [subprocess.Popen([sys.executable, "-c", SPIN.format(limit=limit_s)],
                              stdin=subprocess.DEVNULL) for _ in range(count)]
    try:
        yield
    finally:
        for p in procs:
            p.kill()
            p.wait()


@contextmanager
def tessera_serve(plugin: Path, threads: int, log_dir: Path):
    """tessera serve of plugin on loopback, in-process; yields its URL."""
    argv = [str(BUILD / "bin" / "tessera"), "serve", "--quiet", "--port", "{port}",
            "--threads", str(threads), str(plugin)]
    server = Server(argv, cwd=log_dir, what="tessera serve",
                    log=log_dir / f"tessera-serve-{plugin.stem}-{{port}}.log")
    try:
        server.wait_healthy(60)
        yield server.url
    finally:
        server.stop(grace_s=15)


@contextmanager
def serve(api: Path, workers: int, log_dir: Path):
    """tesseract-runtime serve of api on loopback; yields its URL."""
    env = dict(os.environ, TESSERACT_API_PATH=str(api), TESSERA_BENCH_HEAT=str(HEAT))
    argv = runtime_serve_argv("--num-workers", str(workers))
    server = Server(argv, env=env, cwd=log_dir, what="tesseract-runtime serve",
                    log=log_dir / f"serve-{api.parent.name}-{{port}}.log")
    try:
        server.wait_healthy(90)
        yield server.url
    finally:
        server.stop(grace_s=15)


class HttpPool:
    """A thread pool of tesseract-core clients (one per thread and URL),
    calls spread round-robin over the URLs."""

    def __init__(self, urls: list[str], threads: int) -> None:
        from tesseract_core import Tesseract

        self.urls, self._local = urls, threading.local()
        self._make = Tesseract.from_url
        self.pool = ThreadPoolExecutor(threads)

    def _call(self, i: int, inputs: dict) -> dict:
        clients = getattr(self._local, "clients", None)
        if clients is None:
            clients = self._local.clients = [self._make(u) for u in self.urls]
        return clients[i % len(clients)].apply(inputs)

    def apply(self, items: list[dict]) -> list[dict]:
        return list(self.pool.map(self._call, range(len(items)), items))

    def close(self) -> None:
        self.pool.shutdown()


def make_cluster(workers: int):
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    return cluster, Client(cluster)


def timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def rounds(variants: dict, count: int, n_rounds: int) -> dict[str, float]:
    """Median seconds per item of each variant (a callable running `count`
    items), the variants interleaved, starting one later each round."""
    names = list(variants)
    got: dict[str, list[float]] = {n: [] for n in names}
    for r in range(n_rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            got[name].append(timed(variants[name]) / count)
    return {n: statistics.median(v) for n, v in got.items()}


# ---- verdicts and labels (pure: numbers in, words out) ---------------------------

def is_tessera(variant: str) -> bool:
    """A row of Tessera's (not Dask's own, not the serial loop, not a
    Tesseract baseline: "tesseract ..." starts with "tessera" too)."""
    return variant.split()[0] == "tessera"


def is_tesseract(variant: str) -> bool:
    return variant.split()[0] == "tesseract"


def per_task_budget(variant: str, seconds: float, base: float) -> str:
    """tessera inproc's task at most 1.10 x Dask's no-op task."""
    if variant != "tessera inproc":
        return ""
    return "ok" if seconds <= 1.10 * base else "OVER"


def sweep_budgets(med: dict[str, float]) -> dict[str, str]:
    """Each Tessera row's runs/s against the better Tesseract HTTP setup
    (at least 10x); no verdict for the others."""
    theirs = [s for n, s in med.items() if is_tesseract(n)]
    if not theirs:
        return {n: "" for n in med}
    best = min(theirs)
    return {n: (("ok" if best / s >= 10 else "OVER") + f" ({best / s:.1f}x http)"
                if is_tessera(n) else "") for n, s in med.items()}


def resources(variant: str, workers: int) -> str:
    """What a row ran on: the cluster or the server, and the client pool."""
    dask = f"dask {workers} worker process{'es' if workers > 1 else ''} x 1 thread"
    pool = f"{4 * workers} client threads here"
    if variant.startswith("tesseract http x"):
        return f"{workers} tesseract-runtime serve x 1 worker, {pool}"
    if variant.startswith("tesseract http"):
        return f"tesseract-runtime serve --num-workers {workers}, {pool}"
    if variant.startswith("tessera serve") and variant.endswith("dask"):
        return f"tessera serve --threads {workers}, {dask}"
    if variant.startswith("tessera serve"):
        return f"tessera serve --threads {workers}, {pool}"
    if variant.startswith("serial"):
        return "1 process here"
    return dask


# ---- sections -------------------------------------------------------------------

def per_task(cores: int, count: int, n_rounds: int, tmp: Path) -> list[dict]:
    import tessera.dask

    x = np.random.default_rng(1).random(1000)
    items = [{"x": x}] * count
    cluster, client = make_cluster(cores)
    with ExitStack() as stack:
        stack.callback(cluster.close)
        stack.callback(client.close)
        comps = {"tessera inproc": tessera.dask.load(client, NOOP),
                 "tessera worker": tessera.dask.load(client, NOOP, "worker"),
                 "tessera python": tessera.dask.load(client, NOOP_TESSERACT)}
        one = stack.enter_context(serve(NOOP_TESSERACT / "tesseract_api.py", cores, tmp))
        many = [stack.enter_context(serve(NOOP_TESSERACT / "tesseract_api.py", 1, tmp))
                for _ in range(cores)]
        ours = stack.enter_context(tessera_serve(NOOP, cores, tmp))
        comps["tessera serve dask"] = tessera.dask.load(client, ours)
        pools = {f"tesseract http --num-workers {cores}": HttpPool([one], 4 * cores),
                 f"tesseract http x {cores} servers": HttpPool(many, 4 * cores),
                 "tessera serve http": HttpPool([ours], 4 * cores)}
        for p in pools.values():
            stack.callback(p.close)
        variants = {"dask no-op": lambda: client.gather(client.map(dask_noop, items,
                                                                   pure=False))}
        variants["dask no-op"]()                            # warm, as the others are
        for name, cc in comps.items():
            variants[name] = (lambda cc=cc: cc.apply(items))
            cc.apply(items[:4 * cores])                     # opened before timing
            np.testing.assert_array_equal(cc.apply(items[:1])[0]["y"], x)
        for name, pool in pools.items():
            variants[name] = (lambda pool=pool: pool.apply(items))
            pool.apply(items[:8 * cores])                   # clients connected
            np.testing.assert_array_equal(pool.apply(items[:1])[0]["y"], x)
        med = rounds(variants, count, n_rounds)
        opens = comps["tessera inproc"].opens()
        tasks = sum(s["stats"]["calls"] for s in comps["tessera inproc"].worker_states().values()
                    if s and s["stats"])
    base = med["dask no-op"]
    rows = [{"section": "per task", "variant": n, "resources": resources(n, cores),
             "workers": cores, "items": count, "median_us": s * 1e6, "per_s": 1 / s,
             "ratio": s / base, "budget": per_task_budget(n, s, base)}
            for n, s in med.items()]
    rows.append({"section": "per task", "variant": f"opens per worker ({tasks} tasks)",
                 "resources": resources("tessera inproc", cores),
                 "workers": cores, "items": tasks, "median_us": "", "per_s": "",
                 "ratio": max(opens.values()),
                 "budget": "ok" if set(opens.values()) == {1} else "OVER"})
    return rows


def sweep(cores: int, sizes: list[tuple[int, int]], n_rounds: int, tmp: Path) -> list[dict]:
    """The heat sweep at each (steps, runs) of sizes: the ratio to HTTP
    depends on what one run costs, so it is measured at several."""
    import tessera
    import tessera.dask

    api = tmp / "heat_tesseract" / "tesseract_api.py"
    api.parent.mkdir(exist_ok=True)
    api.write_text(HEAT_TESSERACT)
    rows = []
    cluster, client = make_cluster(cores)
    with ExitStack() as stack:
        stack.callback(cluster.close)
        stack.callback(client.close)
        heat = tessera.dask.load(client, HEAT)
        serial = stack.enter_context(tessera.load(HEAT))
        one = stack.enter_context(serve(api, cores, tmp))
        many = [stack.enter_context(serve(api, 1, tmp)) for _ in range(cores)]
        ours = stack.enter_context(tessera_serve(HEAT, cores, tmp))
        heat_served = tessera.dask.load(client, ours)
        pools = {f"tesseract http --num-workers {cores}": HttpPool([one], 4 * cores),
                 f"tesseract http x {cores} servers": HttpPool(many, 4 * cores),
                 "tessera serve http": HttpPool([ours], 4 * cores)}
        for p in pools.values():
            stack.callback(p.close)
        for steps, count in sizes:
            items = heat_runs(count, steps)
            stacked = {k: np.stack([r[k] for r in items]) for k in ("conductivity", "source")}
            want = [serial.apply(r)["temperature"] for r in items]

            def check(results, name):
                for r, w in zip(results, want):
                    if not np.array_equal(r["temperature"], w):
                        raise RuntimeError(f"sweep: {name} gave a different temperature")

            check(heat.apply(items), "tessera map")
            batch = heat.batch("apply", {**items[0], **stacked})
            check([{"temperature": t} for t in batch["temperature"]], "tessera batch")
            check(heat_served.apply(items), "tessera serve dask")
            variants = {"serial here": lambda: [serial.apply(r) for r in items],
                        "tessera map": lambda: heat.apply(items),
                        "tessera batch": lambda: heat.batch("apply", {**items[0], **stacked}),
                        "tessera serve dask": lambda: heat_served.apply(items)}
            for name, pool in pools.items():
                check(pool.apply(items), name)
                variants[name] = (lambda pool=pool: pool.apply(items))
            med = rounds(variants, count, n_rounds)
            budgets = sweep_budgets(med)
            base = med["serial here"]
            rows += [{"section": f"sweep {steps}", "variant": n,
                      "resources": resources(n, cores), "workers": cores,
                      "items": count, "median_us": s * 1e6, "per_s": 1 / s, "ratio": s / base,
                      "budget": budgets[n]}
                     for n, s in med.items()]
    return rows


def scaling(cores: int, count: int, n_rounds: int) -> list[dict]:
    import tessera.dask

    items = heat_runs(count)
    stacked = {k: np.stack([r[k] for r in items]) for k in ("conductivity", "source")}
    noop_items = [{"x": np.zeros(1000)}] * count
    rows, first = [], {}
    for workers in range(1, cores + 1):
        cluster, client = make_cluster(workers)
        try:
            heat = tessera.dask.load(client, HEAT)
            variants = {"dask no-op": lambda: client.gather(client.map(dask_noop, noop_items,
                                                                       pure=False)),
                        "sweep, tessera map": lambda: heat.apply(items),
                        "sweep, tessera batch": lambda: heat.batch(
                            "apply", {**items[0], **stacked})}
            for warm in variants.values():                  # every variant warmed once
                warm()
            med = rounds(variants, count, n_rounds)
        finally:
            client.close()
            cluster.close()
        for n, s in med.items():
            first.setdefault(n, s)
            rows.append({"section": "scaling", "variant": n,
                         "resources": resources("dask", workers), "workers": workers,
                         "items": count, "median_us": s * 1e6, "per_s": 1 / s,
                         "ratio": s / first[n], "budget": ""})
    return rows


# ---- the run ----------------------------------------------------------------------

HEADER = (f"{'load':>4}  {'section':<11} {'variant':<34} {'workers':>7} {'items':>6} "
          f"{'per item':>11} {'items/s':>9} {'ratio':>7}  budget")


def line(r: dict) -> str:
    us = r["median_us"]
    per = "" if us == "" else (f"{us / 1000:.2f} ms" if us >= 1000 else f"{us:.1f} us")
    rate = "" if r["per_s"] == "" else f"{r['per_s']:.0f}"
    ratio = f"{r['ratio']}" if r["variant"].startswith("opens") else f"{r['ratio']:.2f}x"
    return (f"{r['load']:>4}  {r['section']:<11} {r['variant']:<34} {r['workers']:>7} "
            f"{r['items']:>6} {per:>11} {rate:>9} {ratio:>7}  {r['budget']}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--load", type=int, default=2)
    ap.add_argument("--csv", type=Path,
                    default=BUILD / "bench" / "results" / "dask_distributed.csv")
    args = ap.parse_args()
    cores = os.cpu_count() or 2
    tasks, n_rounds = (300, 3) if args.quick else (2000, 5)
    # (heat steps, runs): one run costs about 0.03, 0.24 and 2.3 ms here.
    sizes = [(100, 300), (1000, 300)] if args.quick else [(100, 2000), (1000, 2000),
                                                          (10000, 400)]
    table = []
    print(HEADER, flush=True)
    with tempfile.TemporaryDirectory(prefix="tessera-dask-bench-") as tmp:
        for load in sorted({0, args.load}):
            with busy(load):
                print(f"-- load {load}: load average {os.getloadavg()[0]:.1f} at the start",
                      flush=True)
                for section in (lambda: per_task(cores, tasks, n_rounds, Path(tmp)),
                                lambda: sweep(cores, sizes, 3, Path(tmp)),
                                lambda: scaling(cores, sizes[1][1] // 2, 3)):
                    for row in section():
                        table.append({"load": load, **row})
                        print(line(table[-1]), flush=True)
    print("\n" + HEADER)
    for r in table:
        print(line(r))
    args.csv.parent.mkdir(parents=True, exist_ok=True)
    with args.csv.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]))
        w.writeheader()
        for r in table:
            w.writerow({k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()})
    print("\nresources:")
    for v, res in dict.fromkeys((r["variant"], r["resources"]) for r in table):
        if not v.startswith("opens"):
            print(f"  {v:<34} {res}")
    print(f"(load average {os.getloadavg()[0]:.1f} at the end; all requests json+base64, "
          "float64)")
    print("(ratio: per task, to the Dask no-op; sweep, to the serial loop; scaling, to one "
          f"worker; medians of interleaved rounds in the same run; CSV: {args.csv})")


if __name__ == "__main__":
    main()
