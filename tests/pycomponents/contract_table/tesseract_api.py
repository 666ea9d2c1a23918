"""The contract table's component (tests/python/test_contract_table.py),
the schema of tests/plugins/contract_table.c written for Tesseract:

    out.y = repeat * data.scale * data.x + offset     out.total = sum(out.y)
"""

from typing import Optional

import numpy as np
from pydantic import BaseModel

from tesseract_core.runtime import Array, Differentiable, Float64, UInt8


class Data(BaseModel):
    x: Differentiable[Array[(None,), Float64]]
    scale: Differentiable[Float64] = 2.0


class InputSchema(BaseModel):
    data: Data
    offset: Optional[Array[(None,), Float64]] = None
    repeat: UInt8 = 1


class Out(BaseModel):
    y: Differentiable[Array[(None,), Float64]]
    total: Differentiable[Float64]


class OutputSchema(BaseModel):
    out: Out


def apply(inputs: InputSchema) -> OutputSchema:
    d = inputs.data
    y = int(inputs.repeat) * d.scale * d.x
    if inputs.offset is not None:
        y = y + inputs.offset
    return OutputSchema(out=Out(y=y, total=float(np.sum(y))))


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    d = inputs.data
    g = np.zeros_like(d.x)
    if "out.y" in vjp_outputs:
        g = g + cotangent_vector["out.y"]
    if "out.total" in vjp_outputs:
        g = g + cotangent_vector["out.total"]
    k = int(inputs.repeat)
    grads = {"data.x": k * d.scale * g, "data.scale": np.float64(k * np.dot(d.x, g))}
    return {name: grads[name] for name in vjp_inputs}
