"""A field of a plain class that pydantic cannot validate on its own (no
arbitrary_types_allowed in a schema of its own), which Tessera cannot carry."""

from pydantic import BaseModel, ConfigDict

from tesseract_core.runtime import Array, Float64


class Label:
    pass


class InputSchema(BaseModel):
    model_config = ConfigDict(arbitrary_types_allowed=True)
    x: Array[(None,), Float64]
    label: Label


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(y=inputs.x)
