# SPDX-License-Identifier: MIT
"""What the Dask examples share: the cluster, where the bundled plugins
are, and the command line.

The cluster is made in one place, make_cluster: on a SLURM allocation (or
PBS, LSF, Kubernetes) that function is the only thing to change. The
plugin paths must then be readable on every node (a shared file system).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from distributed import LocalCluster


def make_cluster(workers: int):
    """A LocalCluster of `workers` processes on this machine. On SLURM:

        from dask_jobqueue import SLURMCluster
        cluster = SLURMCluster(cores=32, processes=32, memory="128GB", walltime="01:00:00")
        cluster.scale(jobs=4)        # four nodes, 128 worker processes
        return cluster
    """
    return LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=":0")


def plugin(name: str) -> Path:
    """A bundled plugin: $TESSERA_BUILD_DIR/plugins, or build/plugins."""
    build = os.environ.get("TESSERA_BUILD_DIR")
    root = Path(__file__).resolve().parents[3]
    return Path(build or root / "build") / "plugins" / f"{name}.so"


def arguments(description: str, **sizes: int) -> argparse.Namespace:
    """--workers, --mode, and one integer option per size (e.g. runs=2500)."""
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--workers", type=int, default=os.cpu_count() or 2,
                   help="worker processes of the LocalCluster (default: one per CPU)")
    p.add_argument("--mode", default="inproc", choices=("inproc", "isolated", "worker"),
                   help="how each Dask worker opens the component")
    for name, default in sizes.items():
        p.add_argument(f"--{name}", type=int, default=default)
    return p.parse_args()
