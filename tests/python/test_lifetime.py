# SPDX-License-Identifier: MIT
"""How long returned arrays stay valid: a result is never overwritten by a
later call while it is referenced (whatever references it: an array, a
slice, a tensor, a JAX array, a reference cycle awaiting gc), it outlives
close(), and the memory goes when the last view does. Results of at most
4 KiB are copies that own their bytes; larger ones view a buffer that was
the call's (a loop that drops its results reuses it) and is handed over to
them when the call runs again while they are alive."""

from __future__ import annotations

import gc
import glob
import subprocess
import sys
import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera
import tessera.jax
from tessera import _ext
from conftest import ROOT, own_segments, plugin_path

SMALL, LARGE = 5, 1000   # float64 elements: 40 bytes (a copy), 8000 (a view)


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def values(held) -> np.ndarray:
    """A copy of what a tensor, a JAX array, a memoryview or an array holds."""
    if isinstance(held, torch.Tensor):
        return held.numpy().copy()
    return np.array(held)


@pytest.mark.parametrize("n", [SMALL, LARGE])
@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_a_result_survives_later_calls(load, mode, n):
    comp = load("noop", mode)
    first = comp.apply({"x": np.arange(float(n))})["y"]
    kept = first.copy()
    for k in range(1, 20):
        later = comp.apply({"x": np.full(n, float(k))})["y"]
        np.testing.assert_array_equal(later, np.full(n, float(k)))
        np.testing.assert_array_equal(first, kept)
    assert address(first) != address(later)


def test_a_loop_that_keeps_the_previous_result_uses_one_call(load):
    comp = load("noop")
    x = np.arange(float(LARGE))
    y = comp.apply({"x": x})["y"]
    before = _ext._debug_counts()
    for k in range(1, 50):
        prev = y
        y = comp.apply({"x": x + k})["y"]   # prev is alive during the call
        np.testing.assert_array_equal(prev, x + k - 1)
        np.testing.assert_array_equal(y, x + k)
        del prev                            # its buffer goes; one more is allocated next
    after = _ext._debug_counts()
    assert after["calls"] == before["calls"]
    assert after["results_owned"] <= before["results_owned"] + 1


def test_a_loop_that_drops_its_results_reuses_one_buffer(load):
    comp = load("noop")
    x = {"x": np.arange(float(LARGE))}
    a = address(comp.apply(x)["y"])
    before = _ext._debug_counts()
    assert {address(comp.apply(x)["y"]) for _ in range(20)} == {a}
    assert _ext._debug_counts() == before


@pytest.mark.parametrize("n", [8, LARGE])
@pytest.mark.parametrize("keeper", ["slice", "torch", "jax", "memoryview"])
def test_anything_that_views_a_result_keeps_it(load, keeper, n):
    comp = load("noop")
    y = comp.apply({"x": np.arange(float(n))})["y"]
    if keeper == "slice":
        held = y[2:5]
    elif keeper == "torch":
        held = torch.from_dlpack(y)
    elif keeper == "jax":
        held = jnp.from_dlpack(y)
    else:
        held = memoryview(y)
    want = values(held)
    del y
    gc.collect()
    for _ in range(5):
        comp.apply({"x": np.full(n, -1.0)})
    np.testing.assert_array_equal(values(held), want)


def test_a_result_in_a_reference_cycle_is_freed_by_gc(load):
    comp = load("noop")
    x = {"x": np.arange(float(LARGE))}
    cycle = [comp.apply(x)["y"]]
    cycle.append(cycle)
    held = address(cycle[0])
    del cycle
    y = comp.apply(x)["y"]
    assert address(y) != held          # the cycle still holds its buffer: handed over
    owned = _ext._debug_counts()["results_owned"]
    gc.collect()
    assert _ext._debug_counts()["results_owned"] == owned - 1
    np.testing.assert_array_equal(y, x["x"])


def test_views_outlive_close_and_the_memory_goes_with_the_last(load):
    comp = load("noop", "worker")
    y = comp.apply({"x": np.arange(1000.0)})["y"]
    arena_in = comp.empty(10)
    arena_in[:] = 7.0
    assert own_segments()
    comp.close()
    with pytest.raises(tessera.ArgumentError, match="closed"):
        comp.apply({"x": np.arange(3.0)})
    np.testing.assert_array_equal(y, np.arange(1000.0))     # still mapped
    np.testing.assert_array_equal(arena_in, 7.0)
    assert own_segments()
    del y
    gc.collect()
    assert own_segments()                                   # arena_in still views it
    del arena_in
    gc.collect()
    assert not own_segments()


def test_close_releases_at_once_when_nothing_views_the_memory(load):
    with load("noop", "worker") as comp:
        comp.apply({"x": np.arange(3.0)})
        assert own_segments()
    assert comp.closed and not own_segments()
    comp.close()   # twice is fine


def test_empty_gives_aligned_memory_that_crosses_by_reference(load):
    comp = load("noop", "worker")
    x = comp.empty((1000,), "float64")
    assert address(x) % 64 == 0 and x.shape == (1000,) and x.dtype == np.float64
    x[:] = np.arange(1000.0)
    before = comp.stats()
    y = comp.apply({"x": x})["y"]
    after = comp.stats()
    np.testing.assert_array_equal(y, np.arange(1000.0))
    assert after["bytes_by_ref"] - before["bytes_by_ref"] == x.nbytes
    assert after["bytes_copied"] == before["bytes_copied"]


def test_empty_refuses_what_no_field_can_hold(load):
    comp = load("noop")
    with pytest.raises(TypeError, match="not one of Tessera's"):
        comp.empty(3, "U4")
    with pytest.raises(ValueError, match="invalid shape"):
        comp.empty((-1,))


@pytest.mark.parametrize("n", [64, LARGE])
def test_threads_share_a_component_without_mixing_results(load, n):
    comp = load("noop", "worker", workers=2)
    errors = []

    def work(k: int) -> None:
        try:
            for j in range(200):
                x = np.full(n, k * 1000.0 + j)
                y = comp.apply({"x": x})["y"]
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


def test_a_compiled_program_fails_cleanly_after_close(load):
    comp = load("noop")
    f = jax.jit(lambda x: tessera.jax.apply(comp, {"x": x})["y"])
    x = jnp.arange(4.0)
    np.testing.assert_array_equal(f(x), x)
    comp.close()
    with pytest.raises(Exception, match="closed"):
        f(x).block_until_ready()


def test_close_while_other_threads_call_is_safe(load):
    comp = load("noop", "worker")
    results: list[str] = []
    go = threading.Event()

    def work() -> None:
        go.wait()
        for _ in range(500):
            try:
                y = comp.apply({"x": np.arange(256.0)})["y"]
                results.append("ok" if np.array_equal(y, np.arange(256.0)) else "wrong")
            except tessera.ArgumentError:
                results.append("closed")

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    go.set()
    comp.close()
    for t in threads:
        t.join()
    assert "wrong" not in results and "closed" in results


@pytest.mark.parametrize("first", [True, False], ids=["first_apply", "later_apply"])
def test_a_close_while_nested_inputs_are_read_refuses_the_run(first):
    # Nested inputs are read by Python code after apply's check that the
    # component is open: a close() there must end the call with the closed
    # component's error, not run it on a component that is gone.
    comp = tessera.load(ROOT / "tests" / "pycomponents" / "nested")
    inputs = {"p": {"v": np.arange(3.0), "w": np.ones(3, np.float32)}, "scale": 2.0}
    if not first:
        assert comp.apply(inputs)["n"] == 3

    class Closing(dict):
        def items(self):
            comp.close()
            return super().items()

    with pytest.raises(tessera.ArgumentError, match="the component is closed"):
        comp.apply(Closing(inputs))
    assert comp.closed


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_an_interpreter_that_exits_with_components_open_cleans_up(tmp_path, mode):
    """Open a component, keep results (a copy, one whose buffer was handed
    over, one still in its call's buffer) and a jitted program alive, exit
    without closing: the plugin's fini still runs, and in worker mode no
    shared memory is left."""
    marker = tmp_path / "marker"
    script = tmp_path / "leave_open.py"
    script.write_text(f"""
import os, numpy as np, jax, tessera, tessera.jax
jax.config.update("jax_enable_x64", True)
comp = tessera.load({str(plugin_path("stateful"))!r}, {mode!r},
                    config={{"marker": {str(marker)!r}}}, log_level="off")
kept = comp.apply({{"x": np.arange(3.0)}})["y"]
owned = comp.apply({{"x": np.arange(1000.0)}})["y"]
in_call = comp.apply({{"x": np.arange(1000.0)}})["y"]
f = jax.jit(lambda x: tessera.jax.apply(comp, {{"x": x}})["y"])
f(np.arange(3.0)).block_until_ready()
print(os.getpid(), flush=True)
""")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    pid = int(done.stdout.split()[-1])
    assert marker.read_text() == "init\nfini calls=4\n"
    assert glob.glob(f"/dev/shm/tessera-{pid}-*") == []
