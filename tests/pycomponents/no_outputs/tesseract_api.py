# SPDX-License-Identifier: MIT
"""An OutputSchema without fields: apply only succeeds or fails (when
x[0] is negative)."""

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]


class OutputSchema(BaseModel):
    pass


def apply(inputs: InputSchema) -> OutputSchema:
    if inputs.x.size and inputs.x[0] < 0:
        raise ValueError("x[0] is negative")
    return OutputSchema()
