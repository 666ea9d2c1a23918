# SPDX-License-Identifier: MIT
"""Results kept alive over a long run: a held result costs about its own
bytes, never a call object, and a call costs the same however many earlier
results are alive. Results of at most the copy limit (4 KiB) are copies
that own their bytes; larger ones view a buffer that was the call's and is
handed over to them when the call runs again while they live."""

from __future__ import annotations

import gc
import resource
import tracemalloc

import numpy as np
import pytest

from tessera import _ext
from conftest import own_segments

COPY_LIMIT = 4096
SMALL = COPY_LIMIT // 8      # float64 elements: a copy
LARGE = SMALL + 1            # a view


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def counts() -> dict[str, int]:
    return _ext._debug_counts()


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()


def test_the_copy_limit_is_4_kib():
    assert counts()["copy_limit"] == COPY_LIMIT


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_small_results_are_copies_and_large_ones_views(load, mode):
    comp = load("noop", mode)
    small = comp.apply({"x": np.arange(float(SMALL))})["y"]
    large = comp.apply({"x": np.arange(float(LARGE))})["y"]
    assert small.nbytes == COPY_LIMIT and small.flags.owndata and small.base is None
    assert large.nbytes > COPY_LIMIT and not large.flags.owndata
    assert type(large.base).__name__ == "ResultBuffer"
    assert address(large) % 64 == 0
    for a in (small, large):
        assert a.flags.c_contiguous and a.flags.writeable
    np.testing.assert_array_equal(small, np.arange(float(SMALL)))
    np.testing.assert_array_equal(large, np.arange(float(LARGE)))
    # a jacobian block in C order (a copy made with the wrong flags would be F order)
    jac = comp.jacobian({"x": np.arange(3.0)}, ["x"], ["y"])["y"]["x"]
    assert jac.flags.c_contiguous
    np.testing.assert_array_equal(jac, np.eye(3))


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_a_100k_step_trace_of_scalars_costs_under_200_bytes_a_step(load, mode):
    """trace.append(c.apply(d)["value"]) for 100k steps: tracemalloc sees
    under 200 bytes per held value (the 0-d array and the list's slot); the
    process's memory (which tracemalloc does not see: call objects, result
    buffers, the arena) grows by well under 1 KiB per value; and the
    number of call objects alive does not grow."""
    comp = load("rosenbrock", mode)
    d = {"x": np.array([0.5, 1.5]), "a": np.array(1.0), "b": np.array(100.0)}
    first = comp.apply(d)["value"]
    want = float(first)
    del first
    gc.collect()
    before = counts()
    steps = 100_000
    rss0 = rss_bytes()
    tracemalloc.start()
    try:
        t0, _ = tracemalloc.get_traced_memory()
        trace = []
        for _ in range(steps):
            trace.append(comp.apply(d)["value"])
        t1, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    rss1 = rss_bytes()
    after = counts()
    per_step = (t1 - t0) / steps
    assert per_step < 200, f"{per_step:.0f} traced bytes per held scalar"
    assert (rss1 - rss0) / steps < 1024, f"{(rss1 - rss0) / steps:.0f} bytes of RSS per scalar"
    assert after == before, "a held copy must not keep a call object or a result buffer"
    assert len(trace) == steps and all(float(v) == want for v in trace[::997])


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_held_large_results_cost_no_call_object(load, mode):
    comp = load("noop", mode)
    x = np.arange(float(LARGE))
    comp.apply({"x": x})
    base = counts()
    kept = [comp.apply({"x": x + k})["y"] for k in range(500)]
    now = counts()
    assert now["calls"] == base["calls"]
    # every result but the last was handed over; the last is still the call's
    assert now["results_owned"] - base["results_owned"] == 499
    assert now["results_in_call"] - base["results_in_call"] == 1
    assert len({address(a) for a in kept}) == 500
    for k in (0, 1, 250, 499):
        np.testing.assert_array_equal(kept[k], x + k)
    del kept
    gc.collect()
    assert counts() == base


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("n", [SMALL, LARGE])
def test_held_results_of_every_endpoint_are_never_overwritten(load, mode, n):
    comp = load("noop", mode)
    rng = np.random.default_rng(1)
    held = []
    for k in range(30):
        x = rng.normal(size=n)
        t = rng.normal(size=n)
        held.append((x, t, comp.apply({"x": x})["y"],
                     comp.jvp({"x": x}, ["x"], ["y"], {"x": t})["y"],
                     comp.vjp({"x": x}, ["x"], ["y"], {"y": t})["x"]))
    for x, t, y, jvp, vjp in held:
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(jvp, t)
        np.testing.assert_array_equal(vjp, t)
    # Jacobian blocks (n x n, views from 23 elements on) held across calls
    m = 40
    blocks = [comp.jacobian({"x": np.full(m, float(k))}, ["x"], ["y"])["y"]["x"]
              for k in range(5)]
    for b in blocks:
        np.testing.assert_array_equal(b, np.eye(m))


def test_threads_running_at_once_use_a_few_calls_not_one_per_result(load):
    import threading
    comp = load("noop", "worker", workers=2)
    base = counts()["calls"]
    kept: list[np.ndarray] = []
    errors: list[object] = []

    def work(k: int) -> None:
        try:
            for j in range(300):
                x = np.full(LARGE if j % 2 else 8, k * 1000.0 + j)
                y = comp.apply({"x": x})["y"]
                kept.append(y)
                if not np.array_equal(y, x):
                    errors.append((k, j))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    # one call object per run at once (4 threads), whatever the 1200 results held
    assert counts()["calls"] - base <= 4
    for y in kept:
        assert np.all(y == y.flat[0])


def test_an_owned_buffer_outlives_close_and_goes_with_its_last_view(load):
    comp = load("noop", "worker")
    x = np.arange(float(LARGE))
    first = comp.apply({"x": x})["y"]
    second = comp.apply({"x": 2 * x})["y"]     # first's buffer is handed over
    view = first[10:20]
    comp.close()
    np.testing.assert_array_equal(view, x[10:20])
    np.testing.assert_array_equal(second, 2 * x)
    del first, second
    gc.collect()
    assert own_segments()                       # view still holds its buffer
    del view
    gc.collect()
    assert not own_segments()


def test_a_result_torch_or_jax_holds_is_never_overwritten(load):
    import jax.numpy as jnp
    import torch
    comp = load("noop")
    x = np.arange(float(LARGE))
    t = torch.from_dlpack(comp.apply({"x": x})["y"])
    j = jnp.from_dlpack(comp.apply({"x": x + 1})["y"])
    gc.collect()
    for k in range(5):
        comp.apply({"x": x - k})
    np.testing.assert_array_equal(t.numpy(), x)
    np.testing.assert_array_equal(np.asarray(j), x + 1)


def test_the_copy_limit_can_be_changed_for_measurements(load):
    comp = load("noop")
    was = _ext._set_copy_limit(0)
    try:
        y = comp.apply({"x": np.arange(2.0)})["y"]
        assert type(y.base).__name__ == "ResultBuffer"
    finally:
        assert _ext._set_copy_limit(was) == 0
    with pytest.raises(ValueError):
        _ext._set_copy_limit(-1)
