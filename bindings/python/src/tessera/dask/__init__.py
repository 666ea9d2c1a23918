# SPDX-License-Identifier: MIT
"""Tessera components on a Dask cluster (``pip install 'tessera[dask]'``).

    from distributed import Client, LocalCluster        # or dask_jobqueue.SLURMCluster, ...
    import tessera.dask

    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    heat = tessera.dask.load(client, "build/plugins/heat.so")      # any mode, any component
    futures = heat.map("apply", [inputs_1, inputs_2, ...])         # one task per item
    results = heat.gather(futures)                                 # [{"temperature": ..., ...}]
    grads = heat.batch("vjp", batched_inputs, ["conductivity"], ["misfit"], {"misfit": 1.0})

Each Dask worker process opens the component once, at its first task,
through a ``distributed.WorkerPlugin``, keeps it open between tasks, and
closes it when the worker retires or ``close()`` is called. Arrays travel
as NumPy arrays in Dask's own serialisation. Scheduling, data movement,
retries (``retries=``) and recomputing what a lost worker held are
Dask's; see docs/dask.md.

``jax.vmap`` of ``tessera.jax.apply(cluster_component, ...)`` sends its
batch to the cluster through :meth:`ClusterComponent.batch`.
"""

from __future__ import annotations

from ._cluster import ENDPOINTS, ClusterComponent, load
from ._plugin import ComponentPlugin, worker_component
from ._spec import ComponentSpec

__all__ = ["ENDPOINTS", "ClusterComponent", "ComponentPlugin", "ComponentSpec", "load",
           "worker_component"]


def __dir__() -> list[str]:
    # What the module imports for its own use (jax, np, typing names...)
    # is not part of it: dir() and completion show the public names only.
    return sorted(__all__)
