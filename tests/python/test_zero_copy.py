# SPDX-License-Identifier: MIT
"""The zero-copy claims, checked by address from both sides: the plugin
reads NumPy, PyTorch and JAX inputs where they lie; results above the copy
limit (4 KiB; smaller ones are copied out) handed to PyTorch and JAX
through DLPack keep their address; worker-mode results above the limit and
component.empty() buffers lie in this process's shared-memory arena and
cross by reference."""

from __future__ import annotations

import os

import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera


def address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def in_own_shared_memory(a: np.ndarray) -> bool:
    """Whether the array's bytes lie in a mapping of one of this process's
    arena segments (memfds: "/memfd:tessera-arena (deleted)" in its maps)."""
    lo_a, hi_a = address(a), address(a) + a.nbytes
    stem = "/memfd:tessera-arena"
    with open("/proc/self/maps") as maps:
        for line in maps:
            span, *rest = line.split(maxsplit=5)
            lo, hi = (int(v, 16) for v in span.split("-"))
            if len(rest) == 5 and rest[-1].startswith(stem) and lo <= lo_a and hi_a <= hi:
                return True
    return False


@pytest.mark.parametrize("make", [
    lambda: np.arange(32.0),
    lambda: torch.arange(32, dtype=torch.float64),
    lambda: jnp.arange(32.0),
], ids=["numpy", "torch", "jax"])
def test_the_plugin_reads_inputs_where_they_lie(load, make):
    comp = load("address")
    x = make()
    pointer = (x.data_ptr() if isinstance(x, torch.Tensor) else
               x.unsafe_buffer_pointer() if isinstance(x, jnp.ndarray) else address(x))
    out = comp.apply({"x": x})
    assert int(out["address"]) == pointer
    assert float(out["first"]) == 0.0


def test_a_converted_input_is_read_from_its_copy(load):
    comp = load("address")
    x = np.arange(64.0)[::2]                      # strided: copied
    out = comp.apply({"x": x})
    assert int(out["address"]) != address(x)
    np.testing.assert_array_equal(out["y"], 2 * x)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_results_keep_their_address_through_dlpack(load, mode):
    # 8000 bytes: above the copy limit, a view of the call's buffer
    comp = load("noop", mode)
    y = comp.apply({"x": np.arange(1000.0)})["y"]
    assert address(y) % 64 == 0
    assert torch.from_dlpack(y).data_ptr() == address(y)
    assert jnp.from_dlpack(y).unsafe_buffer_pointer() == address(y)
    assert y.__dlpack_device__() == (1, 0)        # kDLCPU


def test_worker_results_and_empty_buffers_lie_in_the_arena(load):
    """Results above the copy limit (4 KiB) are views of the arena, where
    the worker wrote them; smaller ones are copied out of it."""
    comp = load("vectoradd", "worker")
    a = comp.empty(1000)
    b = comp.empty((1000,), np.float64)
    a[:] = np.arange(1000.0)
    b[:] = 1.0
    assert in_own_shared_memory(a) and in_own_shared_memory(b)
    before = comp.stats()
    out = comp.apply({"a": a, "b": b, "s": 2.0})["result"]
    after = comp.stats()
    assert in_own_shared_memory(out) and address(out) % 64 == 0
    np.testing.assert_array_equal(out, 2 * np.arange(1000.0) + 1)
    # a and b by reference; only the scalar s (ordinary memory) was copied
    assert after["bytes_by_ref"] - before["bytes_by_ref"] == a.nbytes + b.nbytes
    assert after["bytes_copied"] - before["bytes_copied"] == 8
    small = comp.apply({"a": a[:100], "b": b[:100], "s": 2.0})["result"]
    assert small.flags.owndata and not in_own_shared_memory(small)
    np.testing.assert_array_equal(small, 2 * np.arange(100.0) + 1)


def test_inproc_empty_buffers_are_aligned_and_plain(load):
    comp = load("address")
    x = comp.empty(7)
    x[:] = 3.0
    assert address(x) % 64 == 0 and not in_own_shared_memory(x)
    assert int(comp.apply({"x": x})["address"]) == address(x)
    with pytest.raises(tessera.ArgumentError, match="closed"):
        comp.close()
        comp.empty(3)
