# SPDX-License-Identifier: MIT
"""Two Python components that cannot share one environment, in one JAX
program under jax.grad.

plugins/python/cumprod_numpy1 needs NumPy 1.x (numpy.cumproduct) and
plugins/python/cumsum_numpy2 needs NumPy 2.1+ (numpy.cumulative_sum). In
worker mode each runs in its own worker, under an environment that Tessera
builds from its tesseract_requirements.txt at first use (uv, cached by the
requirements' hash). The loss chains them,

    L(x) = sum(cumsum(cumprod(x)))

and its gradient, through both components' hand-written vjp, is checked
against the closed form. Loading the NumPy 1 component in-process (in this
NumPy 2 program) fails, and the message says to use worker mode.

    python bindings/python/examples/python_clash.py
"""

from __future__ import annotations

import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

import tessera
import tessera.jax

jax.config.update("jax_enable_x64", True)

HERE = Path(__file__).resolve().parents[3] / "plugins" / "python"


def loss_of(cumprod: tessera.Component, cumsum: tessera.Component):
    def loss(x):
        p = tessera.jax.apply(cumprod, {"x": x})["p"]
        s = tessera.jax.apply(cumsum, {"y": p})["s"]
        return jnp.sum(s)

    return loss


def exact_gradient(x: np.ndarray) -> np.ndarray:
    """d/dx_j of sum_i (n - i) p_i, p the running product."""
    n = len(x)
    p = np.cumprod(x)
    weights = n - np.arange(n)
    return np.cumsum((weights * p)[::-1])[::-1] / x


def main() -> None:
    started = time.perf_counter()
    cumprod = tessera.load(HERE / "cumprod_numpy1", mode="worker")
    cumsum = tessera.load(HERE / "cumsum_numpy2", mode="worker")
    print(f"opened both components in their own environments in "
          f"{time.perf_counter() - started:.2f} s")
    x = np.array([1.5, -0.5, 2.0, 0.75, 1.25])
    majors = (cumprod.apply({"x": x})["numpy_major"], cumsum.apply({"y": x})["numpy_major"])
    print(f"NumPy major versions: cumprod_numpy1 {majors[0]:.0f}, "
          f"cumsum_numpy2 {majors[1]:.0f}, this program {np.__version__}")

    loss = loss_of(cumprod, cumsum)
    value, grad = jax.jit(jax.value_and_grad(loss))(x)
    err = np.max(np.abs(np.asarray(grad) - exact_gradient(x)))
    print(f"L(x) = {float(value):.6f}; jax.grad through both components: "
          f"max error {err:.1e} against the closed form")
    assert err < 1e-12

    try:
        tessera.load(HERE / "cumprod_numpy1")
    except tessera.LoadError as exc:
        print(f"in-process, as expected, it cannot load:\n  {exc}")
    else:
        raise AssertionError("the NumPy 1 component loaded in a NumPy 2 program")
    cumprod.close()
    cumsum.close()


if __name__ == "__main__":
    main()
