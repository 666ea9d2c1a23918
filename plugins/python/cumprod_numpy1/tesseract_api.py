"""Running product p_i = x_0 x_1 ... x_i, written against NumPy 1.x.

`numpy.cumproduct` exists only before NumPy 2.0, so this component needs
an environment of its own (tesseract_requirements.txt) wherever the host
runs NumPy 2. Its derivatives are written by hand, for nonzero x.
"""

import numpy as np
from numpy import cumproduct  # NumPy 1.x only
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="Nonzero factors.")


class OutputSchema(BaseModel):
    p: Differentiable[Array[(None,), Float64]] = Field(description="Running product of x.")
    numpy_major: Array[(), Float64] = Field(description="The NumPy major version it ran with.")


def apply(inputs: InputSchema) -> OutputSchema:
    major = float(np.__version__.split(".")[0])
    return OutputSchema(p=cumproduct(inputs.x), numpy_major=major)


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    # dp_i = p_i * sum_{j <= i} dx_j / x_j
    p = cumproduct(inputs.x)
    return {"p": p * np.cumsum(tangent_vector["x"] / inputs.x)}


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    # dL/dx_j = sum_{i >= j} g_i p_i / x_j
    p = cumproduct(inputs.x)
    tail = np.cumsum((cotangent_vector["p"] * p)[::-1])[::-1]
    return {"x": tail / inputs.x}


def hvp(inputs, hvp_inputs, hvp_outputs, cotangent_vector, tangent_vector):
    # the derivative of the vjp above along the tangent v of x, with
    # dp = p * cumsum(v / x): d(tail / x) = dtail / x - tail v / x^2
    x, v, g = inputs.x, tangent_vector["x"], cotangent_vector["p"]
    p = cumproduct(x)
    dp = p * np.cumsum(v / x)
    tail = np.cumsum((g * p)[::-1])[::-1]
    dtail = np.cumsum((g * dp)[::-1])[::-1]
    return {"x": dtail / x - tail * v / x**2}


def abstract_eval(abstract_inputs):
    n = abstract_inputs.x.shape[0]
    return {
        "p": ShapeDType(shape=(n,), dtype="float64"),
        "numpy_major": ShapeDType(shape=(), dtype="float64"),
    }
