"""Fields beyond arrays (the remote backend's TEXT and JSON kinds): a
Literal option, free text, an any-rank array, a dict of differentiable
arrays, Optional and plain numbers; outputs of text, a dict of arrays, a
plain count and an any-rank array:

    summary = f"{label}/{mode}"          total = x * scale (any rank)
    parts[k] = weights[k] * scale        n = len(weights) + (count or 0)
"""

from typing import Literal, Optional

from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    mode: Literal["sum", "prod"] = Field(default="sum", description="How to combine.")
    label: str = Field(description="Any text.")
    x: Array[..., Float64] = Field(description="Any rank.")
    weights: dict[str, Differentiable[Array[(None,), Float64]]]
    count: Optional[int] = None
    scale: float = 1.0


class OutputSchema(BaseModel):
    summary: str
    total: Array[..., Float64]
    parts: dict[str, Array[(None,), Float64]]
    n: int


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(
        summary=f"{inputs.label}/{inputs.mode}",
        total=inputs.x * inputs.scale,
        parts={k: v * inputs.scale for k, v in inputs.weights.items()},
        n=len(inputs.weights) + (inputs.count or 0),
    )
