# SPDX-License-Identifier: MIT
"""The noop component written as a Tesseract: y = x for a float64 vector,
with its vector-Jacobian product (the cotangent itself). bench/report.py
measures it beside Tessera's noop plugin, in-process through
Tesseract.from_tesseract_api and over HTTP through `tesseract-runtime serve`.
"""

from typing import Any

from pydantic import BaseModel

from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]]


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]]


def apply(inputs: InputSchema) -> OutputSchema:
    """y = x."""
    return OutputSchema(y=inputs.x)


def vector_jacobian_product(inputs: InputSchema, vjp_inputs: set[str], vjp_outputs: set[str],
                            cotangent_vector: dict[str, Any]) -> dict[str, Any]:
    """The Jacobian is the identity: the cotangent of y is the one of x."""
    return {"x": cotangent_vector["y"]} if "x" in vjp_inputs else {}
