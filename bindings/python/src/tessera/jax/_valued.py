# SPDX-License-Identifier: MIT
"""``tessera.jax.apply`` for components with text or JSON fields.

The XLA FFI handler carries arrays only, so these components take another
route: the call leaves XLA through ``jax.pure_callback`` and runs the
NumPy API (``Component.apply``), and its derivative is a ``jax.custom_vjp``
whose backward pass runs ``Component.vjp`` the same way. It works under
``jit``, ``grad``, ``vjp``, ``jacrev`` and ``vmap`` (items one after the
other); forward-mode (``jvp``, ``jacfwd``) is not available on this route.

* Text inputs and JSON inputs without arrays are static: their values are
  part of the traced function's identity, so a changed option retraces
  and an unchanged one does not (they must be static arguments of a
  jitted function, or closed over).
* Array leaves inside lists and dicts of a JSON input are operands, like
  array inputs: traced under ``jit``, differentiated under ``grad``
  (through the component's vjp at their paths, ``"weights.{a}"``,
  ``"layers.[0].k"``), batched under ``vmap``. The rest of the value is
  static.
* Outputs: array outputs are JAX arrays. Text and JSON outputs are not
  JAX values: an eager call (no tracer among the inputs) returns them
  too, as the NumPy API does; a traced one leaves them out.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from .. import _errors, _values
from .._component import Component


class _Route:
    """One traced call shape: which inputs are operands (by path), what the
    static values are; its custom_vjp function."""

    def __init__(self, comp: Component, statics: dict, skeletons: dict,
                 arrays: tuple[str, ...], paths: tuple[str, ...]) -> None:
        self.comp = comp
        self.statics = statics        # text / array-free JSON input -> value
        self.skeletons = skeletons    # JSON input with arrays -> skeleton
        self.arrays = arrays          # array inputs, operands first
        self.paths = paths            # then the leaves inside JSON inputs
        self.outputs = tuple(f.name for f in comp.schema.outputs if f.is_array)
        diff_json = {f.name for f in comp.schema.inputs if f.kind == "json" and f.differentiable}
        diff_arr = set(comp.schema.differentiable_inputs)
        self.diff_outputs = tuple(n for n in self.outputs
                                  if comp.schema.output(n).differentiable)
        # The operands the component can differentiate, by their names.
        self.diff_ops = tuple(k for k, n in enumerate(arrays + paths)
                              if (k < len(arrays) and n in diff_arr)
                              or (k >= len(arrays) and n.split(".")[0] in diff_json))
        self._shapes: dict = {}
        self.fn = self._make()

    def inputs(self, ops: tuple) -> dict:
        n = len(self.arrays)
        out = dict(self.statics)
        out.update(zip(self.arrays, ops[:n]))
        leaves = ops[n:]
        for name, sk in self.skeletons.items():
            out[name] = _values.fill_leaves(sk, leaves)
        return out

    def shapes(self, avals: tuple) -> tuple:
        key = tuple((tuple(a.shape), np.dtype(a.dtype).name) for a in avals)
        got = self._shapes.get(key)
        if got is None:
            zeros = tuple(np.zeros(s, d) for s, d in key)
            n = len(self.arrays)
            probe = self.inputs(tuple(jax.ShapeDtypeStruct(s, d) for s, d in key[:n]) + zeros[n:])
            try:
                res = self.comp.abstract_eval(probe)
                got = tuple(jax.ShapeDtypeStruct(_values.pick(res, o).shape, _values.pick(res, o).dtype)
                            for o in self.outputs)
            except (_errors.UnsupportedError, AttributeError, TypeError):
                # No abstract evaluation from this component: one run on zeros.
                res = self.comp.apply(self.inputs(zeros))
                got = tuple(jax.ShapeDtypeStruct(np.shape(_values.pick(res, o)),
                                                 np.asarray(_values.pick(res, o)).dtype)
                            for o in self.outputs)
            self._shapes[key] = got
        return got

    def _host_apply(self, *ops):
        out = self.comp.apply(self.inputs(tuple(np.asarray(o) for o in ops)))
        return tuple(np.asarray(_values.pick(out, o)) for o in self.outputs)

    def _host_vjp(self, ops, cts):
        names = self.arrays + self.paths
        wrt = tuple(names[k] for k in self.diff_ops)
        seeds = {o: np.asarray(c) for o, c in zip(self.outputs, cts) if o in self.diff_outputs}
        res = self.comp.vjp(self.inputs(tuple(np.asarray(o) for o in ops)), wrt,
                            tuple(seeds), seeds)
        return tuple(np.asarray(res[n], dtype=ops[k].dtype).reshape(np.shape(ops[k]))
                     for n, k in zip(wrt, self.diff_ops))

    def _make(self):
        route = self

        def call(*ops):
            shapes = route.shapes(tuple(jax.typeof(o) for o in ops))
            return jax.pure_callback(route._host_apply, shapes, *ops,
                                     vmap_method="sequential")

        fn = jax.custom_vjp(call)

        def fwd(*ops):
            return call(*ops), ops

        def bwd(ops, cts):
            grads: list[Any] = [None] * len(ops)
            if route.diff_ops and route.diff_outputs:
                shapes = tuple(jax.ShapeDtypeStruct(ops[k].shape, ops[k].dtype)
                               for k in route.diff_ops)
                got = jax.pure_callback(route._host_vjp, shapes, ops, tuple(cts),
                                        vmap_method="sequential")
                for k, g in zip(route.diff_ops, got):
                    grads[k] = g
            for k, o in enumerate(ops):
                if grads[k] is None:
                    dt = o.dtype if jnp.issubdtype(o.dtype, jnp.inexact) else jax.dtypes.float0
                    grads[k] = np.zeros(o.shape, dt) if dt == jax.dtypes.float0 \
                        else jnp.zeros(o.shape, dt)
            return tuple(grads)

        fn.defvjp(fwd, bwd)
        return fn


def apply(comp: Component, inputs: dict, operand) -> dict:
    """The call for inputs by dotted name (checked); ``operand`` makes an
    array input a JAX array by the schema's dtype rule."""
    schema = comp.schema
    statics: dict = {}
    skeletons: dict = {}
    arrays: list[str] = []
    ops: list = []
    leaves: list = []
    found: list = []
    paths: list[str] = []
    for f in schema.inputs:
        if f.name not in inputs:
            continue
        value = inputs[f.name]
        if f.is_array:
            arrays.append(f.name)
            ops.append(operand(value, f, comp))
        elif f.kind == "json":
            # One list of leaves for every JSON input: a placeholder's
            # index counts from the first leaf of the first such input.
            sk = _values.split_leaves(value, f.name, found, paths)
            if len(found) > len(leaves):
                skeletons[f.name] = sk
                leaves.extend(jnp.asarray(x) if isinstance(x, jax.core.Tracer)
                              else jnp.asarray(np.asarray(x)) for x in found[len(leaves):])
            else:
                statics[f.name] = value
        else:
            statics[f.name] = value
    # Refusals of the values themselves (wrong type, outside choices,
    # nothing JSON can hold) come here, at trace time, as from NumPy.
    for name, value in statics.items():
        fld = schema.input(name)
        _values.encode(value, fld.kind, name, "input", comp, "apply")
    all_ops = tuple(ops) + tuple(leaves)
    if not any(isinstance(o, jax.core.Tracer) for o in all_ops):
        # Eager: every output, text and JSON ones too.
        route = _Route(comp, statics, skeletons, tuple(arrays), tuple(paths))
        out = comp.apply(route.inputs(tuple(np.asarray(o) for o in all_ops)))
        return jax.tree_util.tree_map(
            lambda x: jnp.asarray(x) if isinstance(x, np.ndarray) else x, out)
    key = (tuple(sorted((n, _values.static_key(v)) for n, v in statics.items())),
           tuple(sorted((n, _values.static_key(v)) for n, v in skeletons.items())),
           tuple(arrays), tuple(paths))
    cache = comp.__dict__.setdefault("_jax_valued", {})
    route = cache.get(key)
    if route is None:
        route = cache[key] = _Route(comp, statics, skeletons, tuple(arrays), tuple(paths))
    outs = route.fn(*all_ops)
    flat = dict(zip(route.outputs, outs))
    from .. import _nesting
    return _nesting.nest(flat)
