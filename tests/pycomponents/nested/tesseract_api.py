"""Nested models, plain bool/int/float fields and a fixed-size axis, with
every endpoint written by hand (the remote backend's schema and bodies):

    stats.total = scale * gain * p.v      stats.twice = 2 * p.w
    n = count + len(p.v)                  negated = not flag
"""

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float32, Float64, ShapeDType


class Pair(BaseModel):
    v: Differentiable[Array[(None,), Float64]] = Field(description="Any length.")
    w: Differentiable[Array[(3,), Float32]] = Field(description="Three values.")


class InputSchema(BaseModel):
    p: Pair
    scale: Differentiable[Float64]
    count: int = 0
    flag: bool = False
    gain: float = 1.0


class Stats(BaseModel):
    total: Differentiable[Array[(None,), Float64]]
    twice: Differentiable[Array[(3,), Float32]]


class OutputSchema(BaseModel):
    stats: Stats
    n: int
    negated: bool


def apply(inputs: InputSchema) -> OutputSchema:
    p = inputs.p
    return OutputSchema(
        stats=Stats(total=inputs.scale * inputs.gain * p.v, twice=2 * p.w),
        n=inputs.count + len(p.v),
        negated=not inputs.flag,
    )


def _blocks(inputs: InputSchema) -> dict:
    """Every Jacobian block, {output path: {input path: array}}."""
    v, w, k = inputs.p.v, inputs.p.w, inputs.scale * inputs.gain
    n = len(v)
    return {
        "stats.total": {"p.v": k * np.eye(n), "p.w": np.zeros((n, 3)),
                        "scale": inputs.gain * v},
        "stats.twice": {"p.v": np.zeros((3, n), np.float32), "p.w": 2 * np.eye(3, dtype=np.float32),
                        "scale": np.zeros(3, np.float32)},
    }


def jacobian(inputs: InputSchema, jac_inputs: set[str], jac_outputs: set[str]):
    b = _blocks(inputs)
    return {o: {i: b[o][i] for i in jac_inputs} for o in jac_outputs}


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    b = _blocks(inputs)
    out = {}
    for o in jvp_outputs:
        terms = [np.tensordot(b[o][i], tangent_vector[i], axes=np.ndim(tangent_vector[i]))
                 for i in jvp_inputs]
        out[o] = sum(terms)
    return out


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    b = _blocks(inputs)
    out = {}
    for i in vjp_inputs:
        terms = [np.tensordot(cotangent_vector[o], b[o][i], axes=np.ndim(cotangent_vector[o]))
                 for o in vjp_outputs]
        out[i] = sum(terms)
    return out


def abstract_eval(abstract_inputs):
    n = abstract_inputs.p.v.shape[0]
    return {
        "stats": {"total": ShapeDType(shape=(n,), dtype="float64"),
                  "twice": ShapeDType(shape=(3,), dtype="float32")},
        "n": 0,
        "negated": False,
    }
