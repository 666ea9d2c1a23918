# SPDX-License-Identifier: MIT
"""Differentiation and batching rules of ``tessera_call``.

* JVP of apply: apply, plus one jvp call for the inputs whose tangent is not
  a symbolic zero. The jvp call is linear in its tangents, and its
  transpose is a vjp call: that is how ``grad``, ``vjp`` and ``jacrev``
  reach the plugin's vjp.
* Second order. The vjp call is differentiable in turn: along (dx, dw) its
  JVP is hvp(x, w, dx) + vjp(x, dw). The hvp call is linear in its
  tangents and transposes to itself (the Hessian of w . f over the
  differentiable inputs is symmetric); the vjp call, linear in its
  cotangents, transposes to a jvp call. That gives ``jax.hessian``,
  ``grad`` of ``grad``, ``jvp`` of ``grad``, ``jacfwd``/``jacrev`` of
  ``grad``. The jvp call's own JVP along the inputs (forward over forward,
  ``jacfwd(jacfwd(f))``) is one hvp per scalar output; for an output that is
  not a scalar it raises UnsupportedError. Third derivatives raise it too.
  A component without an hvp (hvp_source "none": no native hvp, no vjp
  or fd_method to serve it by finite differences, or hvp_fallback=off)
  raises UnsupportedError naming it and what it lacks.
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
    """A derivative the route cannot give: UnsupportedError (a
    NotImplementedError). Also the valued route's (_valued.py), which has
    first derivatives only."""
    return _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{component}': {what} of its {kind} is not available "
        "(second-order derivatives take the FFI route, of components without text or JSON "
        "fields; the route for text and JSON fields gives first derivatives only, and "
        "third-order derivatives are not available)")


def _second_order(op: Op, what: str) -> _errors.TesseraError:
    return second_order_error(op.component.name, op.kind, what)


def _check_hvp(op: Op) -> None:
    """Refuse at trace time a second derivative the component cannot give."""
    comp = op.component
    if comp.has_endpoint("hvp"):
        return
    raise _errors.UnsupportedError(
        _errors.TSR_E_UNSUPPORTED,
        f"component '{comp.name}': a second-order derivative (jax.hessian, a JVP or grad of "
        f"a gradient) needs its hvp, and it has none: no native hvp endpoint, and no vjp or "
        "fd_method from which the library could serve one by finite differences (or it was "
        "loaded with hvp_fallback=off)")


def is_zero(t) -> bool:
    """A symbolic zero tangent or cotangent (also the valued route's)."""
    return type(t) is ad.Zero or (hasattr(t, "dtype") and t.dtype == jax.dtypes.float0)


def _moved(op: Op, tangents) -> dict:
    """{input name: tangent} for the given inputs whose tangent is not a
    symbolic zero (in schema order); a non-differentiable one raises."""
    comp = op.component
    moved = {}
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
        moved[field.name] = tangent
    return moved


def _hvp_bind(op: Op, xs, ws, wrt_out: tuple, rows: tuple, moved: dict) -> list:
    """hvp(x, w, dx) for the rows ``rows`` (inputs whose result is wanted,
    in that order): the hvp_inputs are the rows, then the moved inputs
    that are not rows; inputs that do not move get a zero tangent."""
    _check_hvp(op)
    cols = rows + tuple(n for n in moved if n not in rows)
    at = {n: x for n, x in zip(op.given, xs)}
    tangents = [ad.instantiate_zeros(moved[n]) if n in moved else jnp.zeros_like(at[n])
                for n in cols]
    hop = op.derived("hvp", cols, wrt_out)
    return list(tessera_call_p.bind(*xs, *ws, *tangents, op=hop))[:len(rows)]


def _add(a, b):
    return b if a is None else a + b


def _vjp_jvp_rule(primals, tangents, *, op: Op):
    """d vjp(x, w) = hvp(x, w, dx) + vjp(x, dw)."""
    n = len(op.given)
    xs, ws = primals[:n], primals[n:]
    moved = _moved(op, tangents[:n])
    primal_out = tessera_call_p.bind(*primals, op=op)
    out = [None] * len(op.wrt_in)
    if moved:
        out = [_add(a, b) for a, b in zip(out, _hvp_bind(op, xs, ws, op.wrt_out, op.wrt_in,
                                                          moved))]
    dws = [(name, dw) for name, dw in zip(op.wrt_out, tangents[n:]) if not is_zero(dw)]
    if dws:
        vop = op.derived("vjp", op.wrt_in, tuple(name for name, _ in dws))
        res = tessera_call_p.bind(*xs, *(dw for _, dw in dws), op=vop)
        out = [_add(a, b) for a, b in zip(out, res)]
    return primal_out, [ad.Zero(jax.typeof(y).to_tangent_aval()) if t is None else t
                        for y, t in zip(primal_out, out)]


def _jvp_jvp_rule(primals, tangents, *, op: Op):
    """d jvp(x, v) = (second derivative along v and dx) + jvp(x, dv): the
    first term, for a scalar output o, is sum_k (H_o dx)_k . v_k, one hvp
    with cotangent 1."""
    comp = op.component
    n = len(op.given)
    xs, vs = primals[:n], primals[n:]
    moved = _moved(op, tangents[:n])
    primal_out = tessera_call_p.bind(*primals, op=op)
    out = [None] * len(op.tangent_outputs)
    if moved:
        lead = (op.batch,) if op.batch else ()
        shapes = dict(zip(op.tangent_outputs, (jax.typeof(y).shape for y in primal_out)))
        for k, name in enumerate(op.tangent_outputs):
            if name not in op.wrt_out:
                continue
            if shapes[name] != lead:
                raise _errors.UnsupportedError(
                    _errors.TSR_E_UNSUPPORTED,
                    f"component '{comp.name}': a JVP of its jvp along its inputs (forward over "
                    f"forward, e.g. jacfwd(jacfwd(f))) is one hvp per scalar output, and output "
                    f"'{name}' is not a scalar: use jax.hessian or jacfwd(jacrev(f)), which "
                    "differentiate its vjp")
            one = jnp.ones(lead, dtype=primal_out[k].dtype)
            rows = _hvp_bind(op, xs, [one], (name,), op.wrt_in, moved)
            term = sum(jnp.sum(r * v, axis=tuple(range(len(lead), r.ndim)))
                       for r, v in zip(rows, vs))
            out[k] = term
    dvs = [(name, dv) for name, dv in zip(op.wrt_in, tangents[n:]) if not is_zero(dv)]
    if dvs:
        jop = op.derived("jvp", tuple(name for name, _ in dvs), op.wrt_out)
        res = tessera_call_p.bind(*xs, *(dv for _, dv in dvs), op=jop)
        out = [_add(a, b) for a, b in zip(out, res)]
    # An output the component cannot differentiate: NaN, as its first derivative.
    return primal_out, [ad.Zero(jax.typeof(y).to_tangent_aval()) if t is None
                        else t if name in op.wrt_out else jnp.full_like(y, jnp.nan)
                        for name, y, t in zip(op.tangent_outputs, primal_out, out)]


def _jvp_rule(primals, tangents, *, op: Op):
    if op.kind == "vjp":
        return _vjp_jvp_rule(primals, tangents, op=op)
    if op.kind == "jvp":
        return _jvp_jvp_rule(primals, tangents, op=op)
    if op.kind == "hvp":
        raise _errors.UnsupportedError(
            _errors.TSR_E_UNSUPPORTED,
            f"component '{op.component.name}': third-order derivatives are not available "
            "(a derivative of its hvp was asked)")
    comp = op.component
    moved = _moved(op, tangents)
    wrt_in, seeds = list(moved), list(moved.values())
    primal_out = tessera_call_p.bind(*primals, op=op)
    if not wrt_in:
        return primal_out, [ad.Zero(jax.typeof(y).to_tangent_aval()) for y in primal_out]
    jop = op.derived("jvp", tuple(wrt_in), comp.schema.differentiable_outputs)
    tangent_out = iter(tessera_call_p.bind(*primals, *seeds, op=jop))
    # Integer outputs have float0 tangents: symbolic zeros.
    return primal_out, [next(tangent_out) if f.dtype.kind in "fc"
                        else ad.Zero(jax.typeof(y).to_tangent_aval())
                        for f, y in zip(comp.schema.outputs, primal_out)]


def _vjp_transpose(cotangents, primals, seeds, op: Op) -> list:
    """vjp(x, .) transposes to jvp(x, .): the cotangents of the outputs
    for the cotangents of wrt_in."""
    given = [(name, ct) for name, ct in zip(op.wrt_in, cotangents) if type(ct) is not ad.Zero]
    if not given:
        return [ad.Zero(s.aval) if ad.is_undefined_primal(s) else None for s in seeds]
    jop = op.derived("jvp", tuple(name for name, _ in given), op.wrt_out)
    res = dict(zip(jop.tangent_outputs,
                   tessera_call_p.bind(*primals, *(ct for _, ct in given), op=jop)))
    return [res[name] if ad.is_undefined_primal(s) else None
            for name, s in zip(op.wrt_out, seeds)]


def _hvp_transpose(cotangents, primals, seeds, op: Op) -> list:
    """hvp(x, w, .) is symmetric in the hvp_inputs: it transposes to
    itself. The cotangents w must be known (hvp is linear in each alone)."""
    n_w = len(op.wrt_out)
    ws, tangents = seeds[:n_w], seeds[n_w:]
    if any(ad.is_undefined_primal(w) for w in ws):
        raise NotImplementedError(
            f"tessera: component '{op.component.name}': its hvp is transposed along its "
            "tangents only")
    if all(type(ct) is ad.Zero for ct in cotangents):
        return [None] * n_w + [ad.Zero(t.aval) if ad.is_undefined_primal(t) else None
                               for t in tangents]
    cts = [ad.instantiate_zeros(ct) for ct in cotangents]
    res = tessera_call_p.bind(*primals, *ws, *cts, op=op)
    return [None] * n_w + [r if ad.is_undefined_primal(t) else None
                           for t, r in zip(tangents, res)]


def _transpose_rule(cotangents, *args, op: Op):
    if op.kind == "apply":
        raise _second_order(op, "a transpose")
    comp = op.component
    n_in = len(op.given)
    primals, tangents = args[:n_in], args[n_in:]
    if any(ad.is_undefined_primal(p) for p in primals):
        raise NotImplementedError(
            f"tessera: component '{comp.name}' is not linear in its inputs; only its "
            f"derivatives can be transposed, along their seeds")
    if op.kind == "vjp":
        return [None] * n_in + _vjp_transpose(cotangents, primals, tangents, op)
    if op.kind == "hvp":
        return [None] * n_in + _hvp_transpose(cotangents, primals, tangents, op)
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
