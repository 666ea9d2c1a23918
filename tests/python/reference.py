# SPDX-License-Identifier: MIT
"""The bundled plugins re-implemented in JAX (usable on NumPy inputs too),
and the test case of each: inputs, differentiable fields, tolerances.

The tests compare the plugins' values and derivatives with these and with
finite differences of the plugins' own apply."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

from conftest import MATRIX


def noop(x):
    return {"y": x}


def vectoradd(a, b, s):
    return {"result": a * s + b}


def rosenbrock(x, a, b):
    return {"value": jnp.sum(b * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2)}


def read_matrix(path: Path) -> np.ndarray:
    """linear's matrix file: '#' comments, then "m n", then the entries."""
    numbers = []
    for line in path.read_text().splitlines():
        numbers += [float(t) for t in line.split("#", 1)[0].split()]
    m, n = int(numbers[0]), int(numbers[1])
    return np.array(numbers[2:2 + m * n]).reshape(m, n)


_A = read_matrix(MATRIX)


def linear(x):
    return {"y": jnp.asarray(_A) @ x}


def heat(conductivity, source, initial_temperature, observations, dt, steps):
    """Implicit Euler on a rod of n cells, wall at 0 (x = 0), insulated end;
    faces conduct with the harmonic mean of their cells (heat_scheme.h)."""
    k = conductivity
    n = k.shape[0]
    h = 1.0 / n
    scale = dt / h
    wall = scale * 2.0 * k[0] / h
    faces = scale * 2.0 * k[:-1] * k[1:] / (h * (k[:-1] + k[1:]))    # faces 1 .. n-1
    coupling = jnp.concatenate([jnp.reshape(wall, (1,)), faces])     # c_f, f = 0 .. n-1
    right = jnp.concatenate([faces, jnp.zeros(1)])                    # c_{i+1}
    A = jnp.diag(1.0 + coupling + right) - jnp.diag(faces, 1) - jnp.diag(faces, -1)
    T = jax.lax.fori_loop(0, int(steps), lambda _, T: jnp.linalg.solve(A, T + dt * source),
                          initial_temperature)
    return {"temperature": T, "misfit": 0.5 * jnp.sum((T - observations) ** 2)}


@dataclass
class Case:
    """One bundled plugin: its name, a reference, a point to evaluate at."""

    name: str
    reference: Callable
    inputs: Callable[[np.random.Generator], dict]
    wrt: tuple[str, ...]                     # differentiable inputs to check
    outs: tuple[str, ...]                    # differentiable outputs to check
    static: tuple[str, ...] = field(default=())   # inputs the reference needs as Python values
    rtol: float = 1e-6

    def point(self, seed: int = 0) -> dict:
        return self.inputs(np.random.default_rng(seed))

    def expected(self, inputs: dict) -> dict:
        args = {k: (v.item() if k in self.static else v) for k, v in inputs.items()}
        return {k: np.asarray(v) for k, v in self.reference(**args).items()}


def _f64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


CASES = {
    "noop": Case("noop", noop, lambda r: {"x": r.normal(size=5)}, ("x",), ("y",)),
    "vectoradd": Case(
        "vectoradd", vectoradd,
        lambda r: {"a": r.normal(size=4), "b": r.normal(size=4), "s": _f64(r.normal())},
        ("a", "b", "s"), ("result",)),
    "rosenbrock": Case(
        "rosenbrock", rosenbrock,
        lambda r: {"x": r.uniform(-1.5, 1.5, size=5), "a": _f64(1.0 + 0.2 * r.normal()),
                   "b": _f64(100.0)},
        ("x", "a", "b"), ("value",)),
    "linear": Case("linear", linear, lambda r: {"x": r.normal(size=4)}, ("x",), ("y",)),
    "heat": Case(
        "heat", heat,
        lambda r: {"conductivity": r.uniform(0.5, 1.5, size=6),
                   "source": r.normal(size=6),
                   "initial_temperature": r.normal(size=6),
                   "observations": r.normal(size=6),
                   "dt": _f64(0.02), "steps": np.int64(5)},
        ("conductivity", "source", "initial_temperature"), ("temperature", "misfit"),
        static=("steps",), rtol=1e-5),
}


def finite_jacobian(apply: Callable[[dict], dict], inputs: dict, wrt: str, out: str,
                    rel: float = 1e-6) -> np.ndarray:
    """d out / d wrt by central differences, shaped (*out.shape, *wrt.shape)."""
    x = np.array(inputs[wrt], dtype=np.float64)
    base = np.asarray(apply(inputs)[out])
    jac = np.zeros(base.shape + x.shape)
    for idx in np.ndindex(x.shape):
        h = rel * max(1.0, abs(x[idx]))
        plus, minus = x.copy(), x.copy()
        plus[idx] += h
        minus[idx] -= h
        hi = np.array(apply({**inputs, wrt: plus})[out])
        lo = np.array(apply({**inputs, wrt: minus})[out])
        jac[(...,) + idx] = (hi - lo) / (2 * h)
    return jac
