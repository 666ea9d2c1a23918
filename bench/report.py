#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The transport-cost report, v2: what a call costs in every way Tessera can
make it, beside the same work written as a Tesseract and called in-process
and over HTTP, and what happens to worker calls on a busy machine.

    python3 bench/report.py [--quick] [--out DIR] [--no-tesseract] [--no-load]

Both sides always do the same work: "copy" (y = x into a new array; the noop
plugin, and a Tesseract returning x.copy(), its vjp a copy of the cotangent)
and "axpy" (result = a*s + b; the vectoradd plugin, and a Tesseract computing
it with NumPy). The two Tesseracts are written into a temporary folder by
this script. Cells: way of calling x (copy apply, copy vjp, axpy apply) x
size (0, 10^3, 10^5, 10^7 float64 elements; 10^8 in a full run when memory
and disk allow). Ways of calling:

    inproc, isolated      tessera.load(..., mode), inputs in ordinary memory
    worker-arena          worker mode, inputs from component.empty (no copy)
    worker-copy           worker mode, inputs in ordinary memory (one copy)
    files-io_uring        worker mode, transport=files, file_io=io_uring
    files-posix           worker mode, transport=files, file_io=posix
    cli-base64            the tessera command line, json+base64 in and out
    tesseract-inproc      Tesseract.from_tesseract_api
    tesseract-http        tesseract-runtime serve on loopback, json+base64

Every call is timed alone; each cell gives p50 and p99 over those calls (no
p99 from fewer than 100 calls: "n<100"). The rows of one column (kernel,
endpoint, size) are sampled in the same rounds, their order rotated every
round: the library modes, Tesseract in-process and, for copy apply, the
baselines a ctypes call of tsr_call_run, a NumPy copy and a file write +
read. The command line and HTTP rows, sampled apart (milliseconds a call),
time what a client pays: encoding the request, the call, decoding the
answer. bench_inproc's direct call and a futex ping-pong (bench_pingpong)
are C programs run before the cells. "On a busy
machine": copy apply at 10^3 in inproc and both worker rows, timed from
Python, idle and then beside one busy process per CPU (bounded in time and
always stopped), drawn as CDFs. Then MALA steps per second on 2-D rosenbrock
from C (bench_mcmc) and from JAX.

Writes DIR/report.txt (the tables), cells.csv, baselines.csv, loaded.csv,
loaded_calls.csv (every per-call time of the busy-machine section), mcmc.csv,
bench_inproc.csv, machine.txt, calls.png (time per call against size) and
loaded.png (the CDFs). No timing is asserted: it exits 0 whatever the
figures, non-zero only when it cannot measure.
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
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
# tests/support/servers.py: starting a server and waiting until healthy,
# shared with the tests and the examples.
sys.path.insert(0, str(ROOT / "tests" / "support"))
from servers import Server, ServerError  # noqa: E402
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
NOOP = BUILD / "plugins" / "noop.so"

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
    """Per-call seconds: p50 and p99 (and p10 / p90) over calls each timed
    alone, and how many calls were timed."""
    p50: float
    p99: float
    p10: float
    p90: float
    samples: int
    values: np.ndarray | None = None  # the per-call seconds, kept for the CDF

    @staticmethod
    def of(values: list[float] | np.ndarray, keep: bool = False) -> "Stat":
        v = np.asarray(values, dtype=float)
        p10, p50, p90, p99 = np.percentile(v, [10, 50, 90, 99])
        return Stat(float(p50), float(p99), float(p10), float(p90), len(v),
                    v if keep else None)

    @property
    def median(self) -> float:
        return self.p50


NAN_STAT = Stat(float("nan"), float("nan"), float("nan"), float("nan"), 0)


@dataclass
class Budget:
    """How long to sample one cell: at least min_calls calls (a tenth as
    many at 10^7 elements, a hundredth at 10^8, never under 3), then until
    seconds have passed or max_calls."""
    seconds: float
    min_calls: int
    max_calls: int

    def for_size(self, n: int) -> "Budget":
        if n >= 10**7:
            cut = 10 if n < 10**8 else 100
            return Budget(self.seconds, max(3, self.min_calls // cut), self.max_calls)
        return self


def sample(fn: Callable[[], object], budget: Budget, keep: bool = False) -> Stat:
    """Time each call of fn alone (perf_counter_ns around it), after one
    untimed call: p50 and p99 are over single calls, so p99 shows the slow
    calls that an average over a batch would hide."""
    fn()
    clock = time.perf_counter_ns
    times: list[int] = []
    end = time.perf_counter() + budget.seconds
    while len(times) < budget.max_calls and (len(times) < budget.min_calls
                                             or time.perf_counter() < end):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return Stat.of(np.asarray(times, dtype=float) * 1e-9, keep)


def rotated(names: list, r: int) -> list:
    """names in round r's order: rotated by r, so that each comes first in turn."""
    k = r % len(names) if names else 0
    return names[k:] + names[:k]


def run_length(slice_s: float, est_s: float, cap: int) -> int:
    """How many calls of one function in a row within a round: as many as
    fill slice_s at est_s a call, at least 1 and at most cap. Every function
    gets about the same time in every round, so a fast one is sampled many
    times and a slow one (10^7 elements, a file) once."""
    if slice_s <= 0:
        return 1
    if not est_s > 0:
        return cap
    return max(1, min(cap, int(slice_s / est_s)))


def sample_rounds(fns: dict, budget: Budget) -> dict:
    """Time each call of every function alone, the functions interleaved in
    rounds: in each round each one runs for about a twentieth of the budget's
    seconds (run_length), in an order rotated every round, until each has
    min_calls and seconds x len(fns) have passed (or one has max_calls).
    One untimed call of each first. Whatever the machine does meanwhile hits
    all of them alike, so the rows of one column can be set side by side."""
    clock = time.perf_counter_ns
    names = list(fns)
    est: dict = {}
    for name, fn in fns.items():
        t0 = clock()
        fn()
        est[name] = (clock() - t0) * 1e-9
    times: dict = {k: [] for k in names}
    slice_s = budget.seconds / 20
    cap = max(1, budget.max_calls // 20)
    end = time.perf_counter() + budget.seconds * len(names)
    r = 0
    while True:
        counts = [len(v) for v in times.values()]
        if min(counts) >= budget.min_calls and (time.perf_counter() >= end
                                                or max(counts) >= budget.max_calls):
            break
        for name in rotated(names, r):
            fn, sink = fns[name], times[name]
            first = len(sink)
            for _ in range(run_length(slice_s, est[name], cap)):
                t0 = clock()
                fn()
                sink.append(clock() - t0)
            est[name] = float(np.mean(sink[first:])) * 1e-9
        r += 1
    return {k: Stat.of(np.asarray(v, dtype=float) * 1e-9) for k, v in times.items()}


def timer_cost() -> float:
    """What one perf_counter_ns pair around nothing costs (median, s)."""
    clock = time.perf_counter_ns
    v = []
    for _ in range(20000):
        t0 = clock()
        v.append(clock() - t0)
    return float(np.median(v)) * 1e-9


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


# ---- the two kernels ---------------------------------------------------------

# Every comparison runs the same work on both sides: "copy" is y = x into a
# new array (Tessera's noop plugin; a Tesseract whose apply returns x.copy()
# and whose vjp returns a copy of the cotangent), "axpy" is result = a*s + b
# (Tessera's vectoradd plugin; a Tesseract computing a * s + b with NumPy).
CALLS = [("copy", "apply"), ("copy", "vjp"), ("axpy", "apply")]
PLUGINS = {"copy": NOOP, "axpy": BUILD / "plugins" / "vectoradd.so"}
AXPY_S = 2.0

TESSERACT_APIS = {
    "copy": '''"""y = x as a Tesseract, copying as Tessera's noop does (written by bench/report.py)."""
from typing import Any
from pydantic import BaseModel
from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]]


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]]


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(y=inputs.x.copy())


def vector_jacobian_product(inputs: InputSchema, vjp_inputs: set[str], vjp_outputs: set[str],
                            cotangent_vector: dict[str, Any]) -> dict[str, Any]:
    return {"x": cotangent_vector["y"].copy()} if "x" in vjp_inputs else {}
''',
    "axpy": '''"""result = a * s + b as a Tesseract, as Tessera's vectoradd (written by bench/report.py)."""
from pydantic import BaseModel
from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    a: Array[(None,), Float64]
    b: Array[(None,), Float64]
    s: Float64


class OutputSchema(BaseModel):
    result: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(result=inputs.a * inputs.s + inputs.b)
''',
}


def call_label(kernel: str, ep: str) -> str:
    """copy apply, copy vjp, axpy apply."""
    return f"{kernel} {ep}"


def kernel_arrays(kernel: str, n: int, alloc: Callable[[int], np.ndarray]) -> dict:
    """The inputs of one call (filled), the cotangent, and what each endpoint
    must return (output name, value)."""
    if kernel == "copy":
        x, ct = alloc(n), alloc(n)
        x[:] = 1.5
        ct[:] = 0.5
        return {"inputs": {"x": x}, "ct": ct, "apply": ("y", x), "vjp": ("x", ct)}
    a, b = alloc(n), alloc(n)
    a[:] = 1.5
    b[:] = 0.5
    return {"inputs": {"a": a, "b": b, "s": AXPY_S}, "ct": None,
            "apply": ("result", np.full(n, 1.5 * AXPY_S + 0.5))}


def encode(x: np.ndarray) -> dict:
    """A Tesseract encoded array, json+base64."""
    return {"object_type": "array", "shape": list(x.shape), "dtype": "float64",
            "data": {"buffer": base64.b64encode(x.tobytes()).decode(), "encoding": "base64"}}


def payload(kernel: str, ep: str, arrays: dict) -> dict:
    """The json+base64 request of one call (the CLI's and HTTP's)."""
    inputs = {k: (encode(v) if isinstance(v, np.ndarray) else v)
              for k, v in arrays["inputs"].items()}
    if ep == "apply":
        return {"inputs": inputs}
    return {"inputs": inputs, "vjp_inputs": ["x"], "vjp_outputs": ["y"],
            "cotangent_vector": {"y": encode(arrays["ct"])}}


def decoded(answer: dict, key: str) -> np.ndarray:
    """One array of a json+base64 answer."""
    return np.frombuffer(base64.b64decode(answer[key]["data"]["buffer"]))


# ---- Tessera cells ----------------------------------------------------------


@dataclass
class Cell:
    """One measured cell of the grid."""
    system: str
    mode: str
    kernel: str
    endpoint: str
    n: int
    stat: Stat
    note: str = ""


@dataclass
class Report:
    """Everything one run measured."""
    cells: list[Cell] = field(default_factory=list)
    baselines: list[Cell] = field(default_factory=list)
    loaded: list[Cell] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    mcmc: list[dict] = field(default_factory=list)

    def get(self, system: str, mode: str, kernel: str, endpoint: str, n: int) -> Stat:
        for c in self.cells + self.baselines:
            if (c.system, c.mode, c.kernel, c.endpoint, c.n) == (system, mode, kernel, endpoint, n):
                return c.stat
        return NAN_STAT


def write_read_fn(data: bytes, path: Path) -> Callable[[], None]:
    """A sequential write + read of data through os.write / os.read (page cache)."""
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
    return write_read


def open_components(report: Report) -> dict:
    """(mode, kernel) -> an open component, for every library mode this machine has."""
    import tessera

    comps = {}
    for mode in MODES[:-1]:
        for kernel in ("copy", "axpy"):
            try:
                comps[(mode, kernel)] = tessera.load(PLUGINS[kernel], **MODE_OPTIONS[mode])
            except Exception as e:  # a transport this machine lacks: say so, go on
                report.notes.append(f"{mode}: cannot open {PLUGINS[kernel].name} ({e})")
    return comps


def grid_cells(report: Report, sizes: list[int], tess_sizes: list[int], budget: Budget,
               tesseracts: dict, tmp: Path, progress: Progress) -> None:
    """Every library mode (and Tesseract in-process) per kernel, endpoint and
    size, and for copy apply the baselines (a bare ctypes call of
    tsr_call_run, a NumPy copy, a file write + read of the same bytes): all
    the rows of one column sampled in the same rounds (sample_rounds), each
    checked to return the right values first."""
    sys.path.insert(0, str(ROOT / "bench"))
    from bench_python import CtypesCall, ctypes_library  # noqa: E402

    lib = ctypes_library()
    comps = open_components(report)
    try:
        for n in sizes:
            for kernel, ep in CALLS:
                fns: dict = {}
                # Rows with inputs in ordinary memory share one set (they
                # only read it), so a column holds two sets, not one a row.
                shared = kernel_arrays(kernel, n, np.empty)
                keep: list = [shared]  # what the calls use, freed after the column
                for (mode, k), comp in comps.items():
                    if k != kernel:
                        continue
                    arr = (kernel_arrays(kernel, n, lambda m, c=comp: c.empty((m,), "float64"))
                           if mode == "worker-arena" else shared)
                    inputs, ct = arr["inputs"], arr["ct"]
                    fn = ((lambda c=comp, i=inputs: c.apply(i)) if ep == "apply" else
                          (lambda c=comp, i=inputs, t=ct: c.vjp(i, ["x"], ["y"], {"y": t})))
                    key, want = arr[ep]
                    if not np.array_equal(fn()[key], want):
                        raise RuntimeError(f"{mode} {kernel} {ep}, n={n}: wrong result")
                    fns[("tessera", mode)] = fn
                    keep.append(arr)
                if kernel in tesseracts and n in tess_sizes:
                    t = tesseracts[kernel]
                    arr = shared
                    inputs, ct = arr["inputs"], arr["ct"]
                    fn = ((lambda i=inputs: t.apply(i)) if ep == "apply" else
                          (lambda i=inputs, c=ct: t.vector_jacobian_product(i, ["x"], ["y"],
                                                                            {"y": c})))
                    key, want = arr[ep]
                    try:
                        if not np.array_equal(np.asarray(fn()[key]), want):
                            raise RuntimeError(f"the {kernel} Tesseract's {ep} returned a "
                                               "wrong value")
                        fns[("tesseract", "inproc")] = fn
                        keep.append(arr)
                    except Exception as e:  # say so; the Tessera rows go on
                        report.notes.append(f"Tesseract in-process {kernel} {ep} failed "
                                            f"({type(e).__name__}: {e}): no such row from here")
                        del tesseracts[kernel]
                refs = []
                if (kernel, ep) == ("copy", "apply"):
                    if ("inproc", "copy") in comps:
                        ref = CtypesCall(lib, comps[("inproc", "copy")], n)
                        refs.append(ref)
                        fns[("baseline", "direct-ctypes")] = ref.run
                    src, dst = shared["inputs"]["x"], np.empty(n)
                    fns[("baseline", "memcpy")] = lambda s=src, d=dst: np.copyto(d, s)
                    fns[("baseline", "file-write+read")] = write_read_fn(src.tobytes(),
                                                                         tmp / "seq.bin")
                    keep.append((src, dst))
                gc.collect()
                try:
                    stats = sample_rounds(fns, budget.for_size(n))
                finally:
                    for ref in refs:
                        ref.close()
                for (system, mode), st in stats.items():
                    k, e = ("-", "-") if mode in ("memcpy", "file-write+read") else (kernel, ep)
                    cell = Cell(system, mode, k, e, n, st)
                    (report.baselines if system == "baseline" else report.cells).append(cell)
                # free the arena buffers before the next column
                fns = keep = stats = fn = arr = inputs = ct = src = dst = shared = None
                gc.collect()
                (tmp / "seq.bin").unlink(missing_ok=True)
                progress.step(f"{call_label(kernel, ep)} n={size_label(n)}")
    finally:
        gc.collect()
        for comp in comps.values():
            comp.close()


def cli_cells(report: Report, sizes: list[int], budget: Budget, tmp: Path,
              progress: Progress) -> None:
    """`tessera apply|vjp -f json+base64` on a payload file, one process per
    call, start-up included, timed as a client pays it: encoding the
    request and writing its file, the process, reading and decoding the
    answer into an array. Sampled in rounds of their own (a process per
    call is milliseconds; the library cells' budget would take minutes)."""
    exe = BUILD / "bin" / "tessera"
    for kernel, ep in CALLS:
        for n in sizes:
            arr = kernel_arrays(kernel, n, np.empty)
            path = tmp / f"cli-{kernel}-{ep}-{n}.json"
            out = tmp / "cli-out.json"
            cmd = [str(exe), ep, "-f", "json+base64", "-o", str(out), str(PLUGINS[kernel]),
                   f"@{path}"]
            key, want = arr[ep]

            def run() -> np.ndarray:
                path.write_text(json.dumps(payload(kernel, ep, arr)))
                subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
                return decoded(json.loads(out.read_text()), key)

            if not np.array_equal(run(), want):
                raise RuntimeError(f"cli {kernel} {ep}, n={n}: wrong result")
            st = sample(run, budget.for_size(n))
            report.cells.append(Cell("tessera", "cli-base64", kernel, ep, n, st))
            path.unlink()
            out.unlink(missing_ok=True)
            progress.step(f"cli {kernel} {ep} n={size_label(n)}")


# ---- baselines --------------------------------------------------------------


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
                    st = Stat(float(row["median_ns"]) * 1e-9, float("nan"),
                              float(row["p10_ns"]) * 1e-9, float(row["p90_ns"]) * 1e-9, 0)
                    report.baselines.append(Cell("baseline", "direct-C", "copy", "apply",
                                                 int(row["n"]), st))
    except (OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        report.notes.append(f"bench_inproc did not run ({e}): no direct-C baseline")
    cmd = [str(BUILD / "bin" / "bench_pingpong"), "--batches", "5" if quick else "15",
           "--calls", "200" if quick else "1000", "--spin", "200000", "--spin", "0"]
    try:
        text = subprocess.run(cmd, check=True, capture_output=True, text=True,
                              timeout=300).stdout
        for row in csv.DictReader(text.splitlines()):
            st = Stat(float(row["median_ns"]) * 1e-9, float("nan"), float(row["p10_ns"]) * 1e-9,
                      float(row["p90_ns"]) * 1e-9, int(row["batches"]))
            name = "futex-sleep" if row["spin_ns"] == "0" else "futex-spin"
            report.baselines.append(Cell("baseline", name, "-", "-", 0, st))
    except (OSError, subprocess.SubprocessError, KeyError, ValueError) as e:
        report.notes.append(f"bench_pingpong did not run ({e}): no futex baseline")


# ---- Tesseract --------------------------------------------------------------


def write_tesseract_apis(tmp: Path) -> dict[str, Path]:
    """The copy and axpy Tesseracts, written into tmp: kernel -> tesseract_api.py."""
    paths = {}
    for kernel, text in TESSERACT_APIS.items():
        d = tmp / f"tesseract-{kernel}"
        d.mkdir(exist_ok=True)
        (d / "tesseract_api.py").write_text(text)
        paths[kernel] = d / "tesseract_api.py"
    return paths


def tesseract_http(report: Report, apis: dict[str, Path], sizes: list[int], budget: Budget,
                   tmp: Path, progress: Progress) -> None:
    """The same kernels as Tesseracts over HTTP on loopback: tesseract-runtime
    serve in a subprocess per kernel, POST /apply and /vector_jacobian_product
    with json+base64 in and out, on one kept-alive connection."""
    exe = shutil.which("tesseract-runtime")
    if not exe:
        report.notes.append("tesseract-runtime not found: no HTTP figures")
        progress.step("tesseract http", len(CALLS) * len(sizes))
        return
    for kernel in ("copy", "axpy"):
        env = dict(os.environ, TESSERACT_API_PATH=str(apis[kernel]))
        server = Server([exe, "serve", "--host", "127.0.0.1", "--port", "{port}"], env=env,
                        cwd=tmp, log=tmp / f"serve-{kernel}.log", what="tesseract-runtime serve")
        port = server.port
        try:
            try:
                server.wait_healthy(60)
            except ServerError:
                tail = " ".join(server.output().split()[-30:])
                raise RuntimeError(f"tesseract-runtime serve did not start: {tail}") from None
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
            headers = {"Content-Type": "application/json",
                       "Accept": "application/json+base64"}
            for n in sizes:
                arr = kernel_arrays(kernel, n, np.empty)
                for k, ep in CALLS:
                    if k != kernel:
                        continue
                    url = "/apply" if ep == "apply" else "/vector_jacobian_product"
                    key, want = arr[ep]

                    def post() -> np.ndarray:
                        # What a client pays: the json+base64 body built,
                        # the round trip, the answer decoded into an array.
                        body = json.dumps(payload(kernel, ep, arr))
                        conn.request("POST", url, body=body, headers=headers)
                        r = conn.getresponse()
                        data = r.read()
                        if r.status != 200:
                            raise RuntimeError(f"HTTP {r.status}: {data[:200]!r}")
                        return decoded(json.loads(data), key)

                    if not np.array_equal(post(), want):
                        raise RuntimeError(f"tesseract http {kernel} {ep}: wrong result")
                    st = sample(post, budget.for_size(n))
                    report.cells.append(Cell("tesseract", "http", kernel, ep, n, st))
                    progress.step(f"tesseract http {kernel} {ep} n={size_label(n)}")
            conn.close()
        finally:
            server.stop(grace_s=10)


# ---- on a busy machine ------------------------------------------------------

LOADED_MODES = ["inproc", "worker-arena", "worker-copy"]
LOADED_N = 10**3
SPINNER = "import time\nend = time.monotonic() + {limit}\nwhile time.monotonic() < end:\n    pass\n"


def start_spinners(count: int, limit_s: float) -> list[subprocess.Popen]:
    """count processes that keep a CPU busy each, and leave by themselves
    after limit_s even if nobody stops them."""
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", SPINNER.format(limit=limit_s)],
                                          stdin=subprocess.DEVNULL, start_new_session=True))
    except BaseException:
        stop_spinners(procs)
        raise
    return procs


def stop_spinners(procs: list[subprocess.Popen]) -> None:
    """Stop each spinner this report started, by its own handle."""
    for p in procs:
        if p.poll() is None:
            p.kill()
    for p in procs:
        p.wait()


def loaded_cells(report: Report, seconds: float, progress: Progress) -> None:
    """copy apply at 10^3 elements in the worker rows (inproc for reference),
    per-call times from Python through the tessera package: first on the
    machine as it is ('idle'), then beside one busy process per CPU
    ('loaded'). The spinners are stopped whatever happens."""
    import tessera

    budget = Budget(seconds, 50, 200_000)
    comps = {}
    try:
        for mode in LOADED_MODES:
            comps[mode] = tessera.load(NOOP, **MODE_OPTIONS[mode])
        calls = {}
        for mode, comp in comps.items():
            x = comp.empty((LOADED_N,), "float64") if mode == "worker-arena" else np.empty(LOADED_N)
            x[:] = 1.5
            calls[mode] = (lambda c, inp: lambda: c.apply(inp))(comp, {"x": x})
        ncpu = os.cpu_count() or 1
        for condition in ("idle", "loaded"):
            spinners: list[subprocess.Popen] = []
            try:
                if condition == "loaded":
                    spinners = start_spinners(ncpu, seconds * len(LOADED_MODES) + 30)
                    time.sleep(0.3)
                    if any(p.poll() is not None for p in spinners):
                        raise RuntimeError("a load process left early")
                for mode in LOADED_MODES:
                    gc.collect()
                    st = sample(calls[mode], budget, keep=True)
                    report.loaded.append(Cell("tessera", mode, "copy", "apply", LOADED_N, st,
                                              f"{condition}, {len(spinners)} busy"))
                    progress.step(f"{condition} {mode}")
            finally:
                stop_spinners(spinners)
        calls = x = None
    finally:
        gc.collect()
        for comp in comps.values():
            comp.close()


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
            # The example's chain: a start, then lax.scan segments (compiled
            # before the clock starts), keeping the whole trace.
            begin, segment = make_chain(rosen, 0.05)
            x0, noise, log_u = jnp.zeros(2), jnp.asarray(noise), jnp.asarray(log_u)
            jax.block_until_ready(segment(begin(x0), noise, log_u))
            t0 = time.perf_counter()
            _, kept = segment(begin(x0), noise, log_u)
            jax.block_until_ready(kept)
            seconds = time.perf_counter() - t0
            del kept, begin, segment
        report.mcmc.append({"from": "JAX jit+scan", "mode": "inproc", "steps": jsteps,
                            "steps_per_s": jsteps / seconds, "budget": ""})
    except Exception as e:  # JAX missing or failing: say so, go on
        report.notes.append(f"the JAX chain did not run ({type(e).__name__}: {e})")
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, ["from", "mode", "steps", "steps_per_s", "budget"])
        w.writeheader()
        w.writerows(report.mcmc)


# ---- output -----------------------------------------------------------------

ROWS = [("tessera", m) for m in MODES] + [("tesseract", "inproc"), ("tesseract", "http")]


def row_label(system: str, mode: str) -> str:
    return mode if system == "tessera" else f"tesseract-{mode}"


# A p99 from fewer calls than this is close to the slowest call, not a
# 99th percentile: the tables print "n<100" instead.
P99_MIN_SAMPLES = 100


def p99_text(st: Stat) -> str:
    """The p99 of a cell, or "n<100" when too few calls were timed for one."""
    if st.samples < P99_MIN_SAMPLES:
        return f"n<{P99_MIN_SAMPLES}"
    return fmt_time(st.p99)


def p50_p99(st: Stat) -> str:
    if st.samples == 0:
        return "-"
    return f"{fmt_time(st.p50)} / {p99_text(st)}"


def print_report(report: Report, sizes: list[int], machine: dict[str, str], tee: Tee,
                 quick: bool, timer: float) -> None:
    """The terminal tables (also kept for report.txt)."""
    tee("Tessera transport-cost report v2" + (" (quick)" if quick else ""))
    for k, v in machine.items():
        tee(f"  {k:22s} {v}")
    tee("Per-call seconds, p50 / p99 over calls each timed alone (timing adds "
        f"~{fmt_time(timer)} a call).")
    tee("Both sides do the same work: copy = y = x into a new array (noop plugin; a")
    tee("Tesseract returning x.copy()), axpy = a*s + b (vectoradd plugin; the same in NumPy")
    tee("as a Tesseract). float64; the machine's noise moves figures by tens of percent.")
    tee("Same rounds: in each column the library rows, tesseract-inproc and (copy apply)")
    tee("the direct-ctypes, memcpy and file-write+read baselines are sampled in the same")
    tee("rounds, their order rotated every round. cli-base64 and tesseract-http are sampled")
    tee("in rounds of their own and time what a client pays: encoding the json+base64")
    tee("request (for the CLI, writing its file), the call, decoding the answer into an")
    tee("array. direct-C and the futex rows are separate C programs run before the cells.")
    tee(f"p99 is printed only over at least {P99_MIN_SAMPLES} calls: \"n<{P99_MIN_SAMPLES}\" "
        "marks a cell with")
    tee("fewer (cells.csv gives each count and the p99 of the calls there were).")
    for kernel, ep in CALLS:
        tee(f"\n== {call_label(kernel, ep)}: p50 / p99 per call")
        tee(f"{'way of calling':18s}" + "".join(f"{'n=' + size_label(n):>22s}" for n in sizes))
        for system, mode in ROWS:
            cells = [p50_p99(report.get(system, mode, kernel, ep, n)) for n in sizes]
            if any(c != "-" for c in cells):
                tee(f"{row_label(system, mode):18s}" + "".join(f"{c:>22s}" for c in cells))
    tee("\n== baselines, in the same rounds as copy apply: p50 / p99 per operation")
    tee(f"{'baseline':18s}" + "".join(f"{'n=' + size_label(n):>22s}" for n in sizes))
    for name, kernel, ep in (("direct-ctypes", "copy", "apply"), ("memcpy", "-", "-"),
                             ("file-write+read", "-", "-")):
        tee(f"{name:18s}" + "".join(
            f"{p50_p99(report.get('baseline', name, kernel, ep, n)):>22s}" for n in sizes))
    for c in report.baselines:
        if c.mode in ("direct-C", "futex-spin", "futex-sleep"):
            tee(f"{c.mode:18s} n={c.n:<9d} {fmt_time(c.stat.p50)} (median; p10 "
                f"{fmt_time(c.stat.p10)}, p90 {fmt_time(c.stat.p90)})"
                + ("  bench_inproc: the plugin's apply, no host" if c.mode == "direct-C" else
                   "  bench_pingpong: a counter between two processes, no data"))
    if any(c.system == "tesseract" for c in report.cells):
        for kernel, ep in CALLS:
            tee(f"\n== {call_label(kernel, ep)}: Tessera p50 / Tesseract p50 "
                "(below 1: Tessera is faster)")
            tee(f"{'Tessera mode':18s}{'vs':>10s}" + "".join(f"{'n=' + size_label(n):>11s}"
                                                            for n in sizes))
            for ref, short in (("inproc", "in-proc"), ("http", "HTTP")):
                for mode in MODES:
                    vals = []
                    for n in sizes:
                        x = report.get("tessera", mode, kernel, ep, n).p50
                        y = report.get("tesseract", ref, kernel, ep, n).p50
                        vals.append("-" if x != x or y != y else f"{x / y:.3g}")
                    if any(v != "-" for v in vals):
                        tee(f"{mode:18s}{short:>10s}" + "".join(f"{v:>11s}" for v in vals))
    if report.loaded:
        ncpu = os.cpu_count()
        tee(f"\n== on a busy machine: copy apply, n={size_label(LOADED_N)}, per call, idle "
            f"and beside {ncpu} busy processes (one per CPU)")
        tee("   (timed from Python through the tessera package, each call alone)")
        tee(f"{'mode':14s}{'condition':>10s}{'calls':>9s}{'p50':>11s}{'p90':>11s}"
            f"{'p99':>11s}{'max':>11s}")
        for c in report.loaded:
            cond = c.note.split(",")[0]
            mx = float(np.max(c.stat.values)) if c.stat.values is not None else float("nan")
            tee(f"{c.mode:14s}{cond:>10s}{c.stat.samples:>9d}{fmt_time(c.stat.p50):>11s}"
                f"{fmt_time(c.stat.p90):>11s}{p99_text(c.stat):>11s}{fmt_time(mx):>11s}")
    if report.mcmc:
        tee("\n== MALA on 2-D rosenbrock (one apply + one vjp per step)")
        tee(f"{'from':14s}{'mode':10s}{'steps':>10s}{'steps/s':>14s}  budget (>= 1e6/s in-process, C)")
        for r in report.mcmc:
            tee(f"{r['from']:14s}{r['mode']:10s}{r['steps']:>10d}{r['steps_per_s']:>14,.0f}  "
                f"{r['budget']}")
    for note in report.notes:
        tee(f"note: {note}")


def write_csvs(report: Report, out: Path, machine: dict[str, str]) -> None:
    """cells.csv (Tessera and Tesseract), baselines.csv, loaded.csv (summary),
    loaded_calls.csv (every per-call time of the busy-machine section), machine.txt."""
    fields = ["system", "mode", "kernel", "endpoint", "n", "bytes", "p50_s", "p99_s", "p10_s",
              "p90_s", "calls", "note"]
    for name, rows in (("cells.csv", report.cells), ("baselines.csv", report.baselines),
                       ("loaded.csv", report.loaded)):
        with open(out / name, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(fields)
            for c in rows:
                w.writerow([c.system, c.mode, c.kernel, c.endpoint, c.n, 8 * c.n,
                            f"{c.stat.p50:.9g}", f"{c.stat.p99:.9g}", f"{c.stat.p10:.9g}",
                            f"{c.stat.p90:.9g}", c.stat.samples, c.note])
    with open(out / "loaded_calls.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["mode", "condition", "call", "seconds"])
        for c in report.loaded:
            cond = c.note.split(",")[0]
            for i, v in enumerate(c.stat.values if c.stat.values is not None else []):
                w.writerow([c.mode, cond, i, f"{v:.9g}"])
    (out / "machine.txt").write_text("".join(f"{k}: {v}\n" for k, v in machine.items()))


MODE_STYLE = {mode: (f"C{k}", "o") for k, mode in enumerate(MODES)}
MODE_STYLE[("tesseract", "inproc")] = ("black", "s")
MODE_STYLE[("tesseract", "http")] = ("black", "D")


def plot(report: Report, sizes: list[int], out: Path, machine: dict[str, str]) -> str:
    """calls.png: p50 time per call against size, log-log, one panel per
    kernel and endpoint, every way of calling (Tessera's and Tesseract's) on
    the same axes, a band up to p99; loaded.png: the CDF of per-call times
    idle and loaded. Returns a note when it cannot."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed: no plot (pip install matplotlib)"
    xs = {n: max(n, 1) for n in sizes}
    fig, axes = plt.subplots(1, len(CALLS), figsize=(18, 6.2), sharey=True)
    for ax, (kernel, ep) in zip(axes, CALLS):
        for system, mode in ROWS:
            pts = [(xs[n], st.p50, st.p99 if st.samples >= P99_MIN_SAMPLES else st.p50)
                   for n in sizes
                   for st in [report.get(system, mode, kernel, ep, n)] if st.samples]
            if not pts:
                continue
            x, p50, p99 = zip(*pts)
            if system == "tessera":
                color, marker = MODE_STYLE[mode]
                ls, label = "-", mode
            else:
                color, marker = MODE_STYLE[(system, mode)]
                ls = "--" if mode == "inproc" else "-."
                label = "Tesseract in-process" if mode == "inproc" else "Tesseract over HTTP"
            ax.plot(x, p50, marker=marker, color=color, linestyle=ls, label=label,
                    linewidth=2.2 if system == "tesseract" else 1.5)
            ax.fill_between(x, p50, p99, color=color, alpha=0.08, linewidth=0)
        if kernel == "copy":
            pts = [(xs[n], report.get("baseline", "memcpy", "-", "-", n).p50) for n in sizes
                   if n > 0 and report.get("baseline", "memcpy", "-", "-", n).samples]
            if pts:
                ax.plot(*zip(*pts), linestyle=":", color="tab:gray",
                        label="memcpy of the array (NumPy)")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("float64 elements per array (n = 0 drawn at 1)")
        ax.set_title(f"{call_label(kernel, ep)}: "
                     + {"apply": "y = x, a new array", "vjp": "x_bar = y_bar, a new array"}[ep]
                     if kernel == "copy" else f"{call_label(kernel, ep)}: result = a*s + b")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("seconds per call (line: p50; band: up to p99)")
    handles, labels = {}, []
    for ax in axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            if lab not in handles:
                handles[lab] = h
                labels.append(lab)
    fig.legend([handles[lab] for lab in labels], labels, fontsize=9, loc="center right")
    fig.suptitle("Time per call, Tessera (every way of calling) and Tesseract, same work "
                 f"on both sides - {machine.get('cpu', '')}, {machine.get('nproc')} CPUs",
                 fontsize=11)
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    fig.savefig(out / "calls.png", dpi=100)
    plt.close(fig)
    if report.loaded:
        fig, ax = plt.subplots(figsize=(10, 6))
        for c in report.loaded:
            cond = c.note.split(",")[0]
            v = np.sort(c.stat.values)
            y = np.arange(1, len(v) + 1) / len(v)
            ax.step(v, y, where="post", color=MODE_STYLE[c.mode][0],
                    linestyle="-" if cond == "idle" else "--",
                    label=f"{c.mode}, {cond} (p99 {p99_text(c.stat)})")
        ax.set_xscale("log")
        ax.set_xlabel("seconds per call (log)")
        ax.set_ylabel("fraction of calls at most this long")
        ax.set_ylim(0, 1.01)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=9, loc="lower right")
        ax.set_title(f"copy apply, n={size_label(LOADED_N)}: idle (solid) and beside "
                     f"{os.cpu_count()} busy processes (dashed), {machine.get('nproc')} CPUs")
        fig.tight_layout()
        fig.savefig(out / "loaded.png", dpi=100)
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
    p.add_argument("--no-load", action="store_true",
                   help="skip the busy-machine section (it loads every CPU for a few seconds)")
    p.add_argument("--max-elements", type=int, default=10**8,
                   help="the largest size measured (default 10^8, in a full run when "
                        "memory allows)")
    args = p.parse_args()
    if not NOOP.exists():
        print(f"report: {NOOP} is missing (build first, or set TESSERA_BUILD_DIR)",
              file=sys.stderr)
        return 1
    out = args.out
    out.mkdir(parents=True, exist_ok=True)
    sizes = [n for n in (0, 10**3, 10**5, 10**7) if n <= args.max_elements]
    notes = []
    if not args.quick and args.max_elements >= 10**8:
        need = 16 * 8 * 10**8
        tmp_free = shutil.disk_usage(tempfile.gettempdir()).free
        if available_memory() >= need and tmp_free >= 4 * 8 * 10**8:
            sizes.append(10**8)
        else:
            notes.append("10^8 elements skipped: needs ~12.8 GB of free memory and 3.2 GB "
                         "of disk")
    budget = Budget(0.02, 20, 2000) if args.quick else Budget(0.25, 200, 20000)
    tess_sizes = [n for n in sizes if n <= 10**7]
    cli_sizes = [n for n in sizes if n <= (10**5 if args.quick else 10**7)]
    http_sizes = [n for n in sizes if n <= (10**5 if args.quick else 10**7)]
    cli_budget = Budget(0.0, 3 if args.quick else 7, 20)
    http_budget = Budget(0.05 if args.quick else 0.5, 5 if args.quick else 20, 500)
    loaded_seconds = 0.0 if args.no_load else (0.7 if args.quick else 4.0)
    have_tesseract = False
    if not args.no_tesseract:
        if importlib.util.find_spec("tesseract_core") is not None:
            have_tesseract = True
        else:
            notes.append("tesseract-core is not importable: no Tesseract side")

    machine = machine_description()
    timer = timer_cost()
    report = Report(notes=notes)
    total = (len(CALLS) * len(sizes) + len(CALLS) * len(cli_sizes)
             + (len(CALLS) * len(http_sizes) if have_tesseract else 0)
             + (2 * len(LOADED_MODES) if loaded_seconds else 0) + 3)
    progress = Progress(total)
    with tempfile.TemporaryDirectory(prefix="tessera-report-") as tmpdir:
        tmp = Path(tmpdir)
        try:
            progress.step("C baselines (bench_inproc, bench_pingpong)")
            c_bench_baselines(report, out, args.quick)
            apis = write_tesseract_apis(tmp) if have_tesseract else {}
            tesseracts = {}
            if have_tesseract:
                try:
                    from tesseract_core import Tesseract
                    tesseracts = {k: Tesseract.from_tesseract_api(str(v)) for k, v in apis.items()}
                except Exception as e:
                    report.notes.append(f"Tesseract in-process failed ({type(e).__name__}: {e})")
            grid_cells(report, sizes, tess_sizes, budget, tesseracts, tmp, progress)
            cli_cells(report, cli_sizes, cli_budget, tmp, progress)
            if have_tesseract:
                try:
                    tesseract_http(report, apis, http_sizes, http_budget, tmp, progress)
                except Exception as e:
                    report.notes.append(f"Tesseract over HTTP failed ({type(e).__name__}: {e})")
            if loaded_seconds:
                loaded_cells(report, loaded_seconds, progress)
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
    print_report(report, sizes, machine, tee, args.quick, timer)
    write_csvs(report, out, machine)
    (out / "report.txt").write_text("\n".join(tee.lines) + "\n")
    print(f"\nwrote {out}/report.txt, cells.csv, baselines.csv, loaded.csv, loaded_calls.csv, "
          "mcmc.csv, machine.txt" + ("" if note else ", calls.png, loaded.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
