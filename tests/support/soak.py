# SPDX-License-Identifier: MIT
"""The soak's loops, shared by tests/python/test_soak.py (short counts,
with bounds) and bench/soak_python.py (the long form, a report).

Three kinds of loop, each measured after a warm-up:

- calls: one endpoint (apply, jvp, vjp, jacobian) of the rosenbrock plugin
  through one face (NumPy, JAX jitted, JAX eager, PyTorch) in one mode,
  called over and over; the same loop over a pure-NumPy/JAX/PyTorch
  function of the same maths is the baseline, so that growth of the
  interpreter and the frameworks themselves shows apart from Tessera's;
- cycles: load, one apply, close, over and over, in each mode, with RSS,
  open fds and threads before and after;
- serve: `tessera serve` answering keep-alive requests, with the server
  process's RSS, fds and threads before and after.

RSS comes from /proc/self/statm (or /proc/PID/status for the server),
tracemalloc's traced memory after gc.collect() (it counts what Python's
allocators hold: objects kept alive, reference cycles kept in a list,
buffers of arrays that are never freed).
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import http.client
import json
import os
import resource
import subprocess
import tempfile
import tracemalloc
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

PAGE = resource.getpagesize()
FACES = ("numpy", "jax-jit", "jax-eager", "torch")
ENDPOINTS = ("apply", "jvp", "vjp", "jacobian")
CALL_MODES = ("inproc", "worker")
CYCLE_MODES = ("inproc", "isolated", "worker")
# rosenbrock at a fixed point; n = 4 keeps each call cheap.
X = np.array([0.5, 1.5, -0.25, 1.0])
TANGENT = np.array([1.0, 0.0, 0.5, -1.0])
A, B = 1.0, 100.0


def rss_bytes() -> int:
    """This process's resident set (statm's second field, in pages)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


@dataclasses.dataclass
class ProcState:
    rss: int
    fds: int
    threads: int


def proc_state(pid: int | str = "self") -> ProcState:
    """RSS (VmRSS), open fds and threads of a process, from /proc."""
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return ProcState(rss=int(fields["VmRSS"][0]) * 1024, fds=len(os.listdir(f"/proc/{pid}/fd")),
                     threads=int(fields["Threads"][0]))


def live_objects() -> dict[str, int]:
    """The extension's own counters of what is alive: call objects, results
    viewed in a call's buffer, results owning their buffer."""
    from tessera import _ext

    counts = _ext._debug_counts()
    return {k: counts[k] for k in ("calls", "results_in_call", "results_owned")}


@dataclasses.dataclass
class Growth:
    """What one measured window added: RSS and traced bytes over calls, and
    the change in the extension's live objects (live_objects())."""
    calls: int
    rss: int
    traced: int
    objects: dict[str, int] = dataclasses.field(default_factory=dict)

    def per_million(self, value: int) -> float:
        return value * 1e6 / self.calls


def measure_calls(step: Callable[[], object], calls: int, warmup: int) -> Growth:
    """step() warmup times, then calls times; RSS and traced memory (both
    after gc.collect()) before and after the measured calls. tracemalloc
    runs through the warm-up too, so that its own tables have settled."""
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        for _ in range(warmup):
            step()
        gc.collect()
        objects0 = live_objects()
        rss0, traced0 = rss_bytes(), tracemalloc.get_traced_memory()[0]
        for _ in range(calls):
            step()
        gc.collect()
        rss, traced = rss_bytes() - rss0, tracemalloc.get_traced_memory()[0] - traced0
        objects = {k: v - objects0[k] for k, v in live_objects().items()}
        return Growth(calls, rss, traced, objects)
    finally:
        if not started:
            tracemalloc.stop()


# ---- the calls: one step function per (face, endpoint) ----------------------

def numpy_steps(comp) -> dict[str, Callable[[], object]]:
    inputs = {"x": X, "a": A, "b": B}
    cot = np.array(1.0)
    return {
        "apply": lambda: comp.apply(inputs),
        "jvp": lambda: comp.jvp(inputs, ["x"], ["value"], {"x": TANGENT}),
        "vjp": lambda: comp.vjp(inputs, ["x"], ["value"], {"value": cot}),
        "jacobian": lambda: comp.jacobian(inputs, ["x"], ["value"]),
    }


def rosen_np(x: np.ndarray, a: float, b: float) -> np.ndarray:
    return np.sum(b * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)


def rosen_grad_np(x: np.ndarray, a: float, b: float) -> np.ndarray:
    g = np.zeros_like(x)
    valley = x[1:] - x[:-1] ** 2
    g[:-1] += -4.0 * b * valley * x[:-1] - 2.0 * (a - x[:-1])
    g[1:] += 2.0 * b * valley
    return g


def numpy_baseline_steps() -> dict[str, Callable[[], object]]:
    """The same four endpoints as pure NumPy (the gradient by hand)."""
    return {
        "apply": lambda: {"value": rosen_np(X, A, B)},
        "jvp": lambda: {"value": rosen_grad_np(X, A, B) @ TANGENT},
        "vjp": lambda: {"x": rosen_grad_np(X, A, B) * np.array(1.0)},
        "jacobian": lambda: {"value": {"x": rosen_grad_np(X, A, B)}},
    }


def jax_steps(f: Callable, jit: bool) -> dict[str, Callable[[], object]]:
    """The four endpoints of a scalar function of x through JAX's own
    transformations (jvp, vjp, jacrev), jitted or eager; each result is
    waited for, so that no call is still queued when memory is read."""
    import jax
    import jax.numpy as jnp

    x, t, ct = jnp.asarray(X), jnp.asarray(TANGENT), jnp.asarray(1.0)
    fns = {
        "apply": (f, (x,)),
        "jvp": (lambda x, t: jax.jvp(f, (x,), (t,)), (x, t)),
        "vjp": (lambda x, ct: jax.vjp(f, x)[1](ct), (x, ct)),
        "jacobian": (jax.jacrev(f), (x,)),
    }
    steps = {}
    for name, (fn, args) in fns.items():
        fn = jax.jit(fn) if jit else fn
        steps[name] = (lambda fn=fn, args=args: jax.block_until_ready(fn(*args)))
    return steps


def jax_component_steps(comp, jit: bool) -> dict[str, Callable[[], object]]:
    import tessera.jax

    return jax_steps(lambda x: tessera.jax.apply(comp, {"x": x, "a": A, "b": B})["value"], jit)


def jax_baseline_steps(jit: bool) -> dict[str, Callable[[], object]]:
    import jax.numpy as jnp

    def rosen(x):
        return jnp.sum(B * (x[1:] - x[:-1] ** 2) ** 2 + (A - x[:-1]) ** 2)
    return jax_steps(rosen, jit)


def torch_steps(f: Callable) -> dict[str, Callable[[], object]]:
    """The four endpoints through PyTorch: the forward call, forward-mode
    (torch.func.jvp), backward (autograd.grad) and the Jacobian
    (torch.autograd.functional.jacobian)."""
    import torch

    x = torch.tensor(X)
    xg = torch.tensor(X, requires_grad=True)
    t = torch.tensor(TANGENT)

    def vjp():
        return torch.autograd.grad(f(xg), xg)
    return {
        "apply": lambda: f(x),
        "jvp": lambda: torch.func.jvp(f, (x,), (t,)),
        "vjp": vjp,
        "jacobian": lambda: torch.autograd.functional.jacobian(f, x),
    }


def torch_component_steps(comp) -> dict[str, Callable[[], object]]:
    import tessera.torch

    return torch_steps(lambda x: tessera.torch.apply(comp, {"x": x, "a": A, "b": B})["value"])


def torch_baseline_steps() -> dict[str, Callable[[], object]]:
    import torch

    def rosen(x):
        return torch.sum(B * (x[1:] - x[:-1] ** 2) ** 2 + (A - x[:-1]) ** 2)
    return torch_steps(rosen)


def component_steps(face: str, comp) -> dict[str, Callable[[], object]]:
    if face == "numpy":
        return numpy_steps(comp)
    if face in ("jax-jit", "jax-eager"):
        return jax_component_steps(comp, face == "jax-jit")
    if face == "torch":
        return torch_component_steps(comp)
    raise ValueError(face)


def baseline_steps(face: str) -> dict[str, Callable[[], object]]:
    if face == "numpy":
        return numpy_baseline_steps()
    if face in ("jax-jit", "jax-eager"):
        return jax_baseline_steps(face == "jax-jit")
    if face == "torch":
        return torch_baseline_steps()
    raise ValueError(face)


# ---- open/close cycles -------------------------------------------------------

@dataclasses.dataclass
class CycleGrowth:
    cycles: int
    before: ProcState
    after: ProcState
    traced: int


def measure_cycles(path: Path, mode: str, cycles: int, warmup: int) -> CycleGrowth:
    """load, one apply, close: warmup times, then cycles times; this
    process's RSS, fds, threads and traced memory before and after."""
    import tessera

    inputs = {"x": X, "a": A, "b": B}

    def cycle():
        with tessera.load(path, mode) as comp:
            comp.apply(inputs)
    started = tracemalloc.is_tracing()
    if not started:
        tracemalloc.start()
    try:
        for _ in range(warmup):
            cycle()
        gc.collect()
        before, traced0 = proc_state(), tracemalloc.get_traced_memory()[0]
        for _ in range(cycles):
            cycle()
        gc.collect()
        return CycleGrowth(cycles, before, proc_state(),
                           tracemalloc.get_traced_memory()[0] - traced0)
    finally:
        if not started:
            tracemalloc.stop()


# ---- tessera serve -------------------------------------------------------------

def serve_bodies() -> dict[str, bytes]:
    """One request body per route, plain JSON arrays."""
    inputs = {"x": X.tolist(), "a": A, "b": B}
    return {
        "/apply": {"inputs": inputs},
        "/jacobian_vector_product": {"inputs": inputs, "jvp_inputs": ["x"],
                                     "jvp_outputs": ["value"],
                                     "tangent_vector": {"x": TANGENT.tolist()}},
        "/vector_jacobian_product": {"inputs": inputs, "vjp_inputs": ["x"],
                                     "vjp_outputs": ["value"],
                                     "cotangent_vector": {"value": 1.0}},
        "/jacobian": {"inputs": inputs, "jac_inputs": ["x"], "jac_outputs": ["value"]},
    }


def post_loop(conn: http.client.HTTPConnection, route: str, body: bytes,
              requests: int) -> None:
    """requests POSTs on one kept-alive connection; any status but 200 raises."""
    headers = {"Content-Type": "application/json"}
    for _ in range(requests):
        conn.request("POST", route, body=body, headers=headers)
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{route}: {resp.status} {data[:300]!r}")


def post_ab(port: int, route: str, body: bytes, requests: int, clients: int = 4) -> None:
    """The same from ApacheBench (ab -k), a C client fast enough that the
    server, not the client, sets the pace."""
    with tempfile.TemporaryDirectory(prefix="soak-ab-") as d:
        (Path(d) / "body").write_bytes(body)
        out = subprocess.run(["ab", "-k", "-q", "-c", str(clients), "-n", str(requests),
                              "-s", "60", "-p", str(Path(d) / "body"), "-T", "application/json",
                              f"http://127.0.0.1:{port}{route}"],
                             capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"ab failed: {out.stderr.strip() or out.stdout[-300:]}")
    done = int(out.stdout.split("Complete requests:")[1].split()[0])
    if done != requests or "Non-2xx responses:" in out.stdout or \
            int(out.stdout.split("Failed requests:")[1].split()[0]) != 0:
        raise RuntimeError(f"ab: {route}: not every request succeeded:\n{out.stdout[-800:]}")


@dataclasses.dataclass
class ServeGrowth:
    route: str
    requests: int
    before: ProcState
    after: ProcState


def measure_serve(pid: int, port: int, requests: int, warmup: int,
                  use_ab: bool = False) -> list[ServeGrowth]:
    """Each route warmed up, then requests of it; the server's state before
    and after each route's measured requests. With http.client, one
    connection carries every request and stays open while the server is
    read, so that its fds count the same sockets each time; ab opens its
    own connections, closed by the time it returns (the server may not
    have closed its ends yet: compare fds loosely there)."""
    rows = []
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        for route, body in serve_bodies().items():
            raw = json.dumps(body).encode()
            if use_ab:
                post_ab(port, route, raw, warmup)
            else:
                post_loop(conn, route, raw, warmup)
            before = proc_state(pid)
            if use_ab:
                post_ab(port, route, raw, requests)
            else:
                post_loop(conn, route, raw, requests)
            rows.append(ServeGrowth(route, requests, before, proc_state(pid)))
    finally:
        conn.close()
    return rows


@contextlib.contextmanager
def serving_rosenbrock(tessera_bin: Path, plugin: Path, *extra: str) -> Iterator:
    """`tessera serve` of the plugin on a free port, stopped at the end."""
    from servers import serving

    with serving([str(tessera_bin), "serve", "--quiet", "--port", "{port}", *extra,
                  str(plugin)]) as server:
        yield server

