"""Ends its process when x[0] is negative, as a crashing extension would."""

import os

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    if inputs.x[0] < 0:
        os.abort()
    return OutputSchema(y=2.0 * inputs.x)
