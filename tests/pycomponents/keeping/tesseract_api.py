"""Remembers its last input, as a memoizing component might."""

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64

LAST = []


class InputSchema(BaseModel):
    x: Array[(None,), Float64]


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    LAST[:] = [inputs.x]
    return OutputSchema(y=inputs.x * 2.0)
