"""{{name}}: y = alpha * sin(x), a Tesseract-style Python component.

Tessera opens this folder as a component (tessera apply DIR ...); the same
file runs under tesseract-core. NumPy is all it needs. Change the function,
keep the derivatives in step, and run the tests (README.md).
"""

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="The points (a vector).")
    alpha: Differentiable[Float64] = Field(description="The amplitude (a scalar).")


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]] = Field(description="alpha * sin(x)")


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(y=inputs.alpha * np.sin(inputs.x))


def jacobian(inputs: InputSchema, jac_inputs: set[str], jac_outputs: set[str]):
    # Blocks of shape (*output_shape, *input_shape).
    blocks = {"x": np.diag(inputs.alpha * np.cos(inputs.x)), "alpha": np.sin(inputs.x)}
    return {"y": {name: blocks[name] for name in jac_inputs}}


def jacobian_vector_product(inputs: InputSchema, jvp_inputs, jvp_outputs, tangent_vector):
    dy = np.zeros_like(inputs.x)
    if "x" in jvp_inputs:
        dy = dy + inputs.alpha * np.cos(inputs.x) * tangent_vector["x"]
    if "alpha" in jvp_inputs:
        dy = dy + np.sin(inputs.x) * tangent_vector["alpha"]
    return {"y": dy}


def vector_jacobian_product(inputs: InputSchema, vjp_inputs, vjp_outputs, cotangent_vector):
    y_bar = cotangent_vector["y"]
    grads = {
        "x": inputs.alpha * np.cos(inputs.x) * y_bar,
        "alpha": np.dot(np.sin(inputs.x), y_bar),
    }
    return {name: grads[name] for name in vjp_inputs}


def abstract_eval(abstract_inputs):
    # Shapes only: y has x's shape.
    return {"y": ShapeDType(shape=abstract_inputs.x.shape, dtype="float64")}
