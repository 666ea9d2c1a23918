#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The transport-cost report: what a call of the noop plugin (y = x) costs in
every way Tessera can make it, against baselines measured in the same run,
and beside the same no-op written as a Tesseract.

    python3 bench/report.py [--quick] [--out DIR]

Cells: mode x size (0, 10^3, 10^5, 10^7 float64 elements; 10^8 in a full run
when memory and disk allow) x endpoint (apply, vjp). Modes:

    inproc, isolated      tessera.load(..., mode), inputs in ordinary memory
    worker-arena          worker mode, inputs from component.empty (no copy)
    worker-copy           worker mode, inputs in ordinary memory (one copy)
    files-io_uring        worker mode, transport=files, file_io=io_uring
    files-posix           worker mode, transport=files, file_io=posix
    cli-base64            the tessera command line, json+base64 in and out

Baselines: a ctypes call of tsr_call_run on a prepared in-process call (the
C API without the binding), bench_inproc's direct call of the plugin's
apply, a futex ping-pong between two processes (bench_pingpong), a NumPy copy
and a sequential file write + read of the same bytes. When tesseract-core is
importable, the Tesseract no-op (bench/tesseract_noop) is measured
in-process (Tesseract.from_tesseract_api) and over HTTP on loopback
(tesseract-runtime serve). Then a cheap chain: MALA steps per second on 2-D
rosenbrock from C (bench_mcmc) and from JAX (jit + lax.scan).

Writes DIR/report.txt (the tables), DIR/cells.csv, DIR/baselines.csv,
DIR/mcmc.csv, DIR/bench_inproc.csv, DIR/machine.txt and DIR/overhead.png. No timing is asserted:
it exits 0 whatever the figures, non-zero only when it cannot measure.
"""

from __future__ import annotations

import argparse
import base64
import csv
import gc
import http.client
import importlib.util
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
NOOP = BUILD / "plugins" / "noop.so"
TESSERACT_API = ROOT / "bench" / "tesseract_noop" / "tesseract_api.py"

MODES = ["inproc", "isolated", "worker-arena", "worker-copy", "files-io_uring",
         "files-posix", "cli-base64"]
MODE_OPTIONS = {
    "inproc": {"mode": "inproc"},
    "isolated": {"mode": "isolated"},
    "worker-arena": {"mode": "worker"},
    "worker-copy": {"mode": "worker"},
    "files-io_uring": {"mode": "worker", "transport": "files", "file_io": "io_uring"},
    "files-posix": {"mode": "worker", "transport": "files", "file_io": "posix"},
}
ENDPOINTS = ["apply", "vjp"]


# ---- output helpers -------------------------------------------------------


class Progress:
    """A one-line progress bar on stderr, drawn only when stderr is a
    terminal; otherwise silent."""

    def __init__(self, total: int) -> None:
        self.total, self.done = max(total, 1), 0
        self.enabled = sys.stderr.isatty()
        self.t0 = time.perf_counter()

    def step(self, label: str, units: int = 1) -> None:
        """Count `units` of work as done and redraw with `label`."""
        self.done = min(self.done + units, self.total)
        if not self.enabled:
            return
        width = 30
        filled = int(width * self.done / self.total)
        elapsed = time.perf_counter() - self.t0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.done:3d}/"
                         f"{self.total} {elapsed:5.0f}s {label[:40]:<40}")
        sys.stderr.flush()

    def close(self) -> None:
        """Erase the bar."""
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


class Tee:
    """Print to stdout and keep every line for report.txt."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def __call__(self, text: str = "") -> None:
        print(text, flush=True)
        self.lines.append(text)


def fmt_time(seconds: float) -> str:
    """A duration with a unit that keeps 3 significant figures."""
    if seconds != seconds:  # NaN
        return "-"
    a = abs(seconds)
    if a < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if a < 1e-3:
        return f"{seconds * 1e6:.3g} us"
    if a < 1:
        return f"{seconds * 1e3:.3g} ms"
    return f"{seconds:.3g} s"


def size_label(n: int) -> str:
    """0, 1e3, 1e5, ..."""
    return "0" if n == 0 else f"1e{int(round(np.log10(n)))}"


# ---- timing -----------------------------------------------------------------


@dataclass
class Stat:
    """Per-call seconds over repeated batches: median and the p10/p90 spread."""
    median: float
    p10: float
    p90: float
    samples: int
    calls_per_sample: int

    @staticmethod
    def of(values: list[float], per: int) -> "Stat":
        v = np.asarray(values, dtype=float)
        return Stat(float(np.median(v)), float(np.percentile(v, 10)),
                    float(np.percentile(v, 90)), len(v), per)


NAN_STAT = Stat(float("nan"), float("nan"), float("nan"), 0, 0)


def measure(fn: Callable[[], object], batches: int, target_s: float,
            max_calls: int = 2000) -> Stat:
    """Time fn in `batches` batches of k consecutive calls, k chosen so that a
    batch lasts about target_s (one untimed call first)."""
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-9)
    per = int(max(1, min(max_calls, target_s / one)))
    values = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(per):
            fn()
        values.append((time.perf_counter() - t0) / per)
    return Stat.of(values, per)


# ---- machine ----------------------------------------------------------------


def machine_description() -> dict[str, str]:
    """CPU model, cores, kernel, memory, io_uring and huge pages."""
    info = {"cpu": "unknown", "nproc": str(os.cpu_count()), "kernel": platform.release(),
            "python": platform.python_version()}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    info["mem_available"] = f"{available_memory() / 2**30:.1f} GiB"
    try:
        thp = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text().strip()
    except OSError:
        thp = "unknown"
    info["transparent_hugepage"] = thp
    try:
        out = subprocess.run([str(BUILD / "bin" / "tessera"), "info"], capture_output=True,
                             text=True, timeout=30).stdout
        for line in out.splitlines():
            if ":" in line:
                k, v = line.split(":", 1)
                info["tessera " + k.strip()] = v.strip()
    except (OSError, subprocess.TimeoutExpired) as e:
        info["tessera info"] = f"unavailable ({e})"
    return info


def available_memory() -> int:
    """MemAvailable in bytes (0 if unknown)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


# ---- Tessera cells ----------------------------------------------------------


@dataclass
class Cell:
    """One measured cell of the grid."""
    system: str
    mode: str
    endpoint: str
    n: int
    stat: Stat
    note: str = ""


@dataclass
class Report:
    """Everything one run measured."""
    cells: list[Cell] = field(default_factory=list)
    baselines: list[Cell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mcmc: list[dict] = field(default_factory=list)

    def get(self, system: str, mode: str, endpoint: str, n: int) -> Stat:
        for c in self.cells + self.baselines:
            if (c.system, c.mode, c.endpoint, c.n) == (system, mode, endpoint, n):
                return c.stat
        return NAN_STAT


def tessera_cells(report: Report, sizes: list[int], reps: int, target: float,
                  progress: Progress) -> None:
    """Every library mode x size x endpoint through the Python package."""
    import tessera

    for mode in MODES[:-1]:
        try:
            comp = tessera.load(NOOP, **MODE_OPTIONS[mode])
        except Exception as e:  # a transport this machine lacks: say so, go on
            report.notes.append(f"{mode}: cannot open noop ({e})")
            progress.step(mode, 2 * len(sizes))
            continue
        try:
            for n in sizes:
                if mode == "worker-arena":
                    x = comp.empty((n,), "float64")
                    ct = comp.empty((n,), "float64")
                else:
                    x, ct = np.empty(n), np.empty(n)
                x[:] = 1.5
                ct[:] = 0.5
                inputs = {"x": x}
                calls = {
                    "apply": lambda: comp.apply(inputs),
                    "vjp": lambda: comp.vjp(inputs, ["x"], ["y"], {"y": ct}),
                }
                check_y = comp.apply(inputs)["y"]
                check_g = comp.vjp(inputs, ["x"], ["y"], {"y": ct})["x"]
                if not (np.array_equal(check_y, x) and np.array_equal(check_g, ct)):
                    raise RuntimeError(f"{mode}, n={n}: noop returned wrong values")
                del check_y, check_g
                for ep in ENDPOINTS:
                    st = measure(calls[ep], reps if n < 10**7 else max(3, reps // 3), target)
                    report.cells.append(Cell("tessera", mode, ep, n, st))
                    progress.step(f"{mode} {ep} n={size_label(n)}")
                inputs = calls = x = ct = None  # free the arena buffers before the next n
                gc.collect()
        finally:
            gc.collect()
            comp.close()


def cli_cells(report: Report, sizes: list[int], reps: int, tmp: Path,
              progress: Progress) -> None:
    """`tessera apply|vjp -f json+base64` on a payload file: one process per
    call, start-up included."""
    exe = BUILD / "bin" / "tessera"
    for n in sizes:
        x = np.full(n, 1.5)
        enc = {"object_type": "array", "shape": [n], "dtype": "float64",
               "data": {"buffer": base64.b64encode(x.tobytes()).decode(), "encoding": "base64"}}
        payloads = {
            "apply": {"inputs": {"x": enc}},
            "vjp": {"inputs": {"x": enc}, "vjp_inputs": ["x"], "vjp_outputs": ["y"],
                    "cotangent_vector": {"y": enc}},
        }
        for ep in ENDPOINTS:
            path = tmp / f"cli-{ep}-{n}.json"
            path.write_text(json.dumps(payloads[ep]))
            out = tmp / "cli-out.json"
            cmd = [str(exe), ep, "-f", "json+base64", "-o", str(out), str(NOOP), f"@{path}"]

            def run() -> None:
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)

            run()
            key = "y" if ep == "apply" else "x"
            got = np.frombuffer(base64.b64decode(json.loads(out.read_text())[key]["data"]["buffer"]))
            if not np.array_equal(got, x):
                raise RuntimeError(f"cli {ep}, n={n}: wrong result")
            st = measure(run, reps if n < 10**7 else 3, 0.0, max_calls=1)
            report.cells.append(Cell("tessera", "cli-base64", ep, n, st))
            path.unlink()
            out.unlink(missing_ok=True)
            progress.step(f"cli {ep} n={size_label(n)}")


# ---- baselines --------------------------------------------------------------


def ctypes_cells(report: Report, sizes: list[int], reps: int, target: float) -> None:
    """A bare ctypes call of tsr_call_run on a prepared in-process apply: the
    C API's cost with nothing of the binding (the 'direct' baseline)."""
    import ctypes

    import tessera
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_python import CtypesCall, ctypes_library  # noqa: E402

    lib = ctypes_library()
    with tessera.load(NOOP, "inproc") as comp:
        for n in sizes:
            ref = CtypesCall(lib, comp, n)
            try:
                st = measure(ref.run, reps if n < 10**7 else max(3, reps // 3), target)
            finally:
                ref.close()
            report.baselines.append(Cell("baseline", "direct-ctypes", "apply", n, st))
    del ctypes


def copy_and_file_cells(report: Report, sizes: list[int], reps: int, target: float,
                        tmp: Path) -> None:
    """memcpy (a NumPy copy into a touched buffer) and a sequential write +
    read of the same bytes through os.write / os.read (page cache)."""
    for n in sizes:
        src, dst = np.full(n, 1.5), np.empty(n)
        big = n >= 10**7
        st = measure(lambda: np.copyto(dst, src), reps if not big else 3, target)
        report.baselines.append(Cell("baseline", "memcpy", "-", n, st))
        data = src.tobytes()
        path = tmp / "seq.bin"

        def write_read() -> None:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                os.close(fd)
            fd = os.open(path, os.O_RDONLY)
            try:
                left = len(data)
                while left:
                    chunk = os.read(fd, min(left, 1 << 24))
                    if not chunk:
                        break
                    left -= len(chunk)
            finally:
                os.close(fd)

        st = measure(write_read, reps if not big else 3, target)
        report.baselines.append(Cell("baseline", "file-write+read", "-", n, st))
        path.unlink(missing_ok=True)
        src = dst = data = None  # free before the next n


def c_bench_baselines(report: Report, out: Path, quick: bool) -> None:
    """bench_inproc's direct call of the plugin's apply (from its CSV, run
    with --quick) and the futex ping-pong between two processes
    (bench_pingpong), spinning 200 us as the library does by default and
    always sleeping."""
    inproc_csv = out / "bench_inproc.csv"
    cmd = [str(BUILD / "bin" / "bench_inproc"), "--quick", "--csv", str(inproc_csv)]
    try:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=300)
        with open(inproc_csv, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("variant") == "direct":
                    st = Stat(float(row["median_ns"]) * 1e-9, float(row["p10_ns"]) * 1e-9,
                              float(row["p90_ns"]) * 1e-9, 0, 0)
                    report.baselines.append(Cell("baseline", "direct-C", "apply",
                                                 int(row["n"]), st))
    except (OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        report.notes.append(f"bench_inproc did not run ({e}): no direct-C baseline")
    cmd = [str(BUILD / "bin" / "bench_pingpong"), "--batches", "5" if quick else "15",
           "--calls", "200" if quick else "1000", "--spin", "200000", "--spin", "0"]
    try:
        text = subprocess.run(cmd, check=True, capture_output=True, text=True,
                              timeout=300).stdout
        for row in csv.DictReader(text.splitlines()):
            st = Stat(float(row["median_ns"]) * 1e-9, float(row["p10_ns"]) * 1e-9,
                      float(row["p90_ns"]) * 1e-9, int(row["batches"]),
                      int(row["calls_per_batch"]))
            name = "futex-sleep" if row["spin_ns"] == "0" else "futex-spin"
            report.baselines.append(Cell("baseline", name, "-", 0, st))
    except (OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        report.notes.append(f"bench_pingpong did not run ({e}): no futex baseline")


# ---- Tesseract --------------------------------------------------------------


def tesseract_inproc(report: Report, sizes: list[int], reps: int, target: float,
                     progress: Progress) -> None:
    """The Tesseract no-op through Tesseract.from_tesseract_api."""
    from tesseract_core import Tesseract

    t = Tesseract.from_tesseract_api(str(TESSERACT_API))
    for n in sizes:
        x, ct = np.full(n, 1.5), np.full(n, 0.5)
        calls = {
            "apply": lambda: t.apply({"x": x}),
            "vjp": lambda: t.vector_jacobian_product({"x": x}, ["x"], ["y"], {"y": ct}),
        }
        if not np.array_equal(np.asarray(calls["apply"]()["y"]), x):
            raise RuntimeError("the Tesseract no-op returned a wrong y")
        for ep in ENDPOINTS:
            st = measure(calls[ep], reps if n < 10**7 else 3, target, max_calls=200)
            report.cells.append(Cell("tesseract", "inproc", ep, n, st))
            progress.step(f"tesseract inproc {ep} n={size_label(n)}")


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def tesseract_http(report: Report, sizes: list[int], reps: int, tmp: Path,
                   progress: Progress) -> None:
    """The Tesseract no-op over HTTP on loopback: tesseract-runtime serve in a
    subprocess, POST /apply and /vector_jacobian_product with json+base64
    in and out, on one kept-alive connection."""
    exe = shutil.which("tesseract-runtime")
    if not exe:
        report.notes.append("tesseract-runtime not found: no HTTP figures")
        progress.step("tesseract http", 2 * len(sizes))
        return
    port = free_port()
    env = dict(os.environ, TESSERACT_API_PATH=str(TESSERACT_API))
    log = open(tmp / "serve.log", "w+")
    proc = subprocess.Popen([exe, "serve", "--host", "127.0.0.1", "--port", str(port)],
                            env=env, stdout=log, stderr=subprocess.STDOUT, cwd=tmp,
                            start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                tail = " ".join(log.read().split()[-30:])
                report.notes.append(f"tesseract-runtime serve did not start: {tail}")
                progress.step("tesseract http", 2 * len(sizes))
                return
            try:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
                c.request("GET", "/health")
                if c.getresponse().status == 200:
                    c.close()
                    break
            except OSError:
                time.sleep(0.2)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        headers = {"Content-Type": "application/json", "Accept": "application/json+base64"}
        for n in sizes:
            x = np.full(n, 1.5)
            enc = {"object_type": "array", "shape": [n], "dtype": "float64",
                   "data": {"buffer": base64.b64encode(x.tobytes()).decode(),
                            "encoding": "base64"}}
            bodies = {
                "apply": ("/apply", json.dumps({"inputs": {"x": enc}})),
                "vjp": ("/vector_jacobian_product",
                        json.dumps({"inputs": {"x": enc}, "vjp_inputs": ["x"],
                                    "vjp_outputs": ["y"], "cotangent_vector": {"y": enc}})),
            }
            for ep in ENDPOINTS:
                url, body = bodies[ep]

                def post() -> bytes:
                    conn.request("POST", url, body=body, headers=headers)
                    r = conn.getresponse()
                    data = r.read()
                    if r.status != 200:
                        raise RuntimeError(f"HTTP {r.status}: {data[:200]!r}")
                    return data

                key = "y" if ep == "apply" else "x"
                got = json.loads(post())[key]["data"]["buffer"]
                if np.frombuffer(base64.b64decode(got)).tolist() != x.tolist()[:n]:
                    raise RuntimeError(f"tesseract http {ep}: wrong result")
                st = measure(post, reps if n < 10**7 else 3, 0.05, max_calls=50)
                report.cells.append(Cell("tesseract", "http", ep, n, st))
                progress.step(f"tesseract http {ep} n={size_label(n)}")
        conn.close()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


# ---- MCMC ---------------------------------------------------------------------


def mcmc(report: Report, quick: bool, out: Path) -> None:
    """Steps per second of MALA on 2-D rosenbrock: bench_mcmc from C in each
    mode, then the JAX chain (jit + lax.scan, in-process)."""
    steps = 200_000 if quick else 2_000_000
    csv_path = out / "mcmc.csv"
    cmd = [str(BUILD / "bin" / "bench_mcmc"), "--steps", str(steps), "--csv", str(csv_path)]
    try:
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, timeout=600)
        with open(csv_path, newline="") as f:
            for row in csv.DictReader(f):
                report.mcmc.append({"from": "C", "mode": row["mode"], "steps": int(row["steps"]),
                                    "steps_per_s": float(row["steps_per_s"]),
                                    "budget": row["budget"]})
    except (OSError, subprocess.SubprocessError) as e:
        report.notes.append(f"bench_mcmc did not run ({e})")
    try:
        import jax
        import jax.numpy as jnp

        import tessera
        jax.config.update("jax_enable_x64", True)
        sys.path.insert(0, str(ROOT / "bindings" / "python" / "examples"))
        from mcmc_common import random_numbers  # noqa: E402
        from mcmc_jax import make_chain  # noqa: E402

        jsteps = 20_000 if quick else 200_000
        noise, log_u = random_numbers(0, jsteps, 2)
        with tessera.load(BUILD / "plugins" / "rosenbrock.so", "inproc") as rosen:
            chain = make_chain(rosen, 0.05)
            args = (jnp.zeros(2), jnp.asarray(noise), jnp.asarray(log_u))
            chain(*args)[0].block_until_ready()
            t0 = time.perf_counter()
            xs, _ = chain(*args)
            xs.block_until_ready()
            seconds = time.perf_counter() - t0
            del xs, chain
        report.mcmc.append({"from": "JAX jit+scan", "mode": "inproc", "steps": jsteps,
                            "steps_per_s": jsteps / seconds, "budget": ""})
    except Exception as e:  # JAX missing or failing: say so, go on
        report.notes.append(f"the JAX chain did not run ({type(e).__name__}: {e})")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, ["from", "mode", "steps", "steps_per_s", "budget"])
        w.writeheader()
        w.writerows(report.mcmc)


# ---- output -----------------------------------------------------------------


def overhead(report: Report, mode: str, ep: str, n: int, system: str = "tessera") -> float:
    """Median of the cell minus the direct (ctypes) baseline at the same n."""
    return report.get(system, mode, ep, n).median - report.get(
        "baseline", "direct-ctypes", "apply", n).median


def print_report(report: Report, sizes: list[int], machine: dict[str, str], tee: Tee,
                 quick: bool) -> None:
    """The terminal tables (also kept for report.txt)."""
    tee("Tessera transport-cost report" + (" (quick)" if quick else ""))
    for k, v in machine.items():
        tee(f"  {k:22s} {v}")
    tee("Per-call seconds, median [p10 .. p90] over batches; noop plugin (y = x), float64.")
    tee("The machine's noise moves figures by tens of percent: compare within one run.")
    tee("noop's apply and vjp copy x (or the cotangent) into a new result; the Tesseract")
    tee("no-op returns its input itself, so at large n its figures hold no copy.")
    for ep in ENDPOINTS:
        tee(f"\n== {ep}: median per call [p10 .. p90]")
        tee(f"{'mode':18s}" + "".join(f"{'n=' + size_label(n):>30s}" for n in sizes))
        rows = [("tessera", m) for m in MODES] + [("tesseract", "inproc"), ("tesseract", "http")]
        for system, mode in rows:
            label = mode if system == "tessera" else f"tesseract-{mode}"
            cells = []
            for n in sizes:
                st = report.get(system, mode, ep, n)
                cells.append("-" if st.samples == 0 else
                             f"{fmt_time(st.median)} [{fmt_time(st.p10)}..{fmt_time(st.p90)}]")
            if any(c != "-" for c in cells):
                tee(f"{label:18s}" + "".join(f"{c:>30s}" for c in cells))
    tee("\n== baselines in the same run (median per operation)")
    names = ["direct-ctypes", "memcpy", "file-write+read"]
    tee(f"{'baseline':18s}" + "".join(f"{'n=' + size_label(n):>14s}" for n in sizes))
    for name in names:
        tee(f"{name:18s}" + "".join(
            f"{fmt_time(report.get('baseline', name, 'apply' if name.startswith('direct') else '-', n).median):>14s}"
            for n in sizes))
    for c in report.baselines:
        if c.mode in ("direct-C", "futex-spin", "futex-sleep"):
            tee(f"{c.mode:18s} n={c.n:<9d} {fmt_time(c.stat.median)} "
                f"[{fmt_time(c.stat.p10)}..{fmt_time(c.stat.p90)}]"
                + ("  (bench_inproc: the plugin's apply, no host)" if c.mode == "direct-C" else
                   "  (bench_pingpong: a counter between two processes, no data)"))
    tee("\n== overhead: median - direct ctypes call of tsr_call_run at the same n (apply)")
    tee("   (ctypes itself costs a few hundred ns, so in-process rows can be below zero)")
    tee(f"{'mode':18s}" + "".join(f"{'n=' + size_label(n):>14s}" for n in sizes))
    for mode in MODES:
        vals = [overhead(report, mode, "apply", n) for n in sizes]
        if any(v == v for v in vals):
            tee(f"{mode:18s}" + "".join(f"{fmt_time(v):>14s}" for v in vals))
    if any(c.system == "tesseract" for c in report.cells):
        for ref, label in (("inproc", "Tesseract in-process"), ("http", "Tesseract over HTTP")):
            if all(report.get("tesseract", ref, "apply", n).samples == 0 for n in sizes):
                continue
            for ep in ENDPOINTS:
                tee(f"\n== Tessera / {label}, {ep}: ratio of medians (below 1: Tessera is faster)")
                tee(f"{'mode':18s}" + "".join(f"{'n=' + size_label(n):>12s}" for n in sizes))
                for mode in MODES:
                    vals = []
                    for n in sizes:
                        a = report.get("tessera", mode, ep, n).median
                        b = report.get("tesseract", ref, ep, n).median
                        vals.append("-" if a != a or b != b else f"{a / b:.3g}")
                    tee(f"{mode:18s}" + "".join(f"{v:>12s}" for v in vals))
    if report.mcmc:
        tee("\n== MALA on 2-D rosenbrock (one apply + one vjp per step)")
        tee(f"{'from':14s}{'mode':10s}{'steps':>10s}{'steps/s':>14s}  budget (>= 1e6/s in-process, C)")
        for r in report.mcmc:
            tee(f"{r['from']:14s}{r['mode']:10s}{r['steps']:>10d}{r['steps_per_s']:>14,.0f}  "
                f"{r['budget']}")
    for note in report.notes:
        tee(f"note: {note}")


def write_csvs(report: Report, out: Path, machine: dict[str, str]) -> None:
    """cells.csv (Tessera and Tesseract), baselines.csv, machine.txt."""
    fields = ["system", "mode", "endpoint", "n", "bytes", "median_s", "p10_s", "p90_s",
              "samples", "calls_per_sample", "overhead_vs_direct_s", "note"]
    for name, rows in (("cells.csv", report.cells), ("baselines.csv", report.baselines)):
        with open(out / name, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            for c in rows:
                ov = overhead(report, c.mode, c.endpoint, c.n, c.system) if name == "cells.csv" else ""
                w.writerow([c.system, c.mode, c.endpoint, c.n, 8 * c.n, f"{c.stat.median:.9g}",
                            f"{c.stat.p10:.9g}", f"{c.stat.p90:.9g}", c.stat.samples,
                            c.stat.calls_per_sample, ov if ov == "" else f"{ov:.9g}", c.note])
    (out / "machine.txt").write_text("".join(f"{k}: {v}\n" for k, v in machine.items()))


def plot(report: Report, sizes: list[int], out: Path, machine: dict[str, str]) -> str:
    """overhead.png: overhead (median - direct call) against size, log-log,
    one panel per endpoint, baselines dashed. Returns a note when it cannot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    xs = [max(n, 1) for n in sizes]
    fig, axes = plt.subplots(1, 2, figsize=(15, 5.5), sharey=True)
    for ax, ep in zip(axes, ENDPOINTS):
        for k, mode in enumerate(MODES):
            ys = [overhead(report, mode, ep, n) for n in sizes]
            pts = [(x, y) for x, y in zip(xs, ys) if y == y and y > 0]
            if pts:
                ax.plot(*zip(*pts), marker="o", color=f"C{k}", label=mode)
        for mode in ("inproc", "http"):
            ys = [overhead(report, mode, ep, n, "tesseract") for n in sizes]
            pts = [(x, y) for x, y in zip(xs, ys) if y == y and y > 0]
            if pts:
                ax.plot(*zip(*pts), marker="s", color="black" if mode == "http" else "grey",
                        label=f"Tesseract {mode}")
        for name, style in (("memcpy", ":"), ("file-write+read", "--")):
            ys = [report.get("baseline", name, "-", n).median for n in sizes]
            pts = [(x, y) for x, y in zip(xs, ys) if y == y and y > 0]
            if pts:
                ax.plot(*zip(*pts), linestyle=style, color="tab:gray", label=f"{name} (baseline)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("float64 elements (n = 0 drawn at 1)")
        ax.set_title(f"{ep}: overhead over a direct C API call")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds per call")
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    fig.legend([handles[lab] for lab in labels], labels, fontsize=8, loc="center right")
    fig.suptitle(f"noop plugin, {machine.get('cpu', '')}, {machine.get('nproc')} CPUs "
                 "(overheads at or below zero are not drawn)", fontsize=10)
    fig.tight_layout(rect=(0, 0, 0.83, 1))
    fig.savefig(out / "overhead.png", dpi=110)
    plt.close(fig)
    return ""


def own_shm_left() -> list[str]:
    """Shared memory this process still holds once every component is closed:
    the library's memfds (arena segments, channels) among its open fds."""
    left = []
    try:
        for fd in os.listdir("/proc/self/fd"):
            try:
                target = os.readlink(f"/proc/self/fd/{fd}")
            except OSError:
                continue
            if target.startswith("/memfd:tessera-"):
                left.append(f"fd {fd} ({target})")
    except OSError:
        pass
    return left


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true",
                   help="fewer repeats, no 10^8, short MCMC chains: under a minute")
    p.add_argument("--out", type=Path, default=BUILD / "bench" / "report",
                   help="where the files go (default build/bench/report)")
    p.add_argument("--no-tesseract", action="store_true", help="skip the Tesseract side")
    args = p.parse_args()
    if not NOOP.exists():
        print(f"report: {NOOP} is missing (build first, or set TESSERA_BUILD_DIR)",
              file=sys.stderr)
        return 1
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    sizes = [0, 10**3, 10**5, 10**7]
    notes = []
    if not args.quick:
        need = 16 * 8 * 10**8
        tmp_free = shutil.disk_usage(tempfile.gettempdir()).free
        if available_memory() >= need and tmp_free >= 4 * 8 * 10**8:
            sizes.append(10**8)
        else:
            notes.append("10^8 elements skipped: needs ~12.8 GB of free memory and 3.2 GB "
                         "of disk")
    reps = 5 if args.quick else 15
    target = 0.002 if args.quick else 0.01
    tess_sizes = [n for n in sizes if n <= 10**7]
    cli_sizes = [n for n in sizes if n <= (10**5 if args.quick else 10**7)]
    http_sizes = [n for n in sizes if n <= (10**5 if args.quick else 10**7)]
    have_tesseract = False
    if not args.no_tesseract:
        if importlib.util.find_spec("tesseract_core") is not None:
            have_tesseract = True
        else:
            notes.append("tesseract-core is not importable: no Tesseract side")

    machine = machine_description()
    report = Report(notes=notes)
    total = (6 * 2 * len(sizes) + 2 * len(cli_sizes)
             + (2 * len(tess_sizes) + 2 * len(http_sizes) if have_tesseract else 0) + 4)
    progress = Progress(total)
    with tempfile.TemporaryDirectory(prefix="tessera-report-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            progress.step("C baselines (bench_inproc, bench_pingpong)")
            c_bench_baselines(report, out, args.quick)
            progress.step("ctypes, memcpy, file baselines")
            ctypes_cells(report, sizes, reps, target)
            copy_and_file_cells(report, sizes, reps, target, tmp)
            tessera_cells(report, sizes, reps, target, progress)
            cli_cells(report, cli_sizes, 3 if args.quick else 7, tmp, progress)
            if have_tesseract:
                try:
                    tesseract_inproc(report, tess_sizes, reps, target, progress)
                except Exception as e:
                    report.notes.append(f"Tesseract in-process failed ({type(e).__name__}: {e})")
                try:
                    tesseract_http(report, http_sizes, 3 if args.quick else 7, tmp, progress)
                except Exception as e:
                    report.notes.append(f"Tesseract over HTTP failed ({type(e).__name__}: {e})")
            progress.step("MCMC chains")
            mcmc(report, args.quick, out)
            progress.step("writing")
        finally:
            progress.close()
    gc.collect()
    note = plot(report, sizes, out, machine)
    if note:
        report.notes.append(note)
    left = own_shm_left()
    if left:
        report.notes.append(f"shared memory still held: {', '.join(left)}")
    tee = Tee()
    print_report(report, sizes, machine, tee, args.quick)
    write_csvs(report, out, machine)
    (out / "report.txt").write_text("\n".join(tee.lines) + "\n")
    print(f"\nwrote {out}/report.txt, cells.csv, baselines.csv, mcmc.csv, machine.txt"
          + ("" if note else ", overhead.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
