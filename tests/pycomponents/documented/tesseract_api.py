# SPDX-License-Identifier: MIT
"""A component whose docs page has every kind of field: arrays of fixed and
free length, a scalar with a default, text with choices and a default, and
JSON, each with a description (tests/test_serve_docs.c looks at the page
`tessera serve` gives for it in a browser)."""

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="The samples.")
    w: Array[(3,), Float64] = Field(default=[1.0, 2.0, 3.0], description="Three weights.")
    scale: float = Field(default=2.0, description="What the samples are multiplied by.")
    method: Literal["sum", "max"] = Field(default="sum", description="How to reduce.")
    tags: dict[str, int] = Field(default={}, description="Free-form labels.")


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]] = Field(description="scale * x + sum(w).")
    reduced: Float64 = Field(description="x reduced by the method.")
    note: str = Field(description="What was done.")


def apply(inputs: InputSchema) -> OutputSchema:
    agg = np.sum if inputs.method == "sum" else np.max
    return OutputSchema(y=inputs.scale * inputs.x + np.sum(inputs.w),
                        reduced=float(agg(inputs.x)),
                        note=f"{inputs.method} of {len(inputs.x)} samples")
