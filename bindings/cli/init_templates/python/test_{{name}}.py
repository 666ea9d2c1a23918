"""Tests of tesseract_api.py: apply against its formula, and each derivative
endpoint against central differences of apply. Run: python3 -m pytest"""

import json
import pathlib

import numpy as np
import pytest

import tesseract_api as api

HERE = pathlib.Path(__file__).parent
INPUTS = json.loads((HERE / "example_inputs.json").read_text())["inputs"]


def inputs(**change):
    values = {**INPUTS, **change}
    return api.InputSchema(x=np.asarray(values["x"], dtype=np.float64), alpha=values["alpha"])


def central_difference(name, h=1e-6):
    """d y / d name, as a (len(y), size of name) matrix."""
    base = np.asarray(INPUTS[name], dtype=np.float64)
    columns = []
    for k in range(base.size):
        step = np.zeros(base.size)
        step[k] = h
        up = (base.ravel() + step).reshape(base.shape)
        down = (base.ravel() - step).reshape(base.shape)
        y_up = api.apply(inputs(**{name: up.item() if up.ndim == 0 else up})).y
        y_down = api.apply(inputs(**{name: down.item() if down.ndim == 0 else down})).y
        columns.append((y_up - y_down) / (2 * h))
    return np.stack(columns, axis=1)


def test_apply_is_alpha_times_sin_x():
    got = api.apply(inputs()).y
    np.testing.assert_allclose(got, INPUTS["alpha"] * np.sin(INPUTS["x"]), rtol=1e-12)


@pytest.mark.parametrize("name", ["x", "alpha"])
def test_jacobian_matches_central_differences(name):
    block = np.asarray(api.jacobian(inputs(), {name}, {"y"})["y"][name])
    np.testing.assert_allclose(block.reshape(len(INPUTS["x"]), -1), central_difference(name),
                               rtol=1e-6, atol=1e-8)


def test_jvp_and_vjp_agree_with_the_jacobian():
    rng = np.random.default_rng(0)
    n = len(INPUTS["x"])
    jac = np.hstack([central_difference("x"), central_difference("alpha")])
    tangent = {"x": rng.standard_normal(n), "alpha": float(rng.standard_normal())}
    dy = api.jacobian_vector_product(inputs(), {"x", "alpha"}, {"y"}, tangent)["y"]
    np.testing.assert_allclose(dy, jac @ np.append(tangent["x"], tangent["alpha"]),
                               rtol=1e-6, atol=1e-8)
    y_bar = rng.standard_normal(n)
    grads = api.vector_jacobian_product(inputs(), {"x", "alpha"}, {"y"}, {"y": y_bar})
    np.testing.assert_allclose(np.append(grads["x"], grads["alpha"]), jac.T @ y_bar,
                               rtol=1e-6, atol=1e-8)
