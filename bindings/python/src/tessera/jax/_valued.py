# SPDX-License-Identifier: MIT
"""``tessera.jax.apply`` for components with text or JSON fields.

The XLA FFI handler carries arrays only, so these components take another
route: the primitive ``tessera_valued`` leaves XLA through
``jax.pure_callback`` and runs the NumPy API (``Component.apply``). Its
JVP is the component's jvp, through the same primitive, and the transpose
of that jvp is the component's vjp, so ``jit``, ``grad``, ``vjp``,
``jacrev``, ``jvp``, ``jacfwd``, ``linearize`` and ``vmap`` (items one
after the other) all reach the component.

* Text inputs and JSON inputs without arrays are static: their values are
  part of the traced function's identity, so a changed option retraces
  and an unchanged one does not (they must be static arguments of a
  jitted function, or closed over).
* Array leaves inside lists and dicts of a JSON input are operands, like
  array inputs: traced under ``jit``, differentiated (through the
  component's jvp and vjp at their paths, ``"weights.{a}"``,
  ``"layers.[0].k"``), batched under ``vmap``. The rest of the value is
  static.
* Outputs: array outputs are JAX arrays. Text and JSON outputs are not
  JAX values: an eager call (no tracer among the inputs) returns them
  too, as the NumPy API does; a traced one leaves them out.
* As for array components: a tangent for an operand the component cannot
  differentiate, or a cotangent for a non-differentiable output, is a
  ValueError; the tangent of a non-differentiable inexact output is NaN;
  second derivatives are UnsupportedError.
"""

from __future__ import annotations

import functools
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir

from .. import _errors, _nesting, _values
from .._component import Component
from ._rules import is_zero, second_order_error

tessera_valued_p = Primitive("tessera_valued")
tessera_valued_p.multiple_results = True


class _Route:
    """One traced call shape: which inputs are operands (by path), what the
    static values are; interned per component, so retracing finds the same
    parameters and JAX's caches hit."""

    def __init__(self, comp: Component, statics: dict, skeletons: dict,
                 arrays: tuple[str, ...], paths: tuple[str, ...]) -> None:
        self.comp = comp
        self.statics = statics        # text / array-free JSON input -> value
        self.skeletons = skeletons    # JSON input with arrays -> skeleton
        self.arrays = arrays          # array inputs, operands first
        self.paths = paths            # then the leaves inside JSON inputs
        self.names = arrays + paths   # each operand's name for jvp / vjp
        self.outputs = tuple(f.name for f in comp.schema.outputs if f.is_array)
        diff_json = {f.name for f in comp.schema.inputs if f.kind == "json" and f.differentiable}
        diff_arr = set(comp.schema.differentiable_inputs)
        self.diff_outputs = tuple(n for n in self.outputs
                                  if comp.schema.output(n).differentiable)
        # jvp: a tangent for each inexact output (NaN where not differentiable).
        self.tangent_outputs = tuple(n for n in self.outputs
                                     if comp.schema.output(n).dtype.kind in "fc")
        # The operands the component can differentiate.
        self.diff_ops = frozenset(k for k, n in enumerate(self.names)
                                  if (k < len(arrays) and n in diff_arr)
                                  or (k >= len(arrays) and n.split(".")[0] in diff_json))
        self._shapes: dict = {}
        self._calls: dict = {}

    def call(self, kind: str, wrt: tuple[int, ...] = (), wrt_out: tuple[str, ...] = ()) -> _Call:
        key = (kind, wrt, wrt_out)
        got = self._calls.get(key)
        if got is None:
            got = self._calls[key] = _Call(self, kind, wrt, wrt_out)
        return got

    def inputs(self, ops: tuple) -> dict:
        n = len(self.arrays)
        out = dict(self.statics)
        out.update(zip(self.arrays, ops[:n]))
        leaves = ops[n:]
        for name, sk in self.skeletons.items():
            out[name] = _values.fill_leaves(sk, leaves)
        return out

    def shapes(self, avals: tuple) -> tuple:
        """The array outputs' shapes and dtypes for operands of these
        shapes: the component's abstract_eval, else one run on zeros."""
        key = tuple((tuple(a.shape), np.dtype(a.dtype).name) for a in avals)
        got = self._shapes.get(key)
        if got is None:
            zeros = tuple(np.zeros(s, d) for s, d in key)
            n = len(self.arrays)
            probe = self.inputs(tuple(jax.ShapeDtypeStruct(s, d) for s, d in key[:n]) + zeros[n:])
            try:
                res = self.comp.abstract_eval(probe)
                got = tuple(jax.core.ShapedArray(_values.pick(res, o).shape,
                                                 _values.pick(res, o).dtype)
                            for o in self.outputs)
            except (_errors.UnsupportedError, AttributeError, TypeError):
                # No abstract evaluation from this component: one run on zeros.
                res = self.comp.apply(self.inputs(zeros))
                got = tuple(jax.core.ShapedArray(np.shape(_values.pick(res, o)),
                                                 np.asarray(_values.pick(res, o)).dtype)
                            for o in self.outputs)
            self._shapes[key] = got
        return got


class _Call:
    """The static parameter of one ``tessera_valued``: a route and an
    endpoint. Operands: the route's operands, then (jvp) a tangent for each
    of ``wrt`` (operand indices) or (vjp) a cotangent for each of
    ``wrt_out``. Results: apply, the array outputs; jvp, the tangent
    outputs; vjp, a cotangent for each of ``wrt``."""

    def __init__(self, route: _Route, kind: str, wrt: tuple[int, ...],
                 wrt_out: tuple[str, ...]) -> None:
        self.route, self.kind, self.wrt, self.wrt_out = route, kind, wrt, wrt_out
        self.n_ops = len(route.names)

    def __repr__(self) -> str:
        names = ",".join(self.route.names[k] for k in self.wrt)
        return f"tessera.valued({self.route.comp.name} {self.kind} {names}->{','.join(self.wrt_out)})"

    def avals(self, avals: tuple) -> tuple:
        ops = avals[:self.n_ops]
        if self.kind == "vjp":
            return tuple(jax.core.ShapedArray(ops[k].shape, ops[k].dtype) for k in self.wrt)
        out = dict(zip(self.route.outputs, self.route.shapes(ops)))
        if self.kind == "apply":
            return tuple(out.values())
        return tuple(out[n] for n in self.route.tangent_outputs)

    def host(self, avals_out: tuple, *args) -> tuple:
        """The NumPy API's call, on host arrays."""
        route = self.route
        ops = tuple(np.asarray(a) for a in args[:self.n_ops])
        seeds = args[self.n_ops:]
        inputs = route.inputs(ops)
        if self.kind == "apply":
            out = route.comp.apply(inputs)
            got = [_values.pick(out, o) for o in route.outputs]
        elif self.kind == "jvp":
            wrt = tuple(route.names[k] for k in self.wrt)
            out = route.comp.jvp(inputs, wrt, route.diff_outputs,
                                 {n: np.asarray(t) for n, t in zip(wrt, seeds)}) \
                if route.diff_outputs else {}
            got = [out[n] if n in out else np.full(a.shape, np.nan, a.dtype)
                   for n, a in zip(route.tangent_outputs, avals_out)]
        else:
            wrt = tuple(route.names[k] for k in self.wrt)
            out = route.comp.vjp(inputs, wrt, self.wrt_out,
                                 {n: np.asarray(c) for n, c in zip(self.wrt_out, seeds)})
            got = [out[n] for n in wrt]
        return tuple(np.asarray(g, dtype=a.dtype).reshape(a.shape)
                     for g, a in zip(got, avals_out))


def _abstract_eval(*avals, call: _Call):
    return call.avals(avals)


def _impl(*args, call: _Call):
    # Outside jit: the NumPy API directly, so that a failure raises its
    # tessera class here.
    avals = call.avals(tuple(jax.typeof(a) for a in args))
    return [jnp.asarray(r) for r in call.host(avals, *args)]


def _host_compiled(call: _Call, avals_out: tuple, *args) -> tuple:
    try:
        return call.host(avals_out, *args)
    except _errors.TesseraError as exc:
        # The form tessera.jax.tessera_errors reads back, as the FFI
        # handler writes a failure.
        raise RuntimeError(f"tessera.{type(exc).__name__}: {exc.message} "
                           f"[{exc.code_name}]") from None


def _callback(*args, call: _Call, avals_out: tuple):
    shapes = tuple(jax.ShapeDtypeStruct(a.shape, a.dtype) for a in avals_out)
    return jax.pure_callback(functools.partial(_host_compiled, call, avals_out), shapes, *args)


def _lowering(ctx, *args, call: _Call):
    return mlir.lower_fun(functools.partial(_callback, call=call, avals_out=tuple(ctx.avals_out)),
                          multiple_results=True)(ctx, *args)


def _second_order(call: _Call, what: str) -> _errors.TesseraError:
    return second_order_error(call.route.comp.name, call.kind, what)


def _jvp_rule(primals, tangents, *, call: _Call):
    if call.kind != "apply":
        raise _second_order(call, "a derivative")
    route = call.route
    wrt, seeds = [], []
    for k, t in enumerate(tangents):
        if is_zero(t):
            continue
        if k not in route.diff_ops:
            raise ValueError(
                f"tessera: a tangent that is not a symbolic zero reached '{route.names[k]}' of "
                f"component '{route.comp.name}', which is not differentiable. Exclude it from "
                "the differentiated arguments (a closure, or argnums), or apply "
                "jax.lax.stop_gradient to it before tessera.jax.apply.")
        wrt.append(k)
        seeds.append(t)
    primal_out = tessera_valued_p.bind(*primals, call=call)
    zeros = [ad.Zero(jax.typeof(y).to_tangent_aval()) for y in primal_out]
    if not wrt:
        return primal_out, zeros
    jcall = route.call("jvp", tuple(wrt))
    got = dict(zip(route.tangent_outputs, tessera_valued_p.bind(*primals, *seeds, call=jcall)))
    return primal_out, [got.get(n, z) for n, z in zip(route.outputs, zeros)]


def _transpose_rule(cotangents, *args, call: _Call):
    if call.kind != "jvp":
        raise _second_order(call, "a transpose")
    route = call.route
    primals, tangents = args[:call.n_ops], args[call.n_ops:]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise NotImplementedError(
            f"tessera: component '{route.comp.name}' is not linear in its inputs; only its "
            "jvp can be transposed")
    wrt_out, seeds = [], []
    for name, ct in zip(route.tangent_outputs, cotangents):
        if type(ct) is ad.Zero:
            continue
        if name not in route.diff_outputs:
            raise ValueError(
                f"tessera: a cotangent that is not a symbolic zero reached output '{name}' of "
                f"component '{route.comp.name}', which is not differentiable. Leave it out of "
                "what is differentiated (e.g. has_aux=True), or wrap it in "
                "jax.lax.stop_gradient.")
        wrt_out.append(name)
        seeds.append(ct)
    if not wrt_out:
        cts = [ad.Zero(t.aval) for t in tangents]
    else:
        cts = tessera_valued_p.bind(*primals, *seeds,
                                    call=route.call("vjp", call.wrt, tuple(wrt_out)))
    return [None] * call.n_ops + [ct if ad.is_undefined_primal(t) else None
                                  for t, ct in zip(tangents, cts)]


def _batch_rule(args, dims, *, call: _Call):
    """One call per item (the library cannot size value-dependent text
    results for a batch)."""
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    n_out = len(call.avals(tuple(jax.typeof(a) if d is None else
                                 jax.core.ShapedArray(a.shape[:d] + a.shape[d + 1:], a.dtype)
                                 for a, d in zip(args, dims))))
    if not any(isinstance(a, jax.core.Tracer) for a in args):
        rows = [tessera_valued_p.bind(*(a if d is None else jnp.take(a, i, axis=d)
                                        for a, d in zip(args, dims)), call=call)
                for i in range(size)]
        return [jnp.stack(col) for col in zip(*rows)], [0] * n_out
    batched = [i for i, d in enumerate(dims) if d is not None]

    def one(items):
        full = list(args)
        for i, item in zip(batched, items):
            full[i] = item
        return tessera_valued_p.bind(*full, call=call)

    outs = jax.lax.map(one, [jnp.moveaxis(args[i], dims[i], 0) for i in batched])
    return list(outs), [0] * n_out


tessera_valued_p.def_abstract_eval(_abstract_eval)
tessera_valued_p.def_impl(_impl)
mlir.register_lowering(tessera_valued_p, _lowering)
ad.primitive_jvps[tessera_valued_p] = _jvp_rule
ad.primitive_transposes[tessera_valued_p] = _transpose_rule
batching.primitive_batchers[tessera_valued_p] = _batch_rule


def apply(comp: Component, inputs: dict, operand) -> dict:
    """The call for inputs by dotted name (checked); ``operand`` makes an
    array input a JAX array by the schema's dtype rule."""
    schema = comp.schema
    split = _values.split_inputs(
        schema, inputs, lambda value, f: operand(value, f, comp),
        lambda x: jnp.asarray(x) if isinstance(x, jax.core.Tracer) else jnp.asarray(np.asarray(x)))
    statics, skeletons, arrays, ops, leaves, paths = split
    # Refusals of the values' types (a number for a text field, nothing
    # JSON can hold) come here, at trace time, as from NumPy.
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
    outs = tessera_valued_p.bind(*all_ops, call=route.call("apply"))
    return _nesting.nest(dict(zip(route.outputs, outs)))
