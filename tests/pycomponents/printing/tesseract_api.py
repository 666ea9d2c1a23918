"""y = 2 * x, printing on stdout as it goes (for the tests that the
command's own stdout carries only its results): a line when imported,
and a line and then text without a newline in each endpoint. Nothing is
flushed: the text sits in sys.stdout's buffer until the interpreter
writes it."""

import sys

import numpy as np
from pydantic import BaseModel

from tesseract_core.runtime import Array, Differentiable, Float64

print("printing: imported")


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]]


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]]


def _say(endpoint: str) -> None:
    print(f"printing: {endpoint} line")
    sys.stdout.write(f"printing: {endpoint} partial")


def apply(inputs: InputSchema) -> OutputSchema:
    _say("apply")
    return OutputSchema(y=2.0 * inputs.x)


def jacobian(inputs: InputSchema, jac_inputs: set[str], jac_outputs: set[str]):
    _say("jacobian")
    return {"y": {"x": 2.0 * np.eye(inputs.x.shape[0])}}


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    _say("jvp")
    return {"y": 2.0 * tangent_vector["x"]}


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    _say("vjp")
    return {"x": 2.0 * cotangent_vector["y"]}
