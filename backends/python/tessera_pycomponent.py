# SPDX-License-Identifier: MIT
"""Glue between Tessera's Python component backend and a Tesseract's
``tesseract_api.py`` (the format of tesseract-core), loaded unchanged.

The C bridge embeds CPython, imports this file by path and calls::

    component = load(api_path)        # the folder of api_path goes first on sys.path

A ``Component`` describes the component and runs its endpoints:

* ``name``, ``version``, ``description``: from ``tesseract_config.yaml``
  beside the file when it has them; else the folder's name, "0", and the
  module's docstring (or "").
* ``inputs`` / ``outputs``: one tuple per leaf field,
  ``(name, dtype, dims, differentiable, doc)``. ``name`` is dotted for nested
  pydantic models ("mesh.nodes"), depth-first in field order; ``dtype`` is
  Tessera's dtype code (``DTYPE_CODES``); ``dims`` has one entry per axis, an
  int for a fixed size, None for any size; [] for a scalar. Fields are
  tesseract-core arrays (``Array[(3, None), Float64]``, ``Float32``,
  ``Differentiable[...]``) and plain ``bool`` / ``int`` / ``float``
  (bool, int64, float64 scalars). Anything else (str, Literal, lists and
  dicts, ``Array[..., X]`` of any rank, ``Array[shape, None]`` of any dtype,
  unions other than Optional) makes ``load`` raise TypeError naming the
  field.
* ``endpoints``: "apply" and those of "jacobian", "jvp", "vjp",
  "abstract_eval" whose function the module defines
  (``jacobian_vector_product`` is "jvp", ``vector_jacobian_product`` "vjp").
* ``defaults``: {dotted name: default} of the input fields that have one;
  a NumPy array of the field's dtype where the default converts to one,
  else the raw default (None for ``Optional[X] = None``). The C side makes
  an input with an array default optional with that default, and one whose
  default is None optional without one (TSR_FIELD_OPTIONAL).

Decisions:

* ``Optional[X]`` is described as X. With ``= None`` the input may be left
  out, and the component then gets None for it, as from tesseract-core;
  without a default it is required. An output that is Optional must be
  returned as an X (None is refused like any value that does not fit).
* An input whose default converts to an array of its dtype may be left
  out and then takes that default (the host fills it in). A default that
  does not convert (a factory that needs data, an object) leaves the input
  required. ``abstract_eval`` also uses the defaults of plain
  bool/int/float inputs, whose values it is not given.

Calls. ``inputs`` is a list of NumPy arrays, one per input field in
``inputs`` order, of the field's dtype and a valid shape (the C side checked
both), read-only views of shared memory, or None for an optional input
left out. They are not copied: the
component's ``InputSchema`` is built from them as they are, except that a
0-d array becomes a NumPy scalar for ``Float64``-like fields (what
tesseract-core's validation gives a component) and a Python
bool/int/float for plain ``bool``/``int``/``float`` fields.

* ``apply(inputs) -> [array per output field]``
* ``jvp(inputs, wrt_in, wrt_out, seeds)``: seeds[k] is the tangent of input
  wrt_in[k]; one array per wrt_out entry, shaped and typed like that output.
* ``vjp(inputs, wrt_in, wrt_out, seeds)``: seeds[k] is the cotangent of
  output wrt_out[k]; one array per wrt_in entry, shaped and typed like that
  input.
* ``jacobian(inputs, wrt_in, wrt_out)``: entry o*len(wrt_in)+i is
  d out[wrt_out[o]] / d in[wrt_in[i]], shape (*out_shape, *in_shape), of the
  output's dtype.
* ``abstract_eval([(shape, dtype code) per input]) -> [(shape, dtype code)
  per output]``, through the module's ``abstract_eval`` given the inputs as
  tesseract-core gives them: ``ShapeDType`` in place of every array, the
  default for plain bool/int/float fields.

Every returned array is C-contiguous, of the field's dtype (a same_kind
cast at most) and of the field's rank and fixed sizes; anything else raises
ValueError naming the endpoint and the field. A name missing from a dict the
component returns raises KeyError naming it. Invalid inputs (the component's
own pydantic validators) raise ValueError with their message.

Validation: when no model of the input tree has field validators,
before/wrap/plain model validators, validating metadata (``Field(gt=0)``,
``AfterValidator``) or after-validators that take a ``ValidationInfo``, the
``InputSchema`` is built with ``model_construct`` and its "after" model
validators are run by hand, innermost model first, in definition order, as
pydantic would run them (a few µs instead of tens). Otherwise it is built
with ``model_validate``.

``input_build`` says which ("model_construct" or "model_validate"); ``path``
and ``module`` are the file and the imported module.

``format_error(exc)`` gives "ExcType: message" and the traceback lines of the
component's own files, for an error message.

No HTTP, no JSON, no serialisation on the call path; tesseract-core's
runtime is imported only for its schema types and abstract-eval schemas.
Importing it needs ``tesseract-core[runtime]`` (fastapi, uvicorn, fsspec,
lz4 besides the base package's dependencies); without them it calls
sys.exit(1), which this module and ``load`` turn into ImportError. Calls are
not wrapped in tesseract-core's run context (``mpa.start_run``), so a
component's ``log_metric`` / ``log_parameter`` / ``log_artifact`` fail.
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import sys
import traceback
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
from pydantic import BaseModel, ValidationError

_NEEDS_RUNTIME = ("when tesseract_core.runtime does that its dependencies are missing: "
                  "pip install 'tesseract-core[runtime]'")

try:
    from tesseract_core.runtime.schema_types import (
        PydanticArrayAnnotation,
        ShapeDType,
        is_differentiable,
    )
except SystemExit as _exit:
    # The runtime calls sys.exit(1) when one of its dependencies is missing
    # (fastapi, uvicorn, fsspec, lz4: tesseract-core[runtime]); an embedded
    # interpreter must get an exception, not a request to end the process.
    raise ImportError(f"importing tesseract_core.runtime called sys.exit({_exit.code!r}); "
                      + _NEEDS_RUNTIME) from None

DTYPE_CODES: dict[str, int] = {
    "bool": 1, "int8": 2, "int16": 3, "int32": 4, "int64": 5,
    "uint8": 6, "uint16": 7, "uint32": 8, "uint64": 9,
    "float16": 10, "float32": 11, "float64": 12,
    "complex64": 13, "complex128": 14,
}
DTYPE_NAMES: dict[int, str] = {code: name for name, code in DTYPE_CODES.items()}

# Plain Python annotations Tessera represents as scalars.
_PLAIN_DTYPES = {bool: "bool", int: "int64", float: "float64"}

# Module function -> Tessera endpoint.
_OPTIONAL_ENDPOINTS = {
    "jacobian": "jacobian",
    "jacobian_vector_product": "jvp",
    "vector_jacobian_product": "vjp",
    "abstract_eval": "abstract_eval",
}

_SUPPORTED = (
    "Tessera supports tesseract-core arrays of a fixed rank and dtype "
    "(Array[(3, None), Float64], Float32, Differentiable[...]), bool, int, float, "
    "nested pydantic models, and Optional[...] of these"
)

# Folders of loaded components: format_error keeps traceback lines from these.
_component_dirs: set[str] = set()
_module_serial = itertools.count(1)

# Leaf kinds: how an input array becomes the value the component sees.
_ARRAY, _SCALAR, _PLAIN = 0, 1, 2


class _Leaf(NamedTuple):
    """One field of the flattened schema, with what the calls need."""

    name: str
    path: tuple[str, ...]
    dtype: np.dtype
    code: int
    dims: list[int | None]
    fixed: tuple[tuple[int, int], ...]  # (axis, size) of the fixed axes
    differentiable: bool
    doc: str
    kind: int


class _Node(NamedTuple):
    """A model of the input tree: its class, its fields (a leaf's index or a
    nested _Node), and the after-validators to run by hand."""

    cls: type[BaseModel]
    items: tuple[tuple[str, Any], ...]
    after: tuple[Any, ...]
    keys: tuple[str, ...]  # the names model_validate expects (aliases)


# --------------------------------------------------------------------------
# Loading


def load(api_path: str) -> Component:
    """Import a tesseract_api.py file and describe it as a Component."""
    path = Path(api_path).resolve(strict=True)
    if not path.is_file():
        raise ImportError(f"{path} is not a file")
    folder = str(path.parent)
    # First on sys.path, so the component's own modules win.
    if folder in sys.path:
        sys.path.remove(folder)
    sys.path.insert(0, folder)
    _component_dirs.add(folder + os.sep)
    return Component(path, _import(path))


def _import(path: Path) -> types.ModuleType:
    # Registered in sys.modules (as tesseract-core does) so that pickling the
    # component's functions works; a unique name if another file has the name.
    name = path.stem
    taken = sys.modules.get(name)
    if taken is not None and getattr(taken, "__file__", None) != str(path):
        name = f"{path.stem}__tessera{next(_module_serial)}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except SystemExit as e:
        # tesseract_core.runtime exits when a dependency is missing: never let
        # that end the host process.
        sys.modules.pop(name, None)
        raise ImportError(f"importing {path} called sys.exit({e.code!r}); "
                          + _NEEDS_RUNTIME) from None
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _read_config(folder: Path) -> dict[str, str]:
    """name / version / description of tesseract_config.yaml, as strings."""
    p = folder / "tesseract_config.yaml"
    if not p.is_file():
        return {}
    text = p.read_text(encoding="utf-8")
    try:
        import yaml

        data = yaml.safe_load(text)
    except Exception:  # noqa: BLE001 - no yaml, or a file yaml refuses: read lines
        data = _read_top_keys(text)
    if not isinstance(data, dict):
        return {}
    return {k: str(data[k]).strip() for k in ("name", "version", "description")
            if data.get(k) is not None}


def _read_top_keys(text: str) -> dict[str, str]:
    """Top-level `key: value` lines, and `key: |` / `key: >` blocks."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line or line[0] in " \t#-" or ":" not in line:
            continue
        key, _, value = line.partition(":")
        value = value.strip()
        if value[:1] in ("|", ">"):
            block = []
            while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
                block.append(lines[i].strip())
                i += 1
            out[key.strip()] = ("\n" if value[0] == "|" else " ").join(block).strip()
            continue
        quote = value[:1]
        if quote in ("'", '"'):
            end = value.find(quote, 1)
            value = value[1:end] if end > 0 else value[1:]
        else:
            value = value.split(" #", 1)[0].strip()
        out[key.strip()] = value
    return out


# --------------------------------------------------------------------------
# Schema


def _unwrap(annotation: Any, where: str) -> tuple[Any, bool]:
    """Strip Optional and Annotated; says whether metadata (which may
    validate) was found."""
    has_meta = False
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            has_meta = True
            annotation = annotation.__origin__
        elif origin is typing.Union or origin is types.UnionType:
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                raise TypeError(f"{where} has annotation {_fmt(annotation)}, a union, "
                                f"which Tessera cannot represent; {_SUPPORTED}")
            annotation = args[0]
        else:
            return annotation, has_meta


def _fmt(annotation: Any) -> str:
    if isinstance(annotation, type) and not issubclass(annotation, PydanticArrayAnnotation):
        return annotation.__qualname__
    return (repr(annotation).replace("typing.", "")
            .replace("tesseract_core.runtime.schema_types.", ""))


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _leaf(name: str, t: Any, field: Any, where: str) -> _Leaf:
    """Describe one leaf annotation, or raise TypeError naming it."""
    doc = field.description or ""
    if isinstance(t, type) and t in _PLAIN_DTYPES:
        dtype = np.dtype(_PLAIN_DTYPES[t])
        return _Leaf(name, tuple(name.split(".")), dtype, DTYPE_CODES[dtype.name], [], (),
                      False, doc, _PLAIN)
    if not (isinstance(t, type) and issubclass(t, PydanticArrayAnnotation)):
        raise TypeError(f"{where} has annotation {_fmt(t)}, which Tessera cannot represent; "
                        f"{_SUPPORTED}")
    shape, dtype_name = t.expected_shape, t.expected_dtype
    if shape is Ellipsis:
        raise TypeError(f"{where} has annotation {_fmt(t)}, an array of any rank, which "
                        f"Tessera cannot represent; {_SUPPORTED}")
    if dtype_name is None:
        raise TypeError(f"{where} has annotation {_fmt(t)}, an array of any dtype, which "
                        f"Tessera cannot represent; {_SUPPORTED}")
    dims = list(shape)
    fixed = tuple((i, n) for i, n in enumerate(dims) if n is not None)
    return _Leaf(name, tuple(name.split(".")), np.dtype(dtype_name), DTYPE_CODES[dtype_name],
                 dims, fixed, is_differentiable(t), doc, _SCALAR if not dims else _ARRAY)


def _after_validators(cls: type[BaseModel]) -> tuple[tuple[Any, ...], bool]:
    """The after model validators of cls, and whether cls can be built by
    model_construct plus those (no other validation of its own)."""
    dec = cls.__pydantic_decorators__
    fast = not (dec.validators or dec.root_validators or dec.field_validators)
    after = []
    for d in dec.model_validators.values():
        if d.info.mode != "after" or _takes_info(d.func):
            fast = False
        else:
            after.append(d.func)
    return tuple(after), fast


def _takes_info(func: Any) -> bool:
    """Whether an after model validator wants (self, info) rather than (self)."""
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return True
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
    return len(positional) != 1


class _Schema:
    """A model tree flattened: its leaves, the node tree that rebuilds it,
    whether that tree can be constructed without pydantic validation, and
    the defaults."""

    def __init__(self, model: Any, what: str) -> None:
        if not _is_model(model):
            raise TypeError(f"{what} is {model!r}, not a pydantic model")
        self.leaves: list[_Leaf] = []
        self.defaults: dict[str, object] = {}
        self.fast = True
        self.node = self._walk(model, "", what, ())

    def _walk(self, model: type[BaseModel], prefix: str, what: str,
              seen: tuple[type, ...]) -> _Node:
        if model in seen:
            raise TypeError(f"{what}: {model.__name__} contains itself at {prefix[:-1]!r}; "
                            f"{_SUPPORTED}")
        after, fast = _after_validators(model)
        self.fast = self.fast and fast
        items, keys = [], []
        for fname, field in model.model_fields.items():
            alias = field.validation_alias or field.alias
            keys.append(alias if isinstance(alias, str) else fname)
            name = prefix + fname
            where = f"{what} field {name!r}"
            t, has_meta = _unwrap(field.annotation, where)
            if field.metadata or has_meta:
                self.fast = False  # Field(gt=...), AfterValidator(...): pydantic must validate
            first = len(self.leaves)
            if _is_model(t):
                items.append((fname, self._walk(t, name + ".", what, (*seen, model))))
            else:
                self.leaves.append(_leaf(name, t, field, where))
                items.append((fname, first))
            if not field.is_required():
                self._add_defaults(field, first, name.count("."))
        return _Node(model, tuple(items), after, tuple(keys))

    def _add_defaults(self, field: Any, first: int, depth: int) -> None:
        """Record the default of a field (at path index depth), or of each
        leaf below it when it is a nested model; outer defaults win, as in
        pydantic."""
        try:
            default = field.get_default(call_default_factory=True, validated_data={})
        except Exception:  # noqa: BLE001 - a factory that needs data: no default to show
            return
        for leaf in self.leaves[first:]:
            value = default
            try:
                for key in leaf.path[depth + 1:]:
                    value = getattr(value, key) if isinstance(value, BaseModel) else value[key]
            except (AttributeError, KeyError, TypeError):
                continue
            if value is not None:  # None (Optional) would become NaN
                try:
                    value = np.asarray(value, dtype=leaf.dtype)
                except (TypeError, ValueError):
                    pass
            self.defaults[leaf.name] = value


# --------------------------------------------------------------------------
# The component


class Component:
    """A loaded tesseract_api.py: its schema, and its endpoints over arrays."""

    def __init__(self, path: Path, module: types.ModuleType) -> None:
        self.path = str(path)
        self.module = module
        for attr in ("InputSchema", "OutputSchema", "apply"):
            if not hasattr(module, attr):
                raise TypeError(f"{path} defines no {attr}, which a Tesseract API must")
        config = _read_config(path.parent)
        self.name: str = config.get("name") or path.parent.name
        self.version: str = config.get("version") or "0"
        self.description: str = config.get("description") or (inspect.getdoc(module) or "")

        self._in = _Schema(module.InputSchema, "InputSchema")
        self._out = _Schema(module.OutputSchema, "OutputSchema")
        self.inputs = [(f.name, f.code, list(f.dims), f.differentiable, f.doc)
                       for f in self._in.leaves]
        self.outputs = [(f.name, f.code, list(f.dims), f.differentiable, f.doc)
                        for f in self._out.leaves]
        self.defaults: dict[str, object] = {**self._in.defaults}
        self.endpoints: set[str] = {"apply"} | {
            ep for fn, ep in _OPTIONAL_ENDPOINTS.items() if callable(getattr(module, fn, None))}

        # Per call: which leaves become NumPy scalars / Python scalars.
        self._n_in = len(self._in.leaves)
        self._scalar_idx = tuple(i for i, f in enumerate(self._in.leaves) if f.kind == _SCALAR)
        self._plain_idx = tuple(i for i, f in enumerate(self._in.leaves) if f.kind == _PLAIN)
        self._build = self._construct if self._in.fast else self._validate
        self.input_build: str = "model_construct" if self._in.fast else "model_validate"
        self._diff_in = frozenset(i for i, f in enumerate(self._in.leaves) if f.differentiable)
        self._diff_out = frozenset(i for i, f in enumerate(self._out.leaves) if f.differentiable)
        self._fns = {ep: getattr(module, fn) for fn, ep in _OPTIONAL_ENDPOINTS.items()
                     if ep in self.endpoints}
        self._fns["apply"] = module.apply
        self._abstract = self._abstract_schemas() if "abstract_eval" in self.endpoints else None

    def __repr__(self) -> str:
        return f"<Component {self.name} {self.version} from {self.path}>"

    # -- inputs -------------------------------------------------------------

    def _inputs(self, inputs: list) -> BaseModel:
        """The component's InputSchema object over the given arrays."""
        if len(inputs) != self._n_in:
            raise ValueError(f"{self.name}: {len(inputs)} inputs given, {self._n_in} expected")
        vals = list(inputs)
        for i in self._scalar_idx:
            if vals[i] is not None:  # None: an optional input left out
                vals[i] = vals[i][()]  # NumPy scalar, as tesseract-core's validation gives
        for i in self._plain_idx:
            if vals[i] is not None:
                vals[i] = vals[i].item()  # Python bool / int / float
        return self._build(self._in.node, vals)

    @staticmethod
    def _construct(node: _Node, vals: list) -> BaseModel:
        kw = {k: vals[x] if x.__class__ is int else Component._construct(x, vals)
              for k, x in node.items}
        m = node.cls.model_construct(**kw)
        for check in node.after:
            try:
                r = check(m)
            except (ValueError, AssertionError) as e:  # what pydantic reports as invalid
                raise ValueError(f"invalid inputs: {node.cls.__name__}: {e}") from e
            if r is not None:
                m = r
        return m

    def _validate(self, node: _Node, vals: list) -> BaseModel:
        def tree(n: _Node) -> dict:
            return {key: vals[x] if x.__class__ is int else tree(x)
                    for key, (_, x) in zip(n.keys, n.items)}

        try:
            return node.cls.model_validate(tree(node))
        except ValidationError as e:
            raise ValueError("invalid inputs: " + _validation_message(e)) from e

    # -- outputs ------------------------------------------------------------

    def _pick(self, result: Any, leaves: list[_Leaf], endpoint: str) -> list:
        """The value of each leaf in a model or nested dict the component returned."""
        out, missing = [], []
        for f in leaves:
            v = result
            try:
                for key in f.path:
                    v = v.__dict__[key] if isinstance(v, BaseModel) else v[key]
            except (KeyError, TypeError, IndexError):
                missing.append(f.name)
                continue
            out.append(v)
        if missing:
            raise KeyError(f"{endpoint} of {self.name}: the component's result has no "
                           f"{', '.join(repr(m) for m in missing)} "
                           f"(got {_describe(result)})")
        return out

    def _array(self, x: Any, f: _Leaf, endpoint: str, label: str,
               dtype: np.dtype | None = None, shape: tuple[int | None, ...] | None = None,
               fixed: tuple[tuple[int, int], ...] | None = None) -> np.ndarray:
        """x as a C-contiguous array of dtype (f's by default) and f's rank
        and fixed sizes (or of the given shape pattern)."""
        dtype = f.dtype if dtype is None else dtype
        a = x if x.__class__ is np.ndarray else np.asarray(x)
        if a.dtype != dtype and not np.can_cast(a.dtype, dtype, "same_kind"):
            raise ValueError(f"{endpoint} of {self.name}: {label} is {a.dtype}, which does not "
                             f"cast to {dtype} (same_kind)")
        a = np.asarray(a, dtype=dtype, order="C")
        if shape is None:
            rank, fixed = len(f.dims), f.fixed
        else:
            rank = len(shape)
            fixed = tuple((i, n) for i, n in enumerate(shape) if n is not None)
        if a.ndim != rank or any(a.shape[i] != n for i, n in fixed):
            want = tuple(f.dims) if shape is None else shape
            raise ValueError(f"{endpoint} of {self.name}: {label} has shape {a.shape}, "
                             f"expected {_shape_str(want)}")
        return a

    # -- endpoints ----------------------------------------------------------

    def apply(self, inputs: list) -> list[np.ndarray]:
        result = self._fns["apply"](self._inputs(inputs))
        leaves = self._out.leaves
        values = self._pick(result, leaves, "apply")
        return [self._array(v, f, "apply", f"output {f.name!r}") for v, f in zip(values, leaves)]

    def jvp(self, inputs: list, wrt_in: list[int], wrt_out: list[int],
            seeds: list) -> list[np.ndarray]:
        fn = self._endpoint("jvp")
        ins, outs = self._wrt(wrt_in, wrt_out, "jvp")
        if len(seeds) != len(ins):
            raise ValueError(f"jvp of {self.name}: {len(seeds)} tangents for {len(ins)} inputs")
        tangents = {f.name: self._seed(s, f) for f, s in zip(ins, seeds)}
        result = fn(inputs=self._inputs(inputs), jvp_inputs={f.name for f in ins},
                    jvp_outputs={f.name for f in outs}, tangent_vector=tangents)
        values = self._pick(result, [_flat(f) for f in outs], "jvp")
        return [self._array(v, f, "jvp", f"the tangent of output {f.name!r}")
                for v, f in zip(values, outs)]

    def vjp(self, inputs: list, wrt_in: list[int], wrt_out: list[int],
            seeds: list) -> list[np.ndarray]:
        fn = self._endpoint("vjp")
        ins, outs = self._wrt(wrt_in, wrt_out, "vjp")
        if len(seeds) != len(outs):
            raise ValueError(f"vjp of {self.name}: {len(seeds)} cotangents for {len(outs)} outputs")
        cotangents = {f.name: self._seed(s, f) for f, s in zip(outs, seeds)}
        result = fn(inputs=self._inputs(inputs), vjp_inputs={f.name for f in ins},
                    vjp_outputs={f.name for f in outs}, cotangent_vector=cotangents)
        values = self._pick(result, [_flat(f) for f in ins], "vjp")
        return [self._array(v, f, "vjp", f"the cotangent of input {f.name!r}",
                            shape=np.shape(inputs[i]))
                for v, f, i in zip(values, ins, wrt_in)]

    def jacobian(self, inputs: list, wrt_in: list[int], wrt_out: list[int]) -> list[np.ndarray]:
        fn = self._endpoint("jacobian")
        ins, outs = self._wrt(wrt_in, wrt_out, "jacobian")
        result = fn(inputs=self._inputs(inputs), jac_inputs={f.name for f in ins},
                    jac_outputs={f.name for f in outs})
        rows = self._pick(result, [_flat(f) for f in outs], "jacobian")
        arrays = []
        for row, fo in zip(rows, outs):
            blocks = self._pick(row, [_flat(f) for f in ins], f"jacobian row {fo.name!r}")
            for block, fi, i in zip(blocks, ins, wrt_in):
                arrays.append(self._array(
                    block, fo, "jacobian", f"d {fo.name} / d {fi.name}",
                    shape=(*fo.dims, *np.shape(inputs[i]))))
        return arrays

    def abstract_eval(self, shapes: list) -> list[tuple[tuple[int, ...], int]]:
        fn = self._endpoint("abstract_eval")
        if len(shapes) != self._n_in:
            raise ValueError(f"abstract_eval of {self.name}: {len(shapes)} inputs given, "
                             f"{self._n_in} expected")
        in_model, out_model = self._abstract
        tree: dict = {}
        for f, (shape, code) in zip(self._in.leaves, shapes):
            value: Any = None  # an optional input left out (code 0) stays None
            if code != 0 and f.kind == _PLAIN:
                if f.name not in self._in.defaults:
                    raise ValueError(f"abstract_eval of {self.name}: input {f.name!r} is a plain "
                                     f"{f.dtype} without a default, and abstract_eval is given "
                                     "only shapes and dtypes")
                value = self._in.defaults[f.name]
                value = value.item() if isinstance(value, np.ndarray) else value
            elif code != 0:
                value = ShapeDType(shape=tuple(shape), dtype=DTYPE_NAMES[code])
            _set(tree, f.path, value)
        try:
            abstract_inputs = in_model.model_validate({"inputs": tree}).inputs
        except ValidationError as e:
            raise ValueError("invalid abstract inputs: " + _validation_message(e)) from e
        result = fn(abstract_inputs)
        try:
            result = out_model.model_validate(result).root
        except ValidationError as e:
            raise ValueError(f"abstract_eval of {self.name}: the result does not match "
                             "OutputSchema: " + _validation_message(e)) from e
        out = []
        for v, f in zip(self._pick(result, self._out.leaves, "abstract_eval"), self._out.leaves):
            if f.kind == _PLAIN:
                out.append(((), f.code))
                continue
            shape = tuple(int(n) for n in v.shape)
            if len(shape) != len(f.dims) or any(shape[i] != n for i, n in f.fixed):
                raise ValueError(f"abstract_eval of {self.name}: output {f.name!r} has shape "
                                 f"{shape}, expected {_shape_str(tuple(f.dims))}")
            out.append((shape, DTYPE_CODES[str(v.dtype)]))
        return out

    # -- helpers ------------------------------------------------------------

    def _endpoint(self, endpoint: str) -> Any:
        fn = self._fns.get(endpoint)
        if fn is None:
            raise NotImplementedError(f"{self.name} has no {endpoint} endpoint "
                                      f"(it has {', '.join(sorted(self.endpoints))})")
        return fn

    def _wrt(self, wrt_in: list[int], wrt_out: list[int],
             endpoint: str) -> tuple[list[_Leaf], list[_Leaf]]:
        """The differentiable input and output fields the indices name."""
        picked = []
        for wrt, leaves, diff, what in ((wrt_in, self._in.leaves, self._diff_in, "input"),
                                        (wrt_out, self._out.leaves, self._diff_out, "output")):
            if not wrt:
                raise ValueError(f"{endpoint} of {self.name}: no {what} to differentiate")
            if len(set(wrt)) != len(wrt):
                raise ValueError(f"{endpoint} of {self.name}: an {what} is named twice in {wrt}")
            for i in wrt:
                if i not in diff:
                    what_i = (f"{what} {leaves[i].name!r} is not differentiable"
                              if 0 <= i < len(leaves) else f"no {what} {i}")
                    raise ValueError(f"{endpoint} of {self.name}: {what_i}")
            picked.append([leaves[i] for i in wrt])
        return picked[0], picked[1]

    @staticmethod
    def _seed(s: Any, f: _Leaf) -> Any:
        """A tangent or cotangent as tesseract-core validates it: the field's
        dtype, a NumPy scalar for a 0-d one."""
        if s.dtype != f.dtype:
            s = s.astype(f.dtype, casting="same_kind")
        return s[()] if s.ndim == 0 else s

    def _abstract_schemas(self) -> tuple[type[BaseModel], type[BaseModel]]:
        # tesseract-core's own abstract schemas: ShapeDType in place of arrays,
        # with the component's validators, as its abstract_eval endpoint has.
        from tesseract_core.runtime.schema_generation import create_abstract_eval_schema

        return create_abstract_eval_schema(self.module.InputSchema, self.module.OutputSchema)


def _flat(f: _Leaf) -> _Leaf:
    """The leaf keyed by its whole dotted name (gradient dicts are flat)."""
    return f._replace(path=(f.name,))


def _set(tree: dict, path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value


def _shape_str(shape: tuple) -> str:
    """(3, any) for (3, None); (any,) for (None,)."""
    dims = ", ".join("any" if n is None else str(n) for n in shape)
    return f"({dims},)" if len(shape) == 1 else f"({dims})"


def _describe(result: Any) -> str:
    if isinstance(result, BaseModel):
        return f"{type(result).__name__} with {', '.join(type(result).model_fields) or 'no fields'}"
    if isinstance(result, Mapping):
        return f"keys {', '.join(repr(k) for k in result) or 'none'}"
    return type(result).__name__


def _validation_message(e: ValidationError) -> str:
    """One line per error: where, and pydantic's message (without the input's repr)."""
    parts = []
    for err in e.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in err["loc"])
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts) or str(e)


# --------------------------------------------------------------------------
# Errors


def format_error(exc: BaseException) -> str:
    """'ExcType: message', the causes' messages not already in it, then the
    traceback lines of the component's own files, innermost last."""
    chain = []
    e: BaseException | None = exc
    while e is not None and e not in chain:
        chain.append(e)
        e = e.__cause__ if e.__cause__ is not None else (
            None if e.__suppress_context__ else e.__context__)
    head = _one_line(exc)
    lines = [head]
    for cause in chain[1:]:
        if _message(cause) and _message(cause) not in head:
            lines.append(f"  caused by {_one_line(cause)}")
    seen = set()
    for e in reversed(chain):
        for fr in traceback.extract_tb(e.__traceback__):
            folder = next((d for d in _component_dirs if fr.filename.startswith(d)), None)
            key = (fr.filename, fr.lineno, fr.name)
            if folder is None or key in seen:
                continue
            seen.add(key)
            where = f"{fr.filename[len(folder):]}:{fr.lineno} in {fr.name}"
            lines.append(f"  {where}: {fr.line.strip()}" if fr.line else f"  {where}")
    return "\n".join(lines)


def _message(exc: BaseException) -> str:
    # A KeyError's str() is the repr of its key: show our sentences plainly.
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _one_line(exc: BaseException) -> str:
    msg = _message(exc)
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
