# SPDX-License-Identifier: MIT
"""UM-Bridge models for the UM-Bridge backend's tests, with every derivative
written out by hand, and a way to serve them with `umbridge.serve_models` in
a process of their own (`python umbridge_models.py PORT NAME...`).

quad: in0 = x (2 values), in1 = [y] (1 value);
      out0 = [x0^2 y + x1^3], out1 = [x0 x1, y^2], times config "scale" (1).
plain: Evaluate only; one input of config "n" (3) values, out0 = 2 * in0.
"""

from __future__ import annotations

import sys

import numpy as np
import umbridge


def _jacobian(x: np.ndarray, y: float, o: int, i: int) -> np.ndarray:
    """d out[o] / d in[i] at (x, y)."""
    if o == 0:
        return np.array([[2 * x[0] * y, 3 * x[1] ** 2]]) if i == 0 else np.array([[x[0] ** 2]])
    return np.array([[x[1], x[0]], [0.0, 0.0]]) if i == 0 else np.array([[0.0], [2 * y]])


def _hessians(x: np.ndarray, y: float, o: int, i1: int, i2: int) -> list[np.ndarray]:
    """For each component c of out[o]: d2 out[o][c] / d in[i1] d in[i2]."""
    size = (2, 1)
    zero = np.zeros((size[i1], size[i2]))
    if o == 0:
        blocks = {(0, 0): np.array([[2 * y, 0.0], [0.0, 6 * x[1]]]),
                  (0, 1): np.array([[2 * x[0]], [0.0]]),
                  (1, 0): np.array([[2 * x[0], 0.0]]),
                  (1, 1): np.array([[0.0]])}
        return [blocks[(i1, i2)]]
    first = np.array([[0.0, 1.0], [1.0, 0.0]]) if (i1, i2) == (0, 0) else zero
    second = np.array([[2.0]]) if (i1, i2) == (1, 1) else zero
    return [first, second]


class Quad(umbridge.Model):
    def __init__(self) -> None:
        super().__init__("quad")

    def get_input_sizes(self, config: dict) -> list[int]:
        return [2, 1]

    def get_output_sizes(self, config: dict) -> list[int]:
        return [1, 2]

    @staticmethod
    def _unpack(p, config):
        return np.asarray(p[0], float), float(p[1][0]), float(config.get("scale", 1.0))

    def __call__(self, parameters, config={}):
        x, y, s = self._unpack(parameters, config)
        return [[s * (x[0] ** 2 * y + x[1] ** 3)], [s * x[0] * x[1], s * y ** 2]]

    def gradient(self, out_wrt, in_wrt, parameters, sens, config={}):
        x, y, s = self._unpack(parameters, config)
        return (s * _jacobian(x, y, out_wrt, in_wrt).T @ np.asarray(sens, float)).tolist()

    def apply_jacobian(self, out_wrt, in_wrt, parameters, vec, config={}):
        x, y, s = self._unpack(parameters, config)
        return (s * _jacobian(x, y, out_wrt, in_wrt) @ np.asarray(vec, float)).tolist()

    def apply_hessian(self, out_wrt, in_wrt1, in_wrt2, parameters, sens, vec, config={}):
        x, y, s = self._unpack(parameters, config)
        hs = _hessians(x, y, out_wrt, in_wrt1, in_wrt2)
        total = sum(w * (h @ np.asarray(vec, float)) for w, h in zip(sens, hs))
        return (s * total).tolist()

    def supports_evaluate(self):
        return True

    def supports_gradient(self):
        return True

    def supports_apply_jacobian(self):
        return True

    def supports_apply_hessian(self):
        return True


class Plain(umbridge.Model):
    def __init__(self) -> None:
        super().__init__("plain")

    def get_input_sizes(self, config: dict) -> list[int]:
        return [int(config.get("n", 3))]

    def get_output_sizes(self, config: dict) -> list[int]:
        return [int(config.get("n", 3))]

    def __call__(self, parameters, config={}):
        return [[2.0 * v for v in parameters[0]]]

    def supports_evaluate(self):
        return True


MODELS = {"quad": Quad, "plain": Plain}

if __name__ == "__main__":
    umbridge.serve_models([MODELS[name]() for name in sys.argv[2:]], port=int(sys.argv[1]))
