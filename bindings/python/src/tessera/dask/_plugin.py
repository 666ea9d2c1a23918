# SPDX-License-Identifier: MIT
"""One open component per Dask worker process, kept between tasks.

A ``distributed.WorkerPlugin`` per spec: registered once on the client,
it reaches every worker, those that join later too. It opens the
component at the first task that needs it (not at registration, so a
worker that never runs one never pays for it) and closes it when the
worker retires or the plugin is unregistered (``ClusterComponent.close``).
Outside a Dask worker (dask's local schedulers) the process keeps one
copy per spec instead.
"""

from __future__ import annotations

import threading

from distributed import WorkerPlugin, get_worker

from .. import _errors
from .._component import Component
from ._spec import ComponentSpec


class ComponentPlugin(WorkerPlugin):
    """Opens ``spec`` lazily, once per worker, and closes it at teardown.
    ``opens`` counts the opens, to show that tasks do not reopen it."""

    # A spec the workers already hold (registered again, e.g. by a second
    # client of the same ClusterComponent) is kept open, not reopened.
    idempotent = True

    def __init__(self, spec: ComponentSpec) -> None:
        self.spec = spec
        self.opens = 0
        self._component: Component | None = None
        self._lock = threading.Lock()

    def __reduce__(self):
        # Only the spec travels to the scheduler and the workers.
        return (ComponentPlugin, (self.spec,))

    def component(self) -> Component:
        comp = self._component
        if comp is None:
            with self._lock:  # a worker's threads may all start at once
                if self._component is None:
                    self._component = self.spec.open()
                    self.opens += 1
                comp = self._component
        return comp

    def state(self) -> dict:
        comp = self._component
        return {"opens": self.opens, "open": comp is not None and not comp.closed,
                "stats": comp.stats() if comp is not None and not comp.closed else None}

    def teardown(self, worker) -> None:
        with self._lock:
            if self._component is not None:
                self._component.close()
                self._component = None


_process: dict[str, ComponentPlugin] = {}
_process_lock = threading.Lock()


def _current_worker():
    try:
        return get_worker()
    except ValueError:  # not in a Dask worker: a local scheduler's thread
        return None


def worker_component(spec: ComponentSpec) -> Component:
    """The component ``spec`` describes, open in this process: in a Dask
    worker, the one its plugin keeps (opened at the first call, once);
    elsewhere one per process. Call it inside a task to run many calls of
    the component there (an MCMC chain, an optimiser)."""
    worker = _current_worker()
    if worker is None:
        with _process_lock:
            plugin = _process.get(spec.key)
            if plugin is None:
                plugin = _process[spec.key] = ComponentPlugin(spec)
        return plugin.component()
    plugin = worker.plugins.get(spec.plugin_name)
    if plugin is None:
        raise _errors.ArgumentError(
            _errors.TSR_E_ARGUMENT,
            f"component '{spec.label}': not open on Dask worker {worker.address}: it was "
            "closed (ClusterComponent.close()), or the task was submitted to a cluster where "
            "tessera.dask.load(client, ...) was not called")
    return plugin.component()


def plugin_state(dask_worker, name: str) -> dict | None:
    """For ``client.run``: the plugin's counters on this worker."""
    plugin = dask_worker.plugins.get(name)
    return plugin.state() if isinstance(plugin, ComponentPlugin) else None
