# SPDX-License-Identifier: MIT
"""The Python face under a short soak: repeated calls (apply, jvp, vjp,
jacobian through NumPy, JAX jitted and eager, PyTorch; in-process and in a
worker), open/close cycles in each mode and `tessera serve` under
keep-alive requests leave memory, fds and threads where they were after a
warm-up. bench/soak_python.py runs the same loops (tests/support/soak.py)
with long counts and reports the figures.

Why the bounds hold on a busy machine and still catch a leak. Each window
starts after a warm-up (caches, jit compilation, pools, malloc's arenas
filled) and both ends are read after gc.collect(), so nothing here depends
on timing. Measured over these windows the growth is a few pages of RSS and
a few KB traced, whatever the count (it does not scale with the calls, the
sign of a cache settling, not of a leak). The bounds, 1 MiB of RSS and
128 KiB traced per window, are several times that noise and fixed, not per
call: a leak of L bytes per call shows as L x calls, so a window of 10^4
calls (NumPy and jitted JAX in-process) fails at 100 bytes per call in RSS
(a call object, a result buffer, a schema copy lost in C) and at 13 bytes
per call traced (any Python object kept alive); worker mode and the slow
faces run fewer calls and catch larger leaks only (the count of each row,
in COUNTS, says its threshold: the bound divided by the calls).
"""

from __future__ import annotations

import gc

import pytest
import soak

import tessera
from conftest import BUILD, plugin_path

RSS_BOUND = 1 << 20      # bytes of RSS growth per window
TRACED_BOUND = 128 << 10  # bytes of tracemalloc growth per window
# The server's RSS (about 6 MiB, moving by at most 64 KiB over a route's
# requests as measured): 5*10^3 requests, 1250 per route (apply, jvp, vjp,
# jacobian); a leak of 420 bytes per request fails it.
SERVE_RSS_BOUND = 512 << 10
TESSERA = BUILD / "bin" / "tessera"

# (calls, warm-up) per face and endpoint in-process, sized to about a
# second each on a busy 2-core machine with tracemalloc on; worker mode
# runs half as many (each call is a round trip to the worker). JAX eager
# re-traces every call (milliseconds for vjp and jacobian), and
# torch.func.jvp costs 5 to 25 ms.
COUNTS = {
    "numpy": {e: (10_000, 1_000) for e in soak.ENDPOINTS},
    "jax-jit": {e: (10_000, 1_000) for e in soak.ENDPOINTS},
    "torch": {"apply": (1_000, 200), "jvp": (60, 30), "vjp": (1_000, 200),
              "jacobian": (500, 100)},
    "jax-eager": {"apply": (500, 200), "jvp": (300, 100), "vjp": (100, 50),
                  "jacobian": (50, 30)},
}
WORKER_SHARE = 2


@pytest.fixture(scope="module", params=soak.CALL_MODES)
def rosen(request):
    comp = tessera.load(plugin_path("rosenbrock"), request.param)
    yield comp
    comp.close()
    gc.collect()


def _face_ready(face: str) -> None:
    if face == "torch":
        pytest.importorskip("torch")


@pytest.mark.parametrize("endpoint", soak.ENDPOINTS)
@pytest.mark.parametrize("face", soak.FACES)
def test_repeated_calls_keep_rss_and_traced_memory_bounded(rosen, face, endpoint):
    _face_ready(face)
    calls, warmup = COUNTS[face][endpoint]
    if rosen.mode == "worker":
        calls, warmup = calls // WORKER_SHARE, warmup // WORKER_SHARE
    step = soak.component_steps(face, rosen)[endpoint]
    grown = soak.measure_calls(step, calls, warmup)
    where = f"{face} {endpoint} ({rosen.mode}), {calls} calls after {warmup}"
    # Both checks reported together: a leak in C shows in RSS only, one of
    # Python objects in both.
    over = [f"{what} grew by {n} bytes (bound {bound})"
            for what, n, bound in (("RSS", grown.rss, RSS_BOUND),
                                   ("traced memory", grown.traced, TRACED_BOUND)) if n > bound]
    assert not over, f"{where}: {'; '.join(over)}"
    # The extension's own count of call objects and results alive: exact.
    assert not any(grown.objects.values()), f"{where}: live objects changed by {grown.objects}"


@pytest.mark.parametrize("mode", soak.CYCLE_MODES)
def test_open_close_cycles_leave_memory_fds_and_threads_as_they_were(mode):
    grown = soak.measure_cycles(plugin_path("rosenbrock"), mode, cycles=300, warmup=30)
    where = f"300 load/apply/close cycles ({mode})"
    assert grown.after.fds == grown.before.fds, \
        f"{where}: fds {grown.before.fds} -> {grown.after.fds}"
    assert grown.after.threads == grown.before.threads, \
        f"{where}: threads {grown.before.threads} -> {grown.after.threads}"
    assert grown.after.rss - grown.before.rss <= RSS_BOUND, \
        f"{where}: RSS grew by {grown.after.rss - grown.before.rss} bytes"
    assert grown.traced <= TRACED_BOUND, f"{where}: traced memory grew by {grown.traced} bytes"


def test_serve_under_keep_alive_requests_keeps_its_rss_fds_and_threads():
    with soak.serving_rosenbrock(TESSERA, plugin_path("rosenbrock")) as server:
        rows = soak.measure_serve(server.proc.pid, server.port, requests=1_250, warmup=250)
    for row in rows:
        where = f"tessera serve, 1250 requests of {row.route}"
        assert row.after.rss - row.before.rss <= SERVE_RSS_BOUND, \
            f"{where}: server RSS grew by {row.after.rss - row.before.rss} bytes"
        assert row.after.fds == row.before.fds, f"{where}: fds {row.before.fds} -> {row.after.fds}"
        assert row.after.threads == row.before.threads, \
            f"{where}: threads {row.before.threads} -> {row.after.threads}"
