"""Rosenbrock's function in JAX, f = sum (a - x_i)^2 + b (x_{i+1} - x_i^2)^2,
with its vjp from jax.grad and its Hessian-vector product as forward over
reverse: jax.jvp of jax.grad, the cotangent scaling the function."""

import jax
import jax.numpy as jnp
import numpy as np
from pydantic import BaseModel, Field

from tesseract_core.runtime import Array, Differentiable, Float64

jax.config.update("jax_enable_x64", True)


class InputSchema(BaseModel):
    x: Differentiable[Array[(None,), Float64]] = Field(description="The point, n >= 2.")
    a: Differentiable[Float64] = Field(description="The valley's position.")
    b: Differentiable[Float64] = Field(description="The valley's steepness.")


class OutputSchema(BaseModel):
    value: Differentiable[Float64] = Field(description="f(x; a, b)")


def _f(p):
    x = p["x"]
    return jnp.sum((p["a"] - x[:-1]) ** 2 + p["b"] * (x[1:] - x[:-1] ** 2) ** 2)


def _point(inputs):
    return {"x": jnp.asarray(inputs.x), "a": jnp.asarray(inputs.a), "b": jnp.asarray(inputs.b)}


def apply(inputs: InputSchema) -> OutputSchema:
    return OutputSchema(value=float(_f(_point(inputs))))


def vector_jacobian_product(inputs, vjp_inputs, vjp_outputs, cotangent_vector):
    g = jax.grad(_f)(_point(inputs))
    w = cotangent_vector["value"]
    return {name: np.asarray(w * g[name]) for name in vjp_inputs}


def hvp(inputs, hvp_inputs, hvp_outputs, cotangent_vector, tangent_vector):
    p = _point(inputs)
    w = cotangent_vector["value"]
    # inputs not in hvp_inputs are held fixed: their tangent is zero
    t = {name: jnp.asarray(tangent_vector[name]) if name in tangent_vector
         else jnp.zeros_like(p[name]) for name in p}
    _, hv = jax.jvp(jax.grad(lambda q: w * _f(q)), (p,), (t,))
    return {name: np.asarray(hv[name]) for name in hvp_inputs}
