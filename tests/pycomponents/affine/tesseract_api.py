"""y = a * x + 1, with every derivative endpoint written by hand."""

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="A vector.")
    a: Differentiable[Float64] = Field(description="The slope.")


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]] = Field(description="a * x + 1")


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(y=inputs.a * inputs.x + 1.0)


def jacobian(inputs: InputSchema, jac_inputs: set[str], jac_outputs: set[str]):
    n = inputs.x.shape[0]
    blocks = {"x": inputs.a * np.eye(n), "a": inputs.x.copy()}
    return {"y": {name: blocks[name] for name in jac_inputs}}


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    t = np.zeros_like(inputs.x)
    if "x" in jvp_inputs:
        t = t + inputs.a * tangent_vector["x"]
    if "a" in jvp_inputs:
        t = t + inputs.x * tangent_vector["a"]
    return {"y": t}


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    g = cotangent_vector["y"]
    grads = {"x": inputs.a * g, "a": np.dot(inputs.x, g)}
    return {name: grads[name] for name in vjp_inputs}


def abstract_eval(abstract_inputs):
    return {"y": ShapeDType(shape=abstract_inputs.x.shape, dtype="float64")}
