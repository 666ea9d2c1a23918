# SPDX-License-Identifier: MIT
"""tessera.dask when things go wrong, on a LocalCluster of two worker
processes: a component that crashes in worker mode is retried (Dask's
retries=) and then reported with its own error; one that crashes
in-process takes its Dask worker down and is reported naming the
component once Dask gives up; a Dask worker killed in the middle of a
sweep loses none of the results already gathered; a worker that retires
closes its component (the plugin's fini runs)."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import tessera  # noqa: E402
import tessera.dask  # noqa: E402
from conftest import plugin_path  # noqa: E402
from reference import CASES  # noqa: E402


@pytest.fixture(scope="module")
def cluster() -> Iterator[distributed.LocalCluster]:
    # One death of a Dask worker while it runs a task is forgiven (the task
    # runs again elsewhere), the second is not: the in-process crash below
    # then ends after two deaths rather than Dask's default four.
    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as c:
            yield c


@pytest.fixture
def client(cluster) -> Iterator[distributed.Client]:
    with distributed.Client(cluster) as c:
        c.wait_for_workers(2, timeout=60)
        yield c


def one_worker(client) -> str:
    return sorted(client.scheduler_info()["workers"])[0]


def test_a_crashed_component_is_started_again_and_the_retry_succeeds(client):
    # The plugin's worker process dies at its second call: the second task
    # fails with the component's WorkerError, Dask runs it again, and the
    # component, restarted (restart='auto'), answers.
    crash = tessera.dask.load(client, plugin_path("crash"), "worker", retries=1,
                              config={"fault": "segv", "when": "call:2"}, log_level="off")
    where = {"workers": [one_worker(client)]}
    x = np.arange(3.0)
    first = crash.apply([{"x": x}], **where)
    second = crash.apply([{"x": x + 1}], **where)
    np.testing.assert_array_equal(first[0]["y"], x)
    np.testing.assert_array_equal(second[0]["y"], x + 1)
    state = crash.worker_states()[where["workers"][0]]
    assert state["opens"] == 1                       # restarted, not opened again
    assert state["stats"]["worker_deaths"] == 1 and state["stats"]["worker_starts"] == 2, state
    crash.close()


def test_a_component_that_always_crashes_is_reported_with_its_error_after_the_retries(client):
    crash = tessera.dask.load(client, plugin_path("crash"), "worker", retries=2,
                              config={"fault": "segv"}, log_level="off")
    with pytest.raises(tessera.WorkerError) as info:
        crash.apply([{"x": np.ones(2)}])
    text = str(info.value)
    assert "component 'crash', endpoint 'apply'" in text and "signal 11" in text, text
    assert "(item 0, on Dask worker tcp://" in text, text
    deaths = sum(s["stats"]["worker_deaths"] for s in crash.worker_states().values()
                 if s and s["stats"])
    assert deaths == 3                               # the first run and two retries
    crash.close()


def test_an_in_process_crash_is_reported_naming_the_component_once_dask_gives_up(client):
    crash = tessera.dask.load(client, plugin_path("crash"), "inproc", config={"fault": "segv"})
    with pytest.raises(tessera.WorkerError) as info:
        crash.apply([{"x": np.ones(2)}])
    text = str(info.value)
    assert "component 'crash', endpoint 'apply': item 0 took down every Dask worker" in text
    assert "mode='worker'" in text
    crash.close()
    client.wait_for_workers(2, timeout=60)   # the nannies start the dead workers again


def test_a_worker_killed_mid_sweep_loses_no_gathered_result(client, load):
    heat = tessera.dask.load(client, plugin_path("heat"))
    serial = load("heat")
    items = [{**CASES["heat"].point(seed), "steps": np.int64(2_000_000)} for seed in range(24)]
    pids = client.run(os.getpid)
    futures = heat.map("apply", items)
    kept: dict[int, dict] = {}
    for index, result in heat.as_completed(futures):
        kept[index] = result
        if len(kept) == 4:
            killed = pids[one_worker(client)]
            os.kill(killed, signal.SIGKILL)
            early = {i: r["temperature"].copy() for i, r in kept.items()}
    assert sorted(kept) == list(range(24))
    for i, x in enumerate(items):
        np.testing.assert_array_equal(kept[i]["temperature"], serial.apply(x)["temperature"])
    for i, t in early.items():                       # what was gathered before is untouched
        np.testing.assert_array_equal(kept[i]["temperature"], t)
    heat.close()
    client.wait_for_workers(2, timeout=60)
    assert killed not in client.run(os.getpid).values()     # that worker process was replaced


def test_a_retiring_worker_closes_its_component(cluster, client, tmp_path):
    marker = tmp_path / "marker"
    stateful = tessera.dask.load(client, plugin_path("stateful"), log_level="off",
                                 config={"marker": str(marker)})
    stateful.apply([{"x": np.ones(2)}] * 40)
    # Once the client has let go of the results, retiring a worker moves or
    # recomputes nothing (a recomputation would add calls to the other).
    deadline = time.monotonic() + 30
    while client.run_on_scheduler(_task_count) and time.monotonic() < deadline:
        time.sleep(0.05)
    opened = {w: s["stats"]["calls"] for w, s in stateful.worker_states().items()
              if s and s["open"]}
    assert len(opened) == 2 and marker.read_text() == "init\n" * 2   # one init per worker
    # Scaling down retires a worker, as an adaptive cluster does.
    cluster.scale(1)
    deadline = time.monotonic() + 30
    while (len(client.scheduler_info()["workers"]) > 1 or "fini" not in marker.read_text()) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    (leaving,) = set(opened) - set(client.scheduler_info()["workers"])
    assert marker.read_text().splitlines() == ["init", "init", f"fini calls={opened[leaving]}"]
    stateful.close()                                 # and the other closes with it
    finis = [int(line.split("=")[1]) for line in marker.read_text().splitlines()
             if line.startswith("fini")]
    assert sorted(finis) == sorted(opened.values()) and sum(finis) == 40, marker.read_text()
    cluster.scale(2)
    client.wait_for_workers(2, timeout=60)


def _task_count(dask_scheduler) -> int:
    return len(dask_scheduler.tasks)
