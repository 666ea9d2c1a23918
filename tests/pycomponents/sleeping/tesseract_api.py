"""Sleeps `seconds` before answering y = x (a slow component, for timeouts
and cancellation)."""

import time

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]
    seconds: float


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    time.sleep(inputs.seconds)
    return OutputSchema(y=inputs.x)
