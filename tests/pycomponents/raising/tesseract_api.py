"""Refuses negative inputs with an exception, as a component's own check would."""

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def check_positive(x):
    if (x < 0).any():
        raise ValueError(f"negative input at index {int((x < 0).argmax())}")


def apply(inputs: InputSchema) -> OutputSchema:
    check_positive(inputs.x)
    return OutputSchema(y=inputs.x**0.5)
