"""Options beside an array, for comparing refusals with tesseract-core's
server: a choice (Literal), a text (str) and a bounded count (int >= 0).

    y     = x * count      (method "scale")
          = x + count      (method "shift")
    label = "<name>:<method>"
"""

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]
    method: Literal["scale", "shift"] = "scale"
    name: str = "run"
    count: int = Field(default=1, ge=0)


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]
    label: str


def apply(inputs: InputSchema) -> OutputSchema:
    x = np.asarray(inputs.x)
    y = x * inputs.count if inputs.method == "scale" else x + inputs.count
    return OutputSchema(y=y, label=f"{inputs.name}:{inputs.method}")
