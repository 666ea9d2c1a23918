# SPDX-License-Identifier: MIT
"""Newton's method on the Rosenbrock function with SciPy's trust-region
Newton-CG (``scipy.optimize.minimize(method="trust-ncg")``): the gradient
from the component's vjp and each Hessian-vector product from its hvp
(``Component.hvp``), against the same minimisation with hand-written
Rosenbrock derivatives. Both must reach the minimum at (1, ..., 1) in the
same number of iterations.

    python bindings/python/examples/newton_trust_ncg.py [--dim N] [--mode worker]
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

import tessera

A, B = 1.0, 100.0


def default_plugin() -> Path:
    build = os.environ.get("TESSERA_BUILD_DIR")
    root = Path(__file__).resolve().parents[3]
    return Path(build or root / "build") / "plugins" / "rosenbrock.so"


def through_tessera(comp: tessera.Component):
    """fun, jac and hessp from the component's apply, vjp and hvp."""
    def inputs(x):
        return {"x": x, "a": A, "b": B}

    def fun(x):
        return float(comp.apply(inputs(x))["value"])

    def jac(x):
        return comp.vjp(inputs(x), ["x"], ["value"], {"value": 1.0})["x"]

    def hessp(x, p):
        return comp.hvp(inputs(x), ["x"], ["value"], {"value": 1.0}, {"x": p})["x"]

    return fun, jac, hessp


def by_hand():
    """The same three, written out."""
    def fun(x):
        return float(np.sum(B * (x[1:] - x[:-1] ** 2) ** 2 + (A - x[:-1]) ** 2))

    def jac(x):
        valley = x[1:] - x[:-1] ** 2
        g = np.zeros_like(x)
        g[:-1] = -4 * B * valley * x[:-1] - 2 * (A - x[:-1])
        g[1:] += 2 * B * valley
        return g

    def hessp(x, p):
        hp = np.zeros_like(x)
        hp[:-1] = (B * (12 * x[:-1] ** 2 - 4 * x[1:]) + 2) * p[:-1] - 4 * B * x[:-1] * p[1:]
        hp[1:] += 2 * B * p[1:] - 4 * B * x[:-1] * p[:-1]
        return hp

    return fun, jac, hessp


def solve(fun, jac, hessp, x0):
    return minimize(fun, x0, method="trust-ncg", jac=jac, hessp=hessp,
                    options={"gtol": 1e-10, "maxiter": 500})


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--plugin", type=Path, default=default_plugin())
    p.add_argument("--mode", default="inproc", choices=("inproc", "isolated", "worker"))
    p.add_argument("--dim", type=int, default=6)
    args = p.parse_args()
    x0 = np.array([-1.2 if i % 2 == 0 else 1.0 for i in range(args.dim)])
    with tessera.load(args.plugin, args.mode) as comp:
        print(f"rosenbrock, n = {args.dim}, {comp.mode}, hvp: {comp.hvp_source}")
        ours = solve(*through_tessera(comp), x0)
        calls = comp.stats()["endpoints"]
    ref = solve(*by_hand(), x0)
    for label, r in (("tessera", ours), ("by hand", ref)):
        print(f"  {label:<8} iterations {r.nit:>4}  f {r.fun:.3e}  hessp calls {r.nhev:>4}  "
              f"x {np.array2string(r.x, precision=6)}")
    print(f"  endpoint calls: " + ", ".join(f"{k} {v['calls']}" for k, v in calls.items()))
    assert ours.success and ref.success, (ours.message, ref.message)
    assert ours.nit == ref.nit, (ours.nit, ref.nit)
    np.testing.assert_allclose(ours.x, ref.x, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(ours.x, np.ones(args.dim), atol=1e-6)
    print("  agree: same iterations, same minimum")


if __name__ == "__main__":
    main()
