"""Running sum s_i = y_0 + ... + y_i, written against NumPy 2.x.

`numpy.cumulative_sum` appeared in NumPy 2.1, so this component cannot
share an environment with one that needs NumPy 1.x.
"""

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType


class InputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]] = Field(description="Terms.")


class OutputSchema(BaseModel):
    s: Differentiable[Array[(None,), Float64]] = Field(description="Running sum of y.")
    numpy_major: Array[(), Float64] = Field(description="The NumPy major version it ran with.")


def apply(inputs: InputSchema) -> OutputSchema:
    major = float(np.__version__.split(".")[0])
    return OutputSchema(s=np.cumulative_sum(inputs.y), numpy_major=major)


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    return {"s": np.cumulative_sum(tangent_vector["y"])}


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    return {"y": np.cumulative_sum(cotangent_vector["s"][::-1])[::-1]}


def abstract_eval(abstract_inputs):
    n = abstract_inputs.y.shape[0]
    return {
        "s": ShapeDType(shape=(n,), dtype="float64"),
        "numpy_major": ShapeDType(shape=(), dtype="float64"),
    }
