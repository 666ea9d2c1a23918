"""A text field, which Tessera's array schema cannot carry."""

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]
    label: str


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(y=inputs.x)
