# SPDX-License-Identifier: MIT
"""What one ``tessera_call`` runs: the static parameter of the primitive.

An Op names a component, an endpoint (apply, jvp, vjp or hvp), its
differentiation targets, a batch size and the inputs the caller left out;
it says which operands the primitive takes and which results it gives
(their shapes and dtypes: abstract_eval, the primitive's abstract
evaluation), and it makes the FFI op whose handle the compiled custom
call carries.
Ops are interned per component, so that retracing finds the same
parameters and JAX's caches hit.
"""

from __future__ import annotations

from typing import Any

import jax
import numpy as np

from .._component import Component


class Op:
    """A static, hashable description of one endpoint call.

    Operands: every input in schema order but those of ``left_out``, then
    the seeds (tangents of ``wrt_in`` for jvp, cotangents of ``wrt_out``
    for vjp, cotangents of ``wrt_out`` then tangents of ``wrt_in`` for hvp). A left-out input is never bound, so the library gives it its
    default, or the plugin sees it absent (an optional input), as from the
    NumPy API; it has no operand, so nothing differentiates it.
    Results: apply, every output; jvp, a tangent for each inexact output
    (``tangent_outputs``; NaN for those that are not differentiable, as in
    Tesseract-JAX); vjp and hvp, one for each of ``wrt_in``, shaped like it.
    With ``batch > 0`` every operand and result has a leading axis of that
    size, and the library runs the items (``tsr_call_run_batch``), or, with
    a ``cluster`` (a ``tessera.dask.ClusterComponent`` of the same
    component), the Dask cluster does, in chunks.
    """

    __slots__ = ("component", "kind", "wrt_in", "wrt_out", "batch", "cluster", "left_out",
                 "given", "_jitted")

    def __init__(self, component: Component, kind: str, wrt_in: tuple[str, ...],
                 wrt_out: tuple[str, ...], batch: int, cluster: Any = None,
                 left_out: tuple[str, ...] = ()) -> None:
        self.component = component
        self.kind = kind
        self.wrt_in = wrt_in
        self.wrt_out = wrt_out
        self.batch = batch
        self.cluster = cluster
        self.left_out = left_out
        # The inputs that are operands, in schema order.
        self.given = tuple(n for n in component.schema.input_names if n not in left_out)
        self._jitted: Any = None

    def __repr__(self) -> str:
        parts = [self.component.name, self.kind]
        if self.wrt_in or self.wrt_out:
            parts.append(f"{','.join(self.wrt_in)}->{','.join(self.wrt_out)}")
        if self.batch:
            parts.append(f"batch={self.batch}")
        if self.left_out:
            parts.append(f"without {','.join(self.left_out)}")
        if self.cluster is not None:
            parts.append("on dask")
        return f"tessera.Op({' '.join(parts)})"

    # ---- layout -------------------------------------------------------------

    @property
    def seeds(self) -> tuple[str, ...]:
        """Names of the seed operands after the inputs."""
        if self.kind == "jvp":
            return self.wrt_in
        if self.kind == "vjp":
            return self.wrt_out
        if self.kind == "hvp":
            return self.wrt_out + self.wrt_in
        return ()

    @property
    def tangent_outputs(self) -> tuple[str, ...]:
        """jvp: the outputs that get a tangent (every inexact output)."""
        return tuple(f.name for f in self.component.schema.outputs if f.dtype.kind in "fc")

    @property
    def results(self) -> tuple[str, ...]:
        if self.kind == "apply":
            return self.component.schema.output_names
        if self.kind == "jvp":
            return self.tangent_outputs
        return self.wrt_in

    @property
    def batch_supported(self) -> bool:
        """Whether the library can size this op's results for a batch ahead
        of the call (not when an output's shape depends on values)."""
        return self.kind in ("vjp", "hvp") or self.component.schema.output_shapes_static

    def with_batch(self, batch: int) -> Op:
        return make_op(self.component, self.kind, self.wrt_in, self.wrt_out, batch, self.cluster,
                       self.left_out)

    def derived(self, kind: str, wrt_in: tuple[str, ...], wrt_out: tuple[str, ...]) -> Op:
        """The jvp, vjp or hvp of this op's call: same inputs, batch and cluster."""
        # A Dask cluster runs apply, jvp and vjp; hvp runs in the local copy.
        cluster = None if kind == "hvp" else self.cluster
        return make_op(self.component, kind, wrt_in, wrt_out, self.batch, cluster,
                       self.left_out)

    # ---- the FFI op -----------------------------------------------------------

    def handle(self) -> np.uint64:
        """The handle of this op's FFI op (made once, kept by the component
        until it is closed)."""
        if self.kind == "jvp":
            ret_map = tuple(self.wrt_out.index(n) if n in self.wrt_out else -1
                            for n in self.tangent_outputs)
        else:
            ret_map = tuple(range(len(self.results)))
        names = self.component.schema.input_names
        input_indices = tuple(names.index(n) for n in self.given)
        ffi_op = self.component._ffi_op(self.kind, self.wrt_in, self.wrt_out, input_indices,
                                        self.seeds, self.batch, ret_map)
        return np.uint64(ffi_op.handle)


def make_op(component: Component, kind: str, wrt_in: tuple[str, ...] = (),
            wrt_out: tuple[str, ...] = (), batch: int = 0, cluster: Any = None,
            left_out: tuple[str, ...] = ()) -> Op:
    """The interned Op for these parameters. ``left_out``: inputs with a
    default or optional ones that the call leaves out, in schema order."""
    # Kept on the component (a cycle the garbage collector can break).
    ops = component.__dict__.setdefault("_jax_ops", {})
    key = (kind, wrt_in, wrt_out, batch, id(cluster), left_out)
    op = ops.get(key)
    if op is None:
        op = ops[key] = Op(component, kind, wrt_in, wrt_out, batch, cluster, left_out)
    return op


# ---- result shapes ----------------------------------------------------------

def _apply_shapes(op: Op, specs: tuple) -> tuple:
    """Output (shape, dtype) of apply for unbatched input (shape, dtype)
    pairs, from the schema's symbolic dims or the plugin's abstract_eval
    (the library chooses, and checks the inputs against the schema).
    Cached per component."""
    cache = op.component.__dict__.setdefault("_jax_shapes", {})
    out = cache.get(specs)
    if out is None:
        out = cache[specs] = tuple((tuple(shape), np.dtype(dtype))
                                   for shape, dtype in op.component._abstract_eval(specs))
    return out


def abstract_eval(*avals, op: Op) -> list:
    """The primitive's abstract evaluation: the ShapedArray of each of the
    op's results for its operands' avals (also the layout a batch sent to a
    Dask cluster gives its results, _cluster)."""
    comp = op.component
    given = dict(zip(op.given, avals[:len(op.given)]))
    if op.kind in ("vjp", "hvp"):
        return [jax.core.ShapedArray(given[n].shape, given[n].dtype) for n in op.wrt_in]
    lead = (op.batch,) if op.batch else ()
    # None: left out, the library's default or an absent optional input.
    specs = tuple((tuple(a.shape[len(lead):]), np.dtype(a.dtype).name) if a is not None else None
                  for a in (given.get(n) for n in comp.schema.input_names))
    shapes = dict(zip(comp.schema.output_names, _apply_shapes(op, specs)))
    return [jax.core.ShapedArray(lead + shapes[n][0], shapes[n][1]) for n in op.results]
