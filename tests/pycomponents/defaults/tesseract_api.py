"""y = s * x + sum(w) (+ bias when given): a scalar and a small array with
defaults, and an optional input; `seen` says what the component got."""

from typing import Optional

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="required")
    s: float = Field(default=2.0, description="scale")
    w: Array[(3,), Float64] = Field(default=[1.0, 2.0, 3.0], description="weights")
    bias: Optional[Differentiable[Array[(None,), Float64]]] = Field(
        default=None, description="added when given")


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]]
    seen: Array[(3,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    y = inputs.s * inputs.x + np.sum(inputs.w)
    given = inputs.bias is not None
    if given:
        y = y + inputs.bias
    return OutputSchema(y=y, seen=np.array([inputs.s, np.sum(inputs.w), float(given)]))
