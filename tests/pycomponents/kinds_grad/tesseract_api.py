"""Fields beyond arrays, as a Tesseract author writes them: an option
(Literal), a count (int), a list of nested models with differentiable
scalars, a dict of differentiable arrays, and list and text outputs.

    base = x * sum(layer.k for layer in layers) + sum(weights.values())
    y    = base                 (method "sum")
         = count * base         (method "scaled")
    names   = sorted weight keys
    summary = "<method>:<count>:<number of layers>"

Derivatives with respect to "x", "layers.[i].k" and "weights.{key}".
"""

from typing import Literal

import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64


class Layer(BaseModel):
    k: Differentiable[Float64] = Field(description="A gain.")
    note: str = ""


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]]
    method: Literal["sum", "scaled"] = "sum"
    count: int = 1
    layers: list[Layer]
    weights: dict[str, Differentiable[Array[(None,), Float64]]]


class OutputSchema(BaseModel):
    y: Differentiable[Array[(None,), Float64]]
    names: list[str]
    summary: str


def _factor(inputs: InputSchema) -> float:
    return float(inputs.count) if inputs.method == "scaled" else 1.0


def apply(inputs: InputSchema) -> OutputSchema:
    gain = sum(float(layer.k) for layer in inputs.layers)
    base = np.asarray(inputs.x) * gain
    for w in inputs.weights.values():
        base = base + np.asarray(w)
    return OutputSchema(
        y=_factor(inputs) * base,
        names=sorted(inputs.weights),
        summary=f"{inputs.method}:{inputs.count}:{len(inputs.layers)}",
    )


def _key(path: str) -> str:
    # "weights.{a}" -> "a"
    return path[len("weights.{"):-1]


def _layer(path: str) -> int:
    # "layers.[2].k" -> 2
    return int(path[len("layers.["):path.index("]")])


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    f = _factor(inputs)
    ct = np.asarray(cotangent_vector["y"])
    gain = sum(float(layer.k) for layer in inputs.layers)
    x = np.asarray(inputs.x)
    out = {}
    for path in vjp_inputs:
        if path == "x":
            out[path] = f * gain * ct
        elif path.startswith("layers."):
            out[path] = np.float64(f * np.dot(x, ct))
        elif path.startswith("weights."):
            out[path] = f * ct
        else:
            raise ValueError(f"cannot differentiate with respect to {path}")
    return out


def jacobian_vector_product(inputs, jvp_inputs, jvp_outputs, tangent_vector):
    f = _factor(inputs)
    gain = sum(float(layer.k) for layer in inputs.layers)
    x = np.asarray(inputs.x)
    y = np.zeros_like(x)
    for path in jvp_inputs:
        t = np.asarray(tangent_vector[path])
        if path == "x":
            y = y + f * gain * t
        elif path.startswith("layers."):
            y = y + f * x * t
        elif path.startswith("weights."):
            y = y + f * t
    return {"y": y}
