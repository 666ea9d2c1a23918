"""The running sums of x, without abstract_eval: its output's length is
known only once x is given (an input shape), so under jax.jit it cannot
be traced until abstract_eval is defined."""

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="A vector.")


class OutputSchema(BaseModel):
    sums: Differentiable[Array[(None,), Float64]] = Field(description="Running sums of x.")
    total: Float64 = Field(description="The sum of x.")


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(sums=np.cumsum(inputs.x), total=float(np.sum(inputs.x)))
