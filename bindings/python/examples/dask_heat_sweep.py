# SPDX-License-Identifier: MIT
"""A parameter sweep of the heat component on a Dask cluster, with Dask's
progress bar: every pair (k0, s0) of a grid, conductivity k(x) = k0 (1 + x)
and a uniform source s0, scored by the misfit against a measurement made
at (1.6, 0.8). One task per run; each Dask worker opens the component once
and keeps it for all the runs it gets. The same runs then go as one batch
split in chunks (the form for runs much cheaper than a Dask task), and
serially in this process: all three must agree to the bit.

    python bindings/python/examples/dask_heat_sweep.py [--runs 2500] [--workers N] [--mode worker]
"""

from __future__ import annotations

import math
import time

import numpy as np
from distributed import Client, progress

import tessera
import tessera.dask
from dask_common import arguments, make_cluster, plugin

# A transient (the rod is far from steady state at the end), so that the
# measurement tells k0 and s0 apart, not just their ratio.
CELLS, DT, STEPS = 256, 1e-4, 2000
TRUTH = (1.6, 0.8)


def rod(k0: float, s0: float, observations: np.ndarray) -> dict:
    x = (np.arange(CELLS) + 0.5) / CELLS
    return {"conductivity": k0 * (1.0 + x), "source": np.full(CELLS, s0),
            "initial_temperature": np.zeros(CELLS), "observations": observations,
            "dt": np.float64(DT), "steps": np.int64(STEPS)}


def main() -> None:
    args = arguments(__doc__.split("\n\n")[0], runs=2500)
    side = max(2, math.isqrt(args.runs))
    grid = [(k0, s0) for k0 in np.linspace(0.5, 3.0, side) for s0 in np.linspace(0.2, 1.4, side)]
    heat_path = plugin("heat")
    with tessera.load(heat_path) as serial:
        measured = serial.apply(rod(*TRUTH, np.zeros(CELLS)))["temperature"]
    items = [rod(k0, s0, measured) for k0, s0 in grid]

    with make_cluster(args.workers) as cluster, Client(cluster) as client:
        heat = tessera.dask.load(client, heat_path, args.mode)
        t0 = time.perf_counter()
        futures = heat.map("apply", items)
        progress(futures)                     # Dask's own progress bar
        results = heat.gather(futures)
        cluster_s = time.perf_counter() - t0
        stacked = {k: np.stack([item[k] for item in items]) for k in ("conductivity", "source")}
        chunks = heat.default_chunks()
        t0 = time.perf_counter()
        batch = heat.batch("apply", {**items[0], **stacked}, chunks=chunks)
        batch_s = time.perf_counter() - t0
        opens = heat.opens()
        heat.close()

    t0 = time.perf_counter()
    with tessera.load(heat_path, args.mode) as serial:
        expected = [serial.apply(item) for item in items]
    serial_s = time.perf_counter() - t0

    misfits = np.array([float(r["misfit"]) for r in results])
    differ = max(float(np.max(np.abs(r[k] - e[k]))) for r, e in zip(results, expected)
                 for k in ("temperature", "misfit"))
    differ = max(differ, *(float(np.max(np.abs(batch[k][i] - e[k])))
                           for i, e in enumerate(expected) for k in ("temperature", "misfit")))
    print(f"\nheat sweep: {len(items)} runs ({side} x {side} grid of k0, s0), {CELLS} cells, "
          f"{STEPS} steps each, mode {args.mode}")
    print(f"  on the cluster   {cluster_s:.2f} s, one task per run, {len(opens)} workers "
          f"(component opens per worker: {sorted(set(opens.values()))})")
    print(f"  as one batch     {batch_s:.2f} s, in {chunks} chunks")
    print(f"  serially here    {serial_s:.2f} s")
    print(f"  largest difference from the serial run: {differ:.1e}")
    print("  best fits (k0, s0, misfit):")
    for i in np.argsort(misfits)[:3]:
        print(f"    {grid[i][0]:.3f}  {grid[i][1]:.3f}  {misfits[i]:.3e}")
    if differ != 0.0:
        raise SystemExit("the cluster's results differ from the serial ones")


if __name__ == "__main__":
    main()
