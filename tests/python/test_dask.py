# SPDX-License-Identifier: MIT
"""tessera.dask on a LocalCluster of two worker processes: every endpoint
mapped one item per task and batched in chunks gives what serial calls in
this process give; each worker opens a component once however many tasks
it runs, in every mode and for Python components; errors name the
component, the endpoint, the field, the item and the worker; jax.vmap of a
cluster component sends its batch to the cluster."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

import tessera  # noqa: E402
import tessera.dask  # noqa: E402
import tessera.jax  # noqa: E402
from conftest import MATRIX, ROOT, plugin_path  # noqa: E402
from reference import CASES  # noqa: E402

AFFINE = ROOT / "tests" / "pycomponents" / "affine"


@pytest.fixture(scope="module")
def client() -> Iterator[distributed.Client]:
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=2, processes=True,
                                       dashboard_address=":0")
    with cluster, distributed.Client(cluster) as c:
        yield c


@pytest.fixture
def cluster_load(client) -> Iterator:
    """tessera.dask.load on the module's cluster, closed after the test."""
    opened = []

    def _load(path, mode="inproc", **kwargs) -> tessera.dask.ClusterComponent:
        cc = tessera.dask.load(client, path, mode, **kwargs)
        opened.append(cc)
        return cc

    yield _load
    for cc in opened:
        cc.close()


def heat_items(count: int) -> list[dict]:
    return [CASES["heat"].point(seed) for seed in range(count)]


def assert_same(got, want) -> None:
    """Equal to the bit: the same plugin on the same numbers, whichever
    process ran it."""
    if isinstance(want, dict):
        assert set(got) == set(want)
        for k in want:
            assert_same(got[k], want[k])
    elif isinstance(want, list):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same(g, w)
    else:
        np.testing.assert_array_equal(got, want)


# ---- one task per item ---------------------------------------------------------

def test_every_endpoint_mapped_over_the_cluster_matches_serial_calls(cluster_load, load):
    heat = cluster_load(plugin_path("heat"))
    serial = load("heat")
    items = heat_items(12)
    wrt, outs = ["conductivity", "source"], ["temperature", "misfit"]
    tangents = [{"conductivity": np.full(6, 0.1 * i), "source": np.ones(6)} for i in range(12)]
    cotangent = {"temperature": np.ones(6), "misfit": np.array(2.0)}

    assert_same(heat.apply(items), [serial.apply(x) for x in items])
    assert_same(heat.jvp(items, wrt, outs, tangents),
                [serial.jvp(x, wrt, outs, t) for x, t in zip(items, tangents)])
    assert_same(heat.vjp(items, wrt, outs, cotangent),
                [serial.vjp(x, wrt, outs, cotangent) for x in items])
    assert_same(heat.jacobian(items, wrt, outs), [serial.jacobian(x, wrt, outs) for x in items])


def test_map_returns_futures_and_as_completed_gives_each_index_once(cluster_load, load):
    heat = cluster_load(plugin_path("heat"))
    serial = load("heat")
    items = heat_items(10)
    futures = heat.map("apply", items)
    assert all(isinstance(f, distributed.Future) for f in futures)
    seen = dict(heat.as_completed(futures))
    assert sorted(seen) == list(range(10))
    assert_same([seen[i] for i in range(10)], [serial.apply(x) for x in items])


# ---- a batch axis in chunks ------------------------------------------------------

def batched_heat(count: int) -> tuple[dict, list[dict]]:
    """Inputs with a leading batch axis (observations, dt and steps shared)
    and the same items one by one."""
    items = heat_items(count)
    shared = {"observations": items[0]["observations"], "dt": np.float64(0.02),
              "steps": np.int64(5)}
    batched = {k: np.stack([x[k] for x in items])
               for k in ("conductivity", "source", "initial_temperature")}
    return {**batched, **shared}, [{**x, **shared} for x in items]


@pytest.mark.parametrize("chunks", [None, 1, 4, 50])
def test_a_batch_in_chunks_matches_serial_calls_for_every_endpoint(cluster_load, load, chunks):
    heat = cluster_load(plugin_path("heat"))
    serial = load("heat")
    inputs, items = batched_heat(30)
    wrt, outs = ("conductivity",), ("temperature", "misfit")
    tangent = {"conductivity": np.ones(6)}                         # the same for every item
    cotangent = {"temperature": np.ones((30, 6)), "misfit": np.arange(30.0)}   # one per item

    def stacked(rows):
        return {k: np.stack([r[k] for r in rows]) for k in rows[0]}

    assert_same(heat.batch("apply", inputs, chunks=chunks),
                stacked([serial.apply(x) for x in items]))
    assert_same(heat.batch("jvp", inputs, wrt, outs, tangent, chunks=chunks),
                stacked([serial.jvp(x, wrt, outs, tangent) for x in items]))
    assert_same(heat.batch("vjp", inputs, wrt, outs, cotangent, chunks=chunks),
                stacked([serial.vjp(x, wrt, outs, {"temperature": cotangent["temperature"][i],
                                                   "misfit": cotangent["misfit"][i]})
                         for i, x in enumerate(items)]))
    jac = heat.batch("jacobian", inputs, wrt, outs, chunks=chunks)
    want = [serial.jacobian(x, wrt, outs) for x in items]
    assert_same(jac, {o: {"conductivity": np.stack([w[o]["conductivity"] for w in want])}
                      for o in outs})


def test_a_dask_array_batch_is_lazy_and_reduces_on_the_cluster(cluster_load, load):
    heat = cluster_load(plugin_path("heat"))
    serial = load("heat")
    inputs, items = batched_heat(40)
    lazy = {**inputs, "source": da.from_array(inputs["source"], chunks=(7, 6))}
    grads = heat.batch("vjp", lazy, ["conductivity"], ["misfit"], {"misfit": 1.0})
    assert isinstance(grads["conductivity"], da.Array)
    assert grads["conductivity"].numblocks[0] == 6      # the dask array's own chunks
    total = grads["conductivity"].sum(axis=0).compute()
    want = sum(serial.vjp(x, ["conductivity"], ["misfit"], {"misfit": 1.0})["conductivity"]
               for x in items)
    np.testing.assert_allclose(total, want, rtol=1e-13)
    temps = heat.batch("apply", lazy)["temperature"].compute()
    assert_same(temps, np.stack([serial.apply(x)["temperature"] for x in items]))


def test_an_output_sized_by_the_component_is_batched_one_item_at_a_time(cluster_load, load):
    linear = cluster_load(plugin_path("linear"), config={"matrix": str(MATRIX)})
    serial = load("linear")
    xs = np.random.default_rng(1).normal(size=(9, 4))
    got = linear.batch("apply", {"x": xs}, chunks=3)["y"]
    assert_same(got, np.stack([serial.apply({"x": x})["y"] for x in xs]))


# ---- opened once per worker ---------------------------------------------------------

OPEN_CASES = {
    "plugin-inproc": (lambda: plugin_path("noop"), "inproc", "x"),
    "plugin-isolated": (lambda: plugin_path("noop"), "isolated", "x"),
    "plugin-worker": (lambda: plugin_path("noop"), "worker", "x"),
    "python-inproc": (lambda: AFFINE, "inproc", "affine"),
    "python-worker": (lambda: AFFINE, "worker", "affine"),
}


@pytest.mark.parametrize("case", list(OPEN_CASES))
def test_each_worker_opens_the_component_once_for_all_its_tasks(cluster_load, client, case):
    path, mode, kind = OPEN_CASES[case]
    cc = cluster_load(path(), mode)
    rng = np.random.default_rng(0)
    items = ([{"x": rng.normal(size=3)} for _ in range(200)] if kind == "x" else
             [{"x": rng.normal(size=3), "a": np.float64(2.0)} for _ in range(200)])
    first = cc.apply(items)
    second = cc.apply(items)
    assert_same(second, first)
    states = cc.worker_states()
    ran = {w: s for w, s in states.items() if s is not None and s["opens"]}
    assert ran, states
    assert all(s["opens"] == 1 for s in ran.values()), states
    assert sum(s["stats"]["calls"] for s in ran.values()) == 400, states
    if mode == "worker":   # and each worker's component started its worker process once
        assert all(s["stats"]["worker_starts"] == 1 for s in ran.values()), states


def test_close_closes_the_component_on_every_worker(client):
    cc = tessera.dask.load(client, plugin_path("noop"))
    cc.apply([{"x": np.ones(2)}] * 20)
    assert any(s and s["open"] for s in client.run(_state, name=cc.spec.plugin_name).values())
    cc.close()
    assert all(s is None for s in client.run(_state, name=cc.spec.plugin_name).values())
    with pytest.raises(tessera.ArgumentError, match="closed"):
        cc.map("apply", [{"x": np.ones(2)}])


def test_two_cluster_components_of_one_path_are_closed_each_on_its_own(client):
    first = tessera.dask.load(client, plugin_path("noop"))
    second = tessera.dask.load(client, plugin_path("noop"))
    assert first.spec.plugin_name != second.spec.plugin_name
    first.apply([{"x": np.ones(2)}] * 4)
    first.close()
    np.testing.assert_array_equal(second.apply([{"x": np.ones(2)}])[0]["y"], np.ones(2))
    second.close()


def _state(dask_worker, name):
    plugin = dask_worker.plugins.get(name)
    return None if plugin is None else plugin.state()


# ---- errors ---------------------------------------------------------------------------

def test_a_failed_item_names_the_component_endpoint_field_item_and_worker(cluster_load):
    heat = cluster_load(plugin_path("heat"), retries=0)
    items = heat_items(6)
    items[3] = {**items[3], "source": np.ones(5)}
    with pytest.raises(tessera.ShapeError) as info:
        heat.apply(items)
    text = str(info.value)
    assert "component 'heat', endpoint 'apply'" in text and "'source'" in text, text
    assert "item 3" in text and "Dask worker tcp://" in text, text
    items[3] = {**items[3], "conductivity": -np.ones(6), "source": np.ones(6)}
    with pytest.raises(tessera.PluginError,
                       match=r"conductivity must be positive.* \(item 3, on Dask worker"):
        heat.gather(heat.map("apply", items))


def test_bad_arguments_are_refused_before_anything_runs(cluster_load):
    heat = cluster_load(plugin_path("heat"))
    inputs, _ = batched_heat(4)
    with pytest.raises(TypeError, match="sequence of input dicts"):
        heat.map("apply", inputs)
    with pytest.raises(TypeError, match="endpoint 'vjp': after the inputs it takes 3"):
        heat.map("vjp", [inputs], ["conductivity"])
    with pytest.raises(tessera.UnsupportedError, match="endpoint 'abstract_eval'"):
        heat.map("abstract_eval", [inputs])
    with pytest.raises(ValueError, match="cotangent_vector has 2 entries for 3 inputs"):
        heat.map("vjp", heat_items(3), ["source"], ["misfit"], [{"misfit": 1.0}] * 2)
    with pytest.raises(tessera.UnknownFieldError,
                       match="batch: input 'sources' is not one of the inputs"):
        heat.batch("apply", {**inputs, "sources": inputs["source"]})
    with pytest.raises(tessera.ShapeError, match="input 'source' has rank 3; its field has rank 1"):
        heat.batch("apply", {**inputs, "source": inputs["source"][None]})
    with pytest.raises(tessera.ShapeError, match="'source' has a batch axis of 3, 'conductivity' "
                                                 "one of 4"):
        heat.batch("apply", {**inputs, "source": inputs["source"][:3]})
    with pytest.raises(tessera.MissingError, match="batch: input 'steps' is missing"):
        heat.batch("apply", {k: v for k, v in inputs.items() if k != "steps"})
    with pytest.raises(tessera.ShapeError, match="no input has a leading batch axis"):
        heat.batch("apply", heat_items(1)[0])


def test_nested_fields_go_in_and_come_out_as_from_apply(cluster_load, load):
    """The contract plugin's mesh.nodes, mesh.cells and moved.nodes: inputs
    nested (or dotted), apply's outputs nested, as Component.apply gives."""
    nodes = np.arange(6.0).reshape(3, 2)
    item = {"mesh": {"nodes": nodes, "cells": np.array([[0, 1, 2]], np.int32)},
            "flags": np.ones(3, bool), "scale": np.float32(2.0), "z": np.ones(2, complex)}
    want = load("contract").apply(item)
    cc = cluster_load(plugin_path("contract"))
    got = cc.apply([item, {**item, "mesh": {"cells": item["mesh"]["cells"]},
                           "mesh.nodes": nodes}])
    for out in got:
        assert set(out) == set(want) and set(out["moved"]) == {"nodes"}
        assert_same(out["moved"]["nodes"], want["moved"]["nodes"])
    batch = cc.batch("apply", {**item, "mesh": {"nodes": np.stack([nodes, nodes + 1]),
                                                "cells": item["mesh"]["cells"]}}, chunks=2)
    assert set(batch) == set(want) and batch["moved"]["nodes"].shape == (2, 3, 2)
    assert_same(batch["moved"]["nodes"][0], want["moved"]["nodes"])
    assert cc.abstract_eval(item)["moved"]["nodes"] == ((3, 2), "float64")
    with pytest.raises(tessera.UnknownFieldError) as info:
        cc.batch("apply", {**item, "mesh": {**item["mesh"], "edges": nodes}})
    assert info.value.loc == ("inputs", "mesh", "edges")


# ---- jax.vmap on the cluster -----------------------------------------------------------

def test_jax_vmap_of_a_cluster_component_runs_its_batch_on_the_cluster(cluster_load, load):
    rosen = cluster_load(plugin_path("rosenbrock"))
    serial = load("rosenbrock")
    xs = jnp.asarray(np.random.default_rng(2).uniform(-1, 1, size=(16, 4)))

    def value(comp, x):
        return tessera.jax.apply(comp, {"x": x, "a": 1.0, "b": 100.0})["value"]

    def cluster_calls():
        return sum(s["stats"]["calls"] for s in rosen.worker_states().values()
                   if s and s["stats"])

    before = cluster_calls()
    np.testing.assert_array_equal(jax.vmap(lambda x: value(rosen, x))(xs),
                                  jax.vmap(lambda x: value(serial, x))(xs))
    assert cluster_calls() > before          # the batch ran on the workers
    grads = jax.jit(jax.vmap(jax.grad(lambda x: value(rosen, x))))(xs)
    np.testing.assert_array_equal(grads, jax.vmap(jax.grad(lambda x: value(serial, x)))(xs))
    # the gradient of a sum over the batch: the vjp is batched on the cluster too
    total = jax.grad(lambda xs: jnp.sum(jax.vmap(lambda x: value(rosen, x))(xs)))(xs)
    np.testing.assert_allclose(total, grads, rtol=1e-14)
    # one call, not batched, runs in the local copy
    np.testing.assert_array_equal(value(rosen, xs[0]), value(serial, xs[0]))


def test_a_failure_in_a_batch_on_the_cluster_raises_its_tessera_class(cluster_load):
    heat = cluster_load(plugin_path("heat"), retries=0)
    item = heat_items(1)[0]
    k = np.stack([item["conductivity"]] * 4)
    k[2, 0] = -1.0

    def temps(k):
        return tessera.jax.apply(heat, {**item, "conductivity": k})["temperature"]

    k = jnp.asarray(k)
    with pytest.raises(tessera.PluginError, match="conductivity must be positive.*items 2:3"):
        jax.vmap(temps)(k)
    with pytest.raises(tessera.PluginError, match="conductivity must be positive"):
        with tessera.jax.tessera_errors():
            jax.jit(jax.vmap(temps))(k).block_until_ready()
