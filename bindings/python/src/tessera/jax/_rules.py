# SPDX-License-Identifier: MIT
"""Differentiation and batching rules of ``tessera_call``.

* JVP of apply: apply, plus one jvp call for the inputs whose tangent is not
  a symbolic zero. The jvp call is linear in its tangents, and its
  transpose is a vjp call: that is how ``grad``, ``vjp`` and ``jacrev``
  reach the plugin's vjp.
* Non-differentiable fields behave as in Tesseract-JAX: a tangent that is
  not a symbolic zero for a non-differentiable input, or a cotangent for a
  non-differentiable output, raises ValueError; the tangent of a
  non-differentiable output is NaN.
* Batching: the library runs a leading batch axis (one plugin call per
  item, split across workers in worker mode), or a Dask cluster does for
  an op made from a ``tessera.dask.ClusterComponent``; when an output's shape
  depends on values (so the library cannot size a batch), the items run
  one call each in a ``lax.map``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.interpreters import ad, batching

from .. import _errors
from ._op import Op
from ._primitive import tessera_call_p


def second_order_error(component: str, kind: str, what: str) -> _errors.TesseraError:
    """A derivative of a derivative: UnsupportedError (a NotImplementedError).
    Also the valued route's (_valued.py)."""
    return _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{component}': {what} of its {kind} is not available "
        "(second-order derivatives: jax.hessian, a JVP or grad of a gradient); components "
        "provide first derivatives only")


def _second_order(op: Op, what: str) -> _errors.TesseraError:
    return second_order_error(op.component.name, op.kind, what)


def is_zero(t) -> bool:
    """A symbolic zero tangent or cotangent (also the valued route's)."""
    return type(t) is ad.Zero or (hasattr(t, "dtype") and t.dtype == jax.dtypes.float0)


def _jvp_rule(primals, tangents, *, op: Op):
    if op.kind != "apply":
        raise _second_order(op, "a derivative")
    comp = op.component
    wrt_in, seeds = [], []
    given = (f for f in comp.schema.inputs if f.name not in op.left_out)
    for field, tangent in zip(given, tangents):
        if is_zero(tangent):
            continue
        if not field.differentiable:
            raise ValueError(
                f"tessera: a tangent that is not a symbolic zero reached input '{field.name}' "
                f"of component '{comp.name}', which is not differentiable. Exclude it from the "
                "differentiated arguments (a closure, or argnums), or apply "
                "jax.lax.stop_gradient to it before tessera.jax.apply.")
        wrt_in.append(field.name)
        seeds.append(tangent)
    primal_out = tessera_call_p.bind(*primals, op=op)
    if not wrt_in:
        return primal_out, [ad.Zero(jax.typeof(y).to_tangent_aval()) for y in primal_out]
    jop = op.derived("jvp", tuple(wrt_in), comp.schema.differentiable_outputs)
    tangent_out = iter(tessera_call_p.bind(*primals, *seeds, op=jop))
    # Integer outputs have float0 tangents: symbolic zeros.
    return primal_out, [next(tangent_out) if f.dtype.kind in "fc"
                        else ad.Zero(jax.typeof(y).to_tangent_aval())
                        for f, y in zip(comp.schema.outputs, primal_out)]


def _transpose_rule(cotangents, *args, op: Op):
    if op.kind != "jvp":
        raise _second_order(op, "a transpose")
    comp = op.component
    n_in = len(op.given)
    primals, tangents = args[:n_in], args[n_in:]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise NotImplementedError(
            f"tessera: component '{comp.name}' is not linear in its inputs; only its jvp can "
            "be transposed")
    wrt_out, seeds = [], []
    for name, ct in zip(op.tangent_outputs, cotangents):
        if type(ct) is ad.Zero:
            continue
        if name not in op.wrt_out:
            raise ValueError(
                f"tessera: a cotangent that is not a symbolic zero reached output '{name}' of "
                f"component '{comp.name}', which is not differentiable. Leave it out of what is "
                "differentiated (e.g. has_aux=True), or wrap it in jax.lax.stop_gradient.")
        wrt_out.append(name)
        seeds.append(ct)
    if not wrt_out:
        cts = [ad.Zero(t.aval) for t in tangents]
    else:
        vop = op.derived("vjp", op.wrt_in, tuple(wrt_out))
        cts = tessera_call_p.bind(*primals, *seeds, op=vop)
    return [None] * n_in + [ct if ad.is_undefined_primal(t) else None
                            for t, ct in zip(tangents, cts)]


def _batch_rule(args, dims, *, op: Op):
    size = next(a.shape[d] for a, d in zip(args, dims) if d is not None)
    n_out = len(op.results)
    if op.batch or op.batch_supported:
        moved = [jnp.moveaxis(a, d, 0) if d is not None else jnp.broadcast_to(a, (size, *a.shape))
                 for a, d in zip(args, dims)]
        if op.batch:
            # Already batched (nested vmap): fold the new axis into the old.
            flat = [m.reshape((size * op.batch, *m.shape[2:])) for m in moved]
            outs = tessera_call_p.bind(*flat, op=op.with_batch(size * op.batch))
            return [o.reshape((size, op.batch, *o.shape[1:])) for o in outs], [0] * n_out
        return tessera_call_p.bind(*moved, op=op.with_batch(size)), [0] * n_out
    # Output shapes depend on values: one call per item.
    if not any(isinstance(a, jax.core.Tracer) for a in args):
        # Eager: each item's call is made here, so that a failure raises its
        # tessera class (a lax.map would run compiled, where XLA wraps it).
        rows = [tessera_call_p.bind(*(a if d is None else jnp.take(a, i, axis=d)
                                      for a, d in zip(args, dims)), op=op)
                for i in range(size)]
        return [jnp.stack(col) for col in zip(*rows)], [0] * n_out
    batched = [i for i, d in enumerate(args) if dims[i] is not None]

    def one(items):
        full = list(args)
        for i, item in zip(batched, items):
            full[i] = item
        return tessera_call_p.bind(*full, op=op)

    outs = jax.lax.map(one, [jnp.moveaxis(args[i], dims[i], 0) for i in batched])
    return list(outs), [0] * n_out


def register() -> None:
    """Give the primitive its JVP, transpose and batching rules."""
    ad.primitive_jvps[tessera_call_p] = _jvp_rule
    ad.primitive_transposes[tessera_call_p] = _transpose_rule
    batching.primitive_batchers[tessera_call_p] = _batch_rule
