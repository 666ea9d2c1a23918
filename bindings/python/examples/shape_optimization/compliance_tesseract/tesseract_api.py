# SPDX-License-Identifier: MIT
"""The compliance solver as a tesseract-core component, for running the
study with tesseract-core: it calls the same C plugin
(plugins/compliance) in-process through Tessera, so both frameworks do
identical numerical work and the comparison measures only how each reaches
its components. The plugin is found at $TESSERA_BUILD_DIR/plugins (default:
the repository's build/)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from pydantic import BaseModel
from tesseract_core.runtime import Array, Differentiable, Float64, ShapeDType

import tessera

_BUILD = Path(os.environ.get("TESSERA_BUILD_DIR")
              or Path(__file__).resolve().parents[5] / "build")
_SOLVER = tessera.load(_BUILD / "plugins" / "compliance.so")


class InputSchema(BaseModel):
    rho: Differentiable[Array[(None, None), Float64]]
    penal: Float64
    young_min: Float64


class OutputSchema(BaseModel):
    compliance: Differentiable[Float64]


def _inputs(inputs: InputSchema) -> dict:
    return {"rho": np.ascontiguousarray(inputs.rho, dtype=np.float64),
            "penal": np.float64(inputs.penal), "young_min": np.float64(inputs.young_min)}


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(compliance=_SOLVER.apply(_inputs(inputs))["compliance"])


def vector_jacobian_product(inputs: InputSchema, vjp_inputs: set[str], vjp_outputs: set[str],
                            cotangent_vector: dict):
    if "compliance" not in vjp_outputs:
        return {name: np.zeros_like(getattr(inputs, name)) for name in vjp_inputs}
    grads = _SOLVER.vjp(_inputs(inputs), sorted(vjp_inputs), ["compliance"],
                        {"compliance": np.float64(cotangent_vector["compliance"])})
    return dict(grads)


def abstract_eval(abstract_inputs):
    return {"compliance": ShapeDType(shape=(), dtype="float64")}
