#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Load every bundled component in every mode and check that the modes agree.

    python3 bench/showcase.py [--build DIR]

For noop, vectoradd, rosenbrock and heat: open the plugin in inproc,
isolated and worker mode, call apply (and vjp where a component has it) on
the same inputs, and compare each mode's results with inproc's, to the bit.
Prints one line per component and mode; exits 1 when a call fails or a mode
disagrees.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
MODES = ("inproc", "isolated", "worker")


def cases() -> dict[str, dict]:
    """Per component: inputs, and the vjp to call (inputs, outputs, cotangents)."""
    rng = np.random.default_rng(0)
    n = 16
    return {
        "noop": {
            "inputs": {"x": rng.standard_normal(1000)},
            "vjp": (["x"], ["y"], {"y": rng.standard_normal(1000)}),
        },
        "vectoradd": {
            "inputs": {"a": rng.standard_normal(100), "b": rng.standard_normal(100), "s": 2.5},
            "vjp": (["a", "s"], ["result"], {"result": rng.standard_normal(100)}),
        },
        "rosenbrock": {
            "inputs": {"x": np.array([0.5, 1.5, -0.3]), "a": 1.0, "b": 100.0},
            "vjp": (["x", "b"], ["value"], {"value": 1.0}),
        },
        "heat": {
            "inputs": {"conductivity": 1.0 + rng.uniform(size=n), "source": np.ones(n),
                       "initial_temperature": np.zeros(n), "observations": np.full(n, 0.1),
                       "dt": 0.01, "steps": np.int64(20)},
            "vjp": (["conductivity"], ["misfit"], {"misfit": 1.0}),
        },
    }


def flatten(result: dict) -> dict[str, np.ndarray]:
    """Copies of a result dict's arrays (they are views the call may reuse)."""
    return {k: np.array(v, copy=True) for k, v in result.items()}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", type=Path,
                   default=Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build"))
    args = p.parse_args()
    import tessera

    failed = 0
    print(f"{'component':12s}{'mode':10s}{'apply':>30s}{'vjp':>26s}")
    for name, case in cases().items():
        plugin = args.build / "plugins" / f"{name}.so"
        reference: dict[str, dict] = {}
        for mode in MODES:
            try:
                with tessera.load(plugin, mode) as comp:
                    got = {"apply": flatten(comp.apply(case["inputs"]))}
                    wrt_in, wrt_out, cot = case["vjp"]
                    got["vjp"] = flatten(comp.vjp(case["inputs"], wrt_in, wrt_out, cot))
            except Exception as e:  # report and carry on with the next mode
                print(f"{name:12s}{mode:10s}  FAILED: {type(e).__name__}: {e}")
                failed = 1
                continue
            cols = []
            for ep in ("apply", "vjp"):
                summary = ", ".join(f"{k}{list(v.shape)}" for k, v in got[ep].items())
                if mode == "inproc":
                    reference[ep] = got[ep]
                    cols.append(summary)
                else:
                    same = (ep in reference and reference[ep].keys() == got[ep].keys() and all(
                        np.array_equal(reference[ep][k], got[ep][k]) for k in got[ep]))
                    cols.append("= inproc" if same else "DIFFERS from inproc")
                    failed |= not same
            print(f"{name:12s}{mode:10s}{cols[0]:>30s}{cols[1]:>26s}")
    print("every mode agrees with inproc" if not failed else "some modes FAILED or disagree")
    return failed


if __name__ == "__main__":
    sys.exit(main())
