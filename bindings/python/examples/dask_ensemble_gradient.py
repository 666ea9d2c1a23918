# SPDX-License-Identifier: MIT
"""An ensemble gradient on a Dask cluster: the gradient, with respect to the
conductivity profile of the heat component, of the misfit averaged over
1,000 samples of an uncertain heat source, as the mean of 1,000 vjps.

The samples are a dask.array; tessera.dask runs each of its chunks as one
task (one library batch on the worker) and the mean is reduced on the
cluster, so that only the gradient (one float per cell) comes back. The
result is checked against the same 1,000 vjps run serially in this
process, and against a central finite difference of the mean misfit.

    python bindings/python/examples/dask_ensemble_gradient.py [--samples 1000] [--workers N]
"""

from __future__ import annotations

import time

import dask
import dask.array as da
import numpy as np
from distributed import Client

import tessera
import tessera.dask
from dask_common import arguments, make_cluster, plugin

CELLS, DT, STEPS = 64, 0.005, 100


def source_samples(count: int, seed: int = 0) -> np.ndarray:
    """1 + a smooth random perturbation: four sine modes with random weights."""
    rng = np.random.default_rng(seed)
    x = (np.arange(CELLS) + 0.5) / CELLS
    modes = np.stack([np.sin((m + 1) * np.pi * x) / (m + 1) for m in range(4)])
    return 1.0 + 0.3 * rng.standard_normal((count, 4)) @ modes


def main() -> None:
    args = arguments(__doc__.split("\n\n")[0], samples=1000)
    heat_path = plugin("heat")
    x = (np.arange(CELLS) + 0.5) / CELLS
    fixed = {"initial_temperature": np.zeros(CELLS), "dt": np.float64(DT),
             "steps": np.int64(STEPS)}
    with tessera.load(heat_path) as serial:
        truth = 1.0 + 0.5 * np.sin(np.pi * x)
        measured = serial.apply({**fixed, "conductivity": truth, "source": np.ones(CELLS),
                                 "observations": np.zeros(CELLS)})["temperature"]
    fixed["observations"] = measured
    k = np.ones(CELLS)                        # where the gradient is taken
    samples = source_samples(args.samples)

    with make_cluster(args.workers) as cluster, Client(cluster) as client:
        heat = tessera.dask.load(client, heat_path, args.mode)
        chunks = heat.default_chunks()
        sources = da.from_array(samples, chunks=(-(-args.samples // chunks), CELLS))

        def mean_misfit(conductivity):
            return heat.batch("apply", {**fixed, "conductivity": conductivity,
                                        "source": sources})["misfit"].mean()

        t0 = time.perf_counter()
        vjps = heat.batch("vjp", {**fixed, "conductivity": k, "source": sources},
                          ["conductivity"], ["misfit"], {"misfit": 1.0})["conductivity"]
        grad, value = dask.compute(vjps.mean(axis=0), mean_misfit(k))
        cluster_s = time.perf_counter() - t0
        # A direction and a step for the finite-difference check.
        d = np.cos(3 * np.pi * x)
        h = 1e-5
        plus, minus = dask.compute(mean_misfit(k + h * d), mean_misfit(k - h * d))
        heat.close()

    t0 = time.perf_counter()
    with tessera.load(heat_path, args.mode) as serial:
        total = np.zeros(CELLS)
        for s in samples:
            total += serial.vjp({**fixed, "conductivity": k, "source": s}, ["conductivity"],
                                ["misfit"], {"misfit": 1.0})["conductivity"]
    serial_s = time.perf_counter() - t0
    expected = total / args.samples

    rel = float(np.max(np.abs(grad - expected)) / np.max(np.abs(expected)))
    fd = (plus - minus) / (2 * h)
    fd_rel = abs(fd - grad @ d) / abs(grad @ d)
    print(f"ensemble gradient: {args.samples} samples of the source, {CELLS} cells, {STEPS} "
          f"steps, mode {args.mode}")
    print(f"  mean misfit at k = 1       {value:.6e}")
    print(f"  |gradient|                 {np.linalg.norm(grad):.6e}")
    print(f"  on the cluster             {cluster_s:.2f} s ({sources.numblocks[0]} tasks of "
          f"{sources.chunks[0][0]} vjps, reduced there)")
    print(f"  serially here              {serial_s:.2f} s")
    print(f"  against the serial sum     relative difference {rel:.1e}")
    print(f"  against finite differences directional derivative {grad @ d:.6e} vs "
          f"{fd:.6e} (relative difference {fd_rel:.1e})")
    if rel > 1e-12 or fd_rel > 1e-5:
        raise SystemExit("the ensemble gradient does not check out")


if __name__ == "__main__":
    main()
