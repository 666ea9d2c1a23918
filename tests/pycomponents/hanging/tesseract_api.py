"""Never returns when x[0] is negative."""

import time

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    while inputs.x[0] < 0:
        time.sleep(0.01)
    return OutputSchema(y=inputs.x + 1.0)
