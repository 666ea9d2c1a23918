# SPDX-License-Identifier: MIT
"""Every field kind in and out: text, text with choices, JSON (an int with
a bound, a dict of arrays) and an array of any rank; text, JSON and
any-rank results."""

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    name: str
    method: Literal["sum", "max"] = "sum"
    steps: int = Field(default=1, ge=1)
    weights: dict[str, Array[(None,), Float64]]
    field: Array[..., Float64]


class OutputSchema(BaseModel):
    greeting: str
    summary: dict[str, float]
    scaled: Array[..., Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    agg = np.sum if inputs.method == "sum" else np.max
    return OutputSchema(
        greeting=f"Hello {inputs.name}!",
        summary={k: float(agg(v)) * inputs.steps for k, v in inputs.weights.items()},
        scaled=inputs.field * inputs.steps,
    )
