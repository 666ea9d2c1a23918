# SPDX-License-Identifier: MIT
"""Glue between Tessera's Python component backend and a Tesseract's
``tesseract_api.py`` (the format of tesseract-core), loaded unchanged.

The C bridge embeds CPython, imports this file by path and calls::

    component = load(api_path)        # the folder of api_path goes first on sys.path

A ``Component`` describes the component and runs its endpoints:

* ``name``, ``version``, ``description``: from ``tesseract_config.yaml``
  beside the file when it has them; else the folder's name, "0", and the
  module's docstring (or "").
* ``inputs`` / ``outputs``: one tuple per leaf field, ``(name, dtype,
  dims, differentiable, doc, kind, choices)``. ``name`` is dotted for nested
  pydantic models outside containers ("mesh.nodes"), depth-first in field
  order; ``kind`` is tsr_kind (KIND_ARRAY, KIND_TEXT, KIND_JSON).
  Arrays (``Array[(3, None), Float64]``, ``Float32``, ``Differentiable[...]``,
  Optional of these): ``dtype`` Tessera's code (``DTYPE_CODES``), ``dims`` an
  int per fixed axis, None for any size, [] for a scalar, None for
  ``Array[..., X]`` (TSR_RANK_ANY). ``str`` is TEXT; ``Literal`` of strs and
  str ``Enum`` are TEXT with ``choices`` (the values). Anything else pydantic
  validates on its own (plain int/float/bool, Optional of a non-array, lists,
  dicts, tuples, unions, Any, models inside containers, ``Array[shape,
  None]``) is JSON, differentiable when a Differentiable array is inside.
  TEXT/JSON fields are described as uint8 with dims [None]. A field pydantic
  cannot build an adapter for makes ``load`` raise TypeError naming it.
* ``endpoints``: "apply" and those of "jacobian", "jvp", "vjp", "hvp",
  "abstract_eval" whose function the module defines
  (``jacobian_vector_product`` is "jvp", ``vector_jacobian_product`` "vjp",
  ``hvp`` "hvp").
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
* ``hvp(inputs, wrt_in, wrt_out, seeds)``: seeds[o] is the cotangent of
  output wrt_out[o], then seeds[len(wrt_out) + k] the tangent of input
  wrt_in[k]; through the module's ``hvp(inputs, hvp_inputs, hvp_outputs,
  cotangent_vector, tangent_vector)``, one array per wrt_in entry, shaped
  and typed like that input (the derivative of the vjp along the tangent).
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

TEXT and JSON values cross as bytes: an input is a uint8 view of UTF-8
text (TEXT) or JSON text (JSON; arrays inside as encoded array objects),
decoded and validated by pydantic (the field's own adapter when the model
is built with model_construct); a result is ``bytes``: a str's UTF-8 (an
Enum's value), or the JSON that tesseract-core writes for the value
(``dump_python(mode="json")`` with base64 arrays, then orjson). Defaults of
TEXT/JSON inputs are those bytes. Invalid inputs raise ``InvalidInput``
(a ValueError) whose ``loc`` is the first error's Tesseract location and
``type`` its pydantic error type; ``format_error`` ends its text with the
line ``invalid: <type> inputs.a.b`` (tsr_ctx_invalid's convention), which
the host strips and turns into TSR_E_VALUE, tsr_call_errloc and
tsr_call_errtype: the plugin ABI carries a message only.
jvp/vjp/jacobian take ``in_paths`` / ``out_paths`` (tsr_args.wrt_in_paths,
wrt_out_paths): a path inside a differentiable JSON input ("weights.{a}",
"layers.[0].k") names the array found there; a missing key, a non-array
leaf or a path outside the indexed field raise InvalidInput with loc
("vjp_inputs", k). Arrays stay on the fast path: no JSON for them.
Importing it needs ``tesseract-core[runtime]`` (fastapi, uvicorn, fsspec,
lz4 besides the base package's dependencies); without them it calls
sys.exit(1), which this module and ``load`` turn into ImportError. Every call
runs in tesseract-runtime's run context (see _run_context): log_metric,
log_parameter, log_artifact write <TESSERACT_OUTPUT_PATH or ".">/logs/ as
tesseract-runtime does (or to MLflow when TESSERACT_MLFLOW_TRACKING_URI is
set), in-process and in a worker alike.
"""

from __future__ import annotations

import enum
import importlib.util
import inspect
import json
import re
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
from pydantic import BaseModel, TypeAdapter, ValidationError

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

# Module function -> Tessera endpoint.
_OPTIONAL_ENDPOINTS = {
    "jacobian": "jacobian",
    "jacobian_vector_product": "jvp",
    "vector_jacobian_product": "vjp",
    "hvp": "hvp",
    "abstract_eval": "abstract_eval",
}

_SUPPORTED = "Tessera supports the annotations pydantic validates on their own"

# Folders of loaded components: format_error keeps traceback lines from these.
_component_dirs: set[str] = set()
_module_serial = itertools.count(1)

# Leaf kinds: how an input array becomes the value the component sees.
_ARRAY, _SCALAR, _TEXT, _JSON = 0, 1, 2, 3

# Field kinds of the plugin ABI (tsr_kind in tessera/plugin.h).
KIND_ARRAY, KIND_TEXT, KIND_JSON = 0, 1, 2
_ABI_KIND = {_ARRAY: KIND_ARRAY, _SCALAR: KIND_ARRAY, _TEXT: KIND_TEXT, _JSON: KIND_JSON}


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
    kind: int  # _ARRAY, _SCALAR, _TEXT, _JSON
    choices: tuple[str, ...]  # _TEXT: the allowed values; () for any
    adapter: Any  # _TEXT, _JSON: the pydantic TypeAdapter of the field


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


def _strip(annotation: Any) -> tuple[Any, bool]:
    """Strip Annotated; says whether metadata (which may validate) was found."""
    has_meta = False
    while typing.get_origin(annotation) is typing.Annotated:
        has_meta = True
        annotation = annotation.__origin__
    return annotation, has_meta


def _optional_of(annotation: Any) -> Any:
    """X of Optional[X] (X | None), else None."""
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            return _strip(args[0])[0]
    return None


def _fmt(annotation: Any) -> str:
    if isinstance(annotation, type) and not issubclass(annotation, PydanticArrayAnnotation):
        return annotation.__qualname__
    return (repr(annotation).replace("typing.", "")
            .replace("tesseract_core.runtime.schema_types.", ""))


def _is_model(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, BaseModel)


def _is_array(t: Any) -> bool:
    return isinstance(t, type) and issubclass(t, PydanticArrayAnnotation)


def _text_choices(t: Any) -> tuple[str, ...] | None:
    """() for str, the values of a Literal of strs or of a str Enum; None
    for anything else."""
    if t is str:
        return ()
    if typing.get_origin(t) is typing.Literal:
        values = typing.get_args(t)
        return values if values and all(isinstance(v, str) for v in values) else None
    if isinstance(t, type) and issubclass(t, enum.Enum):
        values = tuple(m.value for m in t)
        return values if values and all(isinstance(v, str) for v in values) else None
    return None


def _holds_differentiable(t: Any, seen: tuple = ()) -> bool:
    """Whether a differentiable array is anywhere inside annotation t."""
    t = _strip(t)[0]
    if _is_array(t):
        return is_differentiable(t)
    if _is_model(t):
        if t in seen:
            return False
        return any(_holds_differentiable(f.annotation, (*seen, t))
                   for f in t.model_fields.values())
    return any(_holds_differentiable(a, seen) for a in typing.get_args(t)
               if not isinstance(a, (str, int, float, bool, bytes, enum.Enum)) and a is not ...)


def _leaf(name: str, field: Any, where: str, side: str) -> _Leaf:
    """Describe one leaf field (not a nested model outside containers)."""
    doc = field.description or ""
    path = tuple(name.split("."))
    t = _strip(field.annotation)[0]
    arr = t if _is_array(t) else _optional_of(t)
    if _is_array(arr) and arr.expected_dtype is not None:
        shape, dtype_name = arr.expected_shape, arr.expected_dtype
        dims = None if shape is Ellipsis else list(shape)
        fixed = () if dims is None else tuple((i, n) for i, n in enumerate(dims) if n is not None)
        kind = _SCALAR if dims == [] else _ARRAY
        return _Leaf(name, path, np.dtype(dtype_name), DTYPE_CODES[dtype_name], dims, fixed,
                     is_differentiable(arr), doc, kind, (), None)
    choices = _text_choices(t)
    # An input's adapter carries the field's own constraints (Field(ge=0)).
    annotation = typing.Annotated[field.annotation, field] if side == "input" else field.annotation
    try:
        adapter = TypeAdapter(annotation)
    except Exception as e:  # noqa: BLE001 - pydantic refuses the annotation on its own
        raise TypeError(f"{where} has annotation {_fmt(field.annotation)}, which pydantic "
                        f"cannot validate alone: {str(e).splitlines()[0]}") from None
    kind, code = (_TEXT, KIND_TEXT) if choices is not None else (_JSON, KIND_JSON)
    diff = kind == _JSON and _holds_differentiable(field.annotation)
    return _Leaf(name, path, np.dtype("uint8"), DTYPE_CODES["uint8"], [None], (), diff, doc,
                 kind, choices or (), adapter)


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
        self.side = "input" if what == "InputSchema" else "output"
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
            t, has_meta = _strip(field.annotation)
            if field.metadata or has_meta:
                self.fast = False  # Field(gt=...), AfterValidator(...): pydantic must validate
            first = len(self.leaves)
            if _is_model(t):
                items.append((fname, self._walk(t, name + ".", what, (*seen, model))))
            else:
                self.leaves.append(_leaf(name, field, where, self.side))
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
            if leaf.kind in (_TEXT, _JSON):
                try:
                    value = _encode(leaf, value)
                except (TypeError, ValueError):
                    continue  # a default that does not serialise: the input stays required
            elif value is not None:  # None (Optional) would become NaN
                try:
                    value = np.asarray(value, dtype=leaf.dtype)
                except (TypeError, ValueError):
                    pass
            self.defaults[leaf.name] = value


# --------------------------------------------------------------------------
# TEXT and JSON values

# How tesseract-core writes arrays inside a JSON response body.
_DUMP_CONTEXT = {"array_encoding": "base64", "compression": None, "device_transport": None}

try:
    import orjson as _orjson

    def _json_bytes(obj: Any) -> bytes:
        return _orjson.dumps(obj)
except ImportError:  # tesseract-core[runtime] has it; the json module writes the same values
    def _json_bytes(obj: Any) -> bytes:
        return json.dumps(obj, separators=(",", ":"), ensure_ascii=False,
                          allow_nan=False).encode()


def _encode(leaf: _Leaf, value: Any) -> bytes:
    """A TEXT or JSON value as the bytes that cross the ABI: a str's UTF-8,
    or the JSON text tesseract-core would write for it (validated against
    the field first, arrays base64-encoded). ValueError if it does not fit."""
    try:
        value = leaf.adapter.validate_python(value)
        if leaf.kind == _TEXT:
            text = value.value if isinstance(value, enum.Enum) else value
            if not isinstance(text, str):
                raise ValueError(f"{type(value).__name__} is not text")
            return text.encode("utf-8")
        return _json_bytes(leaf.adapter.dump_python(value, mode="json", context=_DUMP_CONTEXT))
    except ValidationError as e:
        raise ValueError(_validation_message(e)) from e


def _decode(leaf: _Leaf, raw: Any) -> Any:
    """A TEXT input's str, or a JSON input's Python value (not yet validated)."""
    data = raw.tobytes() if isinstance(raw, np.ndarray) else bytes(raw)
    try:
        text = data.decode("utf-8")
        return text if leaf.kind == _TEXT else json.loads(text)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        what, kind = ("UTF-8 text", "string_unicode") if leaf.kind == _TEXT else (
            "JSON", "json_invalid")
        raise InvalidInput(_located(("inputs", *leaf.path), f"not {what}: {e}"),
                           ("inputs", *leaf.path), kind) from None


class InvalidInput(ValueError):
    """Inputs the component's schema refuses: ``loc`` is where (Tesseract's
    loc, its section first: ("inputs", "mesh", "n_points")), ``type`` what
    (pydantic's error type: "literal_error", "greater_than_equal",
    "missing"). ``format_error`` ends its text with the line
    "invalid: <type> <loc>" that tsr_ctx_invalid writes: the plugin ABI
    carries a message only, and that line is how the host learns both."""

    def __init__(self, message: str, loc: tuple, error_type: str = "value_error") -> None:
        self.loc = tuple(loc)
        self.type = error_type if re.fullmatch(r"[a-z0-9_]{1,63}", error_type or "") else (
            "value_error")
        super().__init__(message)

    @property
    def loc_text(self) -> str:
        return ".".join(str(p) for p in self.loc)


def _invalid(e: ValidationError, prefix: tuple) -> InvalidInput:
    """The first error as "input 'a.b': <pydantic's msg>" (the host's
    wording, whose lead a 422 body drops, leaving pydantic's msg as
    tesseract-core's has it), the others on lines of their own."""
    errors = e.errors(include_url=False, include_input=False)
    if not errors:
        return InvalidInput(f"invalid inputs: {e}", prefix)
    loc = tuple(errors[0]["loc"])
    lines = [_located((*prefix, *loc), errors[0]["msg"])]
    lines += [f"  and {_located((*prefix, *err['loc']), err['msg'])}" for err in errors[1:4]]
    return InvalidInput("\n".join(lines), (*prefix, *loc), errors[0]["type"])


def _located(loc: tuple, msg: str) -> str:
    """"input 'mesh.n_points': msg" for loc ("inputs", "mesh", "n_points")."""
    where = ".".join(str(p) for p in loc[1:])
    return f"input '{where}': {msg}" if where else msg


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
        self.inputs = [_field_tuple(f) for f in self._in.leaves]
        self.outputs = [_field_tuple(f) for f in self._out.leaves]
        self.defaults: dict[str, object] = {**self._in.defaults}
        self.endpoints: set[str] = {"apply"} | {
            ep for fn, ep in _OPTIONAL_ENDPOINTS.items() if callable(getattr(module, fn, None))}

        # Per call: which leaves become NumPy scalars, text or JSON values.
        self._n_in = len(self._in.leaves)
        self._scalar_idx = tuple(i for i, f in enumerate(self._in.leaves) if f.kind == _SCALAR)
        self._text_idx = tuple(i for i, f in enumerate(self._in.leaves)
                               if f.kind in (_TEXT, _JSON))
        self._build = self._construct if self._in.fast else self._validate
        self.input_build: str = "model_construct" if self._in.fast else "model_validate"
        self._diff_in = frozenset(i for i, f in enumerate(self._in.leaves) if f.differentiable)
        self._diff_out = frozenset(i for i, f in enumerate(self._out.leaves) if f.differentiable)
        self._fns = {ep: getattr(module, fn) for fn, ep in _OPTIONAL_ENDPOINTS.items()
                     if ep in self.endpoints}
        self._fns["apply"] = module.apply
        self._abstract = self._abstract_schemas() if "abstract_eval" in self.endpoints else None
        self.logs_runs: bool = _uses_run_context(module)

    def __repr__(self) -> str:
        return f"<Component {self.name} {self.version} from {self.path}>"

    def _call(self, endpoint: str, *args: Any, **kwargs: Any) -> Any:
        """The module's function, inside a run context as tesseract-runtime's."""
        with _run_context(eager=self.logs_runs):
            return self._fns[endpoint](*args, **kwargs)

    # -- inputs -------------------------------------------------------------

    def _inputs(self, inputs: list) -> BaseModel:
        """The component's InputSchema object over the given arrays."""
        if len(inputs) != self._n_in:
            raise ValueError(f"{self.name}: {len(inputs)} inputs given, {self._n_in} expected")
        vals = list(inputs)
        leaves = self._in.leaves
        for i in self._scalar_idx:
            if vals[i] is not None:  # None: an optional input left out
                vals[i] = vals[i][()]  # NumPy scalar, as tesseract-core's validation gives
        for i in self._text_idx:
            f = leaves[i]
            value = _decode(f, vals[i])
            if self._in.fast:  # model_construct validates nothing: the leaf alone
                try:
                    value = f.adapter.validate_python(value)
                except ValidationError as e:
                    raise _invalid(e, ("inputs", *f.path)) from None
            vals[i] = value
        return self._build(self._in.node, vals)

    @staticmethod
    def _construct(node: _Node, vals: list, at: tuple = ("inputs",)) -> BaseModel:
        kw = {k: vals[x] if x.__class__ is int else Component._construct(x, vals, (*at, k))
              for k, x in node.items}
        m = node.cls.model_construct(**kw)
        for check in node.after:
            try:
                r = check(m)
            except (ValueError, AssertionError) as e:  # what pydantic reports as invalid
                # pydantic's wording and type for a model validator's refusal
                kind, lead = (("assertion_error", "Assertion failed, ")
                              if isinstance(e, AssertionError) else ("value_error", "Value error, "))
                where = ".".join(str(p) for p in at[1:]) or node.cls.__name__
                raise InvalidInput(f"input '{where}': {lead}{e}", at, kind) from e
            if r is not None:
                m = r
        return m

    @staticmethod
    def _tree(n: _Node, vals: list) -> dict:
        # A method, not a recursive closure: that closure would be a cycle
        # holding the inputs' views until the garbage collector runs, and
        # the bridge would take them as kept by the component.
        return {key: vals[x] if x.__class__ is int else Component._tree(x, vals)
                for key, (_, x) in zip(n.keys, n.items)}

    def _validate(self, node: _Node, vals: list) -> BaseModel:
        try:
            return node.cls.model_validate(self._tree(node, vals))
        except ValidationError as e:
            raise _invalid(e, ("inputs",)) from None

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
               dtype: np.dtype | None = None, shape: tuple[int | None, ...] | None = None
               ) -> np.ndarray:
        """x as a C-contiguous array of dtype (f's by default) and f's rank
        and fixed sizes (or of the given shape pattern; None: any)."""
        dtype = f.dtype if dtype is None else dtype
        a = x if x.__class__ is np.ndarray else np.asarray(x)
        if a.dtype != dtype and not np.can_cast(a.dtype, dtype, "same_kind"):
            raise ValueError(f"{endpoint} of {self.name}: {label} is {a.dtype}, which does not "
                             f"cast to {dtype} (same_kind)")
        a = np.asarray(a, dtype=dtype, order="C")
        want = (None if f.dims is None else tuple(f.dims)) if shape is None else shape
        if want is None:
            return a
        fixed = f.fixed if shape is None else tuple(
            (i, n) for i, n in enumerate(shape) if n is not None)
        if a.ndim != len(want) or any(a.shape[i] != n for i, n in fixed):
            raise ValueError(f"{endpoint} of {self.name}: {label} has shape {a.shape}, "
                             f"expected {_shape_str(want)}")
        return a

    def _output(self, v: Any, f: _Leaf, endpoint: str) -> Any:
        if f.kind in (_TEXT, _JSON):
            try:
                return _encode(f, v)
            except ValueError as e:
                raise ValueError(f"{endpoint} of {self.name}: output {f.name!r} does not match "
                                 f"OutputSchema: {e}") from e
        return self._array(v, f, endpoint, f"output {f.name!r}")

    # -- endpoints ----------------------------------------------------------

    def apply(self, inputs: list) -> list:
        result = self._call("apply", self._inputs(inputs))
        leaves = self._out.leaves
        values = self._pick(result, leaves, "apply")
        return [self._output(v, f, "apply") for v, f in zip(values, leaves)]

    def jvp(self, inputs: list, wrt_in: list[int], wrt_out: list[int], seeds: list,
            in_paths: list | None = None, out_paths: list | None = None) -> list[np.ndarray]:
        self._endpoint("jvp")
        model = self._inputs(inputs)
        ins, outs = self._wrt(model, wrt_in, wrt_out, in_paths, out_paths, "jvp")
        if len(seeds) != len(ins):
            raise ValueError(f"jvp of {self.name}: {len(seeds)} tangents for {len(ins)} inputs")
        tangents = {w.path: self._seed(s, w, "tangent_vector") for w, s in zip(ins, seeds)}
        result = self._call("jvp", inputs=model, jvp_inputs={w.path for w in ins},
                            jvp_outputs={w.path for w in outs}, tangent_vector=tangents)
        values = self._pick(result, [w.flat for w in outs], "jvp")
        return [self._array(v, w.leaf, "jvp", f"the tangent of output {w.path!r}",
                            dtype=w.dtype, shape=w.shape)
                for v, w in zip(values, outs)]

    def vjp(self, inputs: list, wrt_in: list[int], wrt_out: list[int], seeds: list,
            in_paths: list | None = None, out_paths: list | None = None) -> list[np.ndarray]:
        self._endpoint("vjp")
        model = self._inputs(inputs)
        ins, outs = self._wrt(model, wrt_in, wrt_out, in_paths, out_paths, "vjp")
        if len(seeds) != len(outs):
            raise ValueError(f"vjp of {self.name}: {len(seeds)} cotangents for {len(outs)} outputs")
        cotangents = {w.path: self._seed(s, w, "cotangent_vector") for w, s in zip(outs, seeds)}
        result = self._call("vjp", inputs=model, vjp_inputs={w.path for w in ins},
                            vjp_outputs={w.path for w in outs}, cotangent_vector=cotangents)
        values = self._pick(result, [w.flat for w in ins], "vjp")
        return [self._array(v, w.leaf, "vjp", f"the cotangent of input {w.path!r}",
                            dtype=w.dtype, shape=w.shape)
                for v, w in zip(values, ins)]

    def hvp(self, inputs: list, wrt_in: list[int], wrt_out: list[int], seeds: list,
            in_paths: list | None = None, out_paths: list | None = None) -> list[np.ndarray]:
        self._endpoint("hvp")
        model = self._inputs(inputs)
        ins, outs = self._wrt(model, wrt_in, wrt_out, in_paths, out_paths, "hvp")
        if len(seeds) != len(outs) + len(ins):
            raise ValueError(f"hvp of {self.name}: {len(seeds)} seeds for {len(outs)} outputs "
                             f"and {len(ins)} inputs")
        cotangents = {w.path: self._seed(s, w, "cotangent_vector")
                      for w, s in zip(outs, seeds[:len(outs)])}
        tangents = {w.path: self._seed(s, w, "tangent_vector")
                    for w, s in zip(ins, seeds[len(outs):])}
        result = self._call("hvp", inputs=model, hvp_inputs={w.path for w in ins},
                            hvp_outputs={w.path for w in outs}, cotangent_vector=cotangents,
                            tangent_vector=tangents)
        values = self._pick(result, [w.flat for w in ins], "hvp")
        return [self._array(v, w.leaf, "hvp", f"the hvp of input {w.path!r}",
                            dtype=w.dtype, shape=w.shape)
                for v, w in zip(values, ins)]

    def jacobian(self, inputs: list, wrt_in: list[int], wrt_out: list[int],
                 in_paths: list | None = None, out_paths: list | None = None) -> list[np.ndarray]:
        self._endpoint("jacobian")
        model = self._inputs(inputs)
        ins, outs = self._wrt(model, wrt_in, wrt_out, in_paths, out_paths, "jacobian")
        result = self._call("jacobian", inputs=model, jac_inputs={w.path for w in ins},
                            jac_outputs={w.path for w in outs})
        rows = self._pick(result, [w.flat for w in outs], "jacobian")
        arrays = []
        for row, wo in zip(rows, outs):
            blocks = self._pick(row, [w.flat for w in ins], f"jacobian row {wo.path!r}")
            for block, wi in zip(blocks, ins):
                shape = None if wo.shape is None or wi.shape is None else (*wo.shape, *wi.shape)
                arrays.append(self._array(block, wo.leaf, "jacobian",
                                          f"d {wo.path} / d {wi.path}", dtype=wo.dtype,
                                          shape=shape))
        return arrays

    def abstract_eval(self, shapes: list) -> list[tuple[tuple[int, ...], int]]:
        fn = self._endpoint("abstract_eval")
        if len(shapes) != self._n_in:
            raise ValueError(f"abstract_eval of {self.name}: {len(shapes)} inputs given, "
                             f"{self._n_in} expected")
        in_model, out_model = self._abstract
        tree: dict = {}
        for f, entry in zip(self._in.leaves, shapes):
            shape, code = entry[0], entry[1]
            value: Any = None  # an optional input left out (code 0) stays None
            if f.kind in (_TEXT, _JSON):
                raw = entry[2] if len(entry) > 2 else None
                if raw is None and f.name in self._in.defaults:
                    raw = self._in.defaults[f.name]
                if raw is None:
                    raise ValueError(f"abstract_eval of {self.name}: input {f.name!r} is "
                                     "text or JSON and was given no value")
                value = _decode(f, raw)
            elif code != 0:
                value = ShapeDType(shape=tuple(shape), dtype=DTYPE_NAMES[code])
            _set(tree, f.path, value)
        try:
            abstract_inputs = in_model.model_validate({"inputs": tree}).inputs
        except ValidationError as e:
            errors = e.errors(include_url=False, include_input=False)
            loc = tuple(errors[0]["loc"])[1:] if errors else ()
            raise InvalidInput("invalid abstract inputs: " + _validation_message(e),
                               ("inputs", *loc),
                               errors[0]["type"] if errors else "value_error") from e
        with _run_context(eager=self.logs_runs):
            result = fn(abstract_inputs)
        try:
            result = out_model.model_validate(result).root
        except ValidationError as e:
            raise ValueError(f"abstract_eval of {self.name}: the result does not match "
                             "OutputSchema: " + _validation_message(e)) from e
        out = []
        for v, f in zip(self._pick(result, self._out.leaves, "abstract_eval"), self._out.leaves):
            if f.kind in (_TEXT, _JSON):
                out.append(((0,), f.code))  # its length depends on values
                continue
            shape = tuple(int(n) for n in v.shape)
            if f.dims is not None and (len(shape) != len(f.dims) or
                                       any(shape[i] != n for i, n in f.fixed)):
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

    def _wrt(self, model: BaseModel, wrt_in: list[int], wrt_out: list[int],
             in_paths: list | None, out_paths: list | None,
             endpoint: str) -> tuple[list[_Wrt], list[_Wrt]]:
        """The differentiable inputs and outputs the indices (and paths) name."""
        prefix = {"jvp": "jvp", "vjp": "vjp", "hvp": "hvp", "jacobian": "jac"}[endpoint]
        picked = []
        for wrt, paths, leaves, diff, what in (
                (wrt_in, in_paths, self._in.leaves, self._diff_in, "input"),
                (wrt_out, out_paths, self._out.leaves, self._diff_out, "output")):
            section = f"{prefix}_{what}s"
            if not wrt:
                raise ValueError(f"{endpoint} of {self.name}: no {what} to differentiate")
            entries = []
            for k, i in enumerate(wrt):
                path = paths[k] if paths is not None and paths[k] else None
                if not 0 <= i < len(leaves):
                    raise InvalidInput(f"{endpoint} of {self.name}: no {what} {i}",
                                       (section, k))
                f = leaves[i]
                path = path or f.name
                if i not in diff or (path != f.name and f.kind != _JSON):
                    raise InvalidInput(f"{endpoint} of {self.name}: {what} {path!r} is not "
                                       "differentiable", (section, k))
                if path != f.name and not path.startswith(f.name + "."):
                    raise InvalidInput(f"{endpoint} of {self.name}: {what} path {path!r} is "
                                       f"not inside field {f.name!r}", (section, k))
                entries.append(self._wrt_entry(model, f, path, what, endpoint, (section, k)))
            if len({w.path for w in entries}) != len(entries):
                raise ValueError(f"{endpoint} of {self.name}: an {what} is named twice in "
                                 f"{[w.path for w in entries]}")
            picked.append(entries)
        return picked[0], picked[1]

    def _wrt_entry(self, model: BaseModel, f: _Leaf, path: str, what: str, endpoint: str,
                   loc: tuple) -> _Wrt:
        """One entry: an array field as its schema has it; a path inside a
        JSON input as the array found there (an output's: any shape)."""
        if path == f.name and f.kind != _JSON:
            shape = None if f.dims is None else tuple(f.dims)
            if what == "input":  # the given input's own shape
                v = _resolve(model, f.path)
                shape = np.shape(v) if v is not None else shape
            return _Wrt(path, f, f.dtype, shape, f._replace(path=(path,)))
        if what == "output":
            return _Wrt(path, f, np.dtype("float64"), None, f._replace(path=(path,)))
        try:
            v = _resolve(model, _split_path(path))
        except LookupError:
            raise InvalidInput(f"{endpoint} of {self.name}: input {path!r} is not in the given "
                               "inputs", loc) from None
        if not isinstance(v, np.ndarray) and not isinstance(v, np.generic):
            raise InvalidInput(f"{endpoint} of {self.name}: input {path!r} is "
                               f"{type(v).__name__}, not a differentiable array", loc)
        return _Wrt(path, f, v.dtype, tuple(np.shape(v)), f._replace(path=(path,)))

    @staticmethod
    def _seed(s: Any, w: _Wrt, section: str) -> Any:
        """A tangent or cotangent as tesseract-core validates it: the field's
        dtype, a NumPy scalar for a 0-d one."""
        if s.dtype != w.dtype and w.dtype.kind in "fc":
            try:
                s = s.astype(w.dtype, casting="same_kind")
            except TypeError as e:
                raise InvalidInput(f"{section} {w.path!r}: {e}", (section, w.path)) from None
        if w.shape is not None and w.leaf.kind == _JSON and section == "tangent_vector" and (
                np.shape(s) != tuple(w.shape)):
            raise InvalidInput(f"{section} {w.path!r} has shape {np.shape(s)}, expected "
                               f"{tuple(w.shape)}", (section, w.path))
        return s[()] if s.ndim == 0 else s

    def _abstract_schemas(self) -> tuple[type[BaseModel], type[BaseModel]]:
        # tesseract-core's own abstract schemas: ShapeDType in place of arrays,
        # with the component's validators, as its abstract_eval endpoint has.
        from tesseract_core.runtime.schema_generation import create_abstract_eval_schema

        return create_abstract_eval_schema(self.module.InputSchema, self.module.OutputSchema)


class _Wrt(NamedTuple):
    """One differentiated entry: its Tesseract path, its field, and the
    dtype and shape (pattern; None: any) of what it is."""

    path: str
    leaf: _Leaf
    dtype: np.dtype
    shape: tuple | None
    flat: _Leaf  # the leaf keyed by the whole path (gradient dicts are flat)


def _field_tuple(f: _Leaf) -> tuple:
    return (f.name, f.code, None if f.dims is None else list(f.dims), f.differentiable, f.doc,
            _ABI_KIND[f.kind], list(f.choices))


_SEGMENT = re.compile(r"\{[^}]*\}|\[\d+\]|[^.]+")


def _split_path(path: str) -> tuple[str, ...]:
    """Tesseract's path "a.{k}.[0].b" as its parts."""
    return tuple(_SEGMENT.findall(path))


def _resolve(root: Any, parts: tuple[str, ...]) -> Any:
    """The value at a path: a model's field, "{k}" a dict key, "[i]" a list
    item; LookupError when it is not there."""
    v = root
    for part in parts:
        if part[:1] == "{" and part[-1:] == "}":
            if not isinstance(v, Mapping) or part[1:-1] not in v:
                raise LookupError(part)
            v = v[part[1:-1]]
        elif part[:1] == "[" and part[-1:] == "]":
            if not isinstance(v, (list, tuple)) or not int(part[1:-1]) < len(v):
                raise LookupError(part)
            v = v[int(part[1:-1])]
        elif isinstance(v, BaseModel):
            if part not in type(v).model_fields:
                raise LookupError(part)
            v = getattr(v, part)
        elif isinstance(v, Mapping) and part in v:
            v = v[part]
        else:
            raise LookupError(part)
    return v


# --------------------------------------------------------------------------
# The run context (log_metric, log_parameter, log_artifact)


def _uses_run_context(module: types.ModuleType) -> bool:
    """Whether the module imported tesseract-core's logging functions or
    the modules that hold them."""
    try:
        from tesseract_core.runtime import experimental, mpa
    except ImportError:
        return False
    fns = {experimental.log_metric, experimental.log_parameter, experimental.log_artifact}
    for v in vars(module).values():
        if v is mpa or v is experimental:
            return True
        try:
            if v in fns:
                return True
        except TypeError:  # unhashable
            continue
    return False


class _LazyRun:
    """The run's backend, made at the first log_* call: a component that
    logs nothing writes nothing."""

    def __init__(self) -> None:
        self.backend: Any = None

    def real(self) -> Any:
        if self.backend is None:
            from tesseract_core.runtime import mpa
            from tesseract_core.runtime.config import get_config

            backend = mpa._create_backend(get_config().output_path)
            backend.start_run()
            self.backend = backend
        return self.backend

    def log_parameter(self, key: str, value: Any) -> None:
        self.real().log_parameter(key, value)

    def log_metric(self, key: str, value: float, step: int | None = None) -> None:
        self.real().log_metric(key, value, step)

    def log_artifact(self, local_path: str) -> None:
        self.real().log_artifact(local_path)


class _Tee:
    """A text stream that writes to another and keeps a copy."""

    def __init__(self, stream: Any, copy: list) -> None:
        self._stream, self._copy = stream, copy

    def write(self, text: str) -> int:
        self._copy.append(text)
        return self._stream.write(text) if self._stream is not None else len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _run_context:
    """tesseract-runtime's run around one call (mpa.start_run): log_* write
    <output path>/logs/{parameters.json, metrics.csv, artifacts/} (or to
    MLflow when TESSERACT_MLFLOW_TRACKING_URI says so), and what the call
    prints goes to logs/tesseract.log besides where it went. eager: a
    component that imported the logging functions gets them from the
    start, as from tesseract-runtime; otherwise on the first log_* call.
    The process's stdout and stderr descriptors are left alone (the host's):
    only Python's sys.stdout and sys.stderr are copied."""

    def __init__(self, eager: bool) -> None:
        self._eager = eager

    def __enter__(self) -> None:
        try:
            from tesseract_core.runtime import mpa
        except ImportError:
            self._mpa = None
            return
        self._mpa = mpa
        self._run = _LazyRun()
        self._token = mpa._current_backend.set(self._run)
        self._printed: list = []
        if self._eager:
            self._run.real()
            self._streams = (sys.stdout, sys.stderr)
            sys.stdout = _Tee(sys.stdout, self._printed)
            sys.stderr = _Tee(sys.stderr, self._printed)

    def __exit__(self, *exc: Any) -> None:
        if self._mpa is None:
            return
        if self._eager:
            sys.stdout, sys.stderr = self._streams
        self._mpa._current_backend.reset(self._token)
        backend = self._run.backend
        if backend is not None:
            try:
                with open(backend.log_dir / "tesseract.log", "w", encoding="utf-8") as f:
                    f.write("".join(self._printed))
            finally:
                backend.end_run()


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


def _validation_message(e: ValidationError, prefix: tuple = ()) -> str:
    """One line per error: where, and pydantic's message (without the input's repr)."""
    parts = []
    for err in e.errors(include_url=False, include_input=False):
        loc = ".".join(str(p) for p in (*prefix[1:], *err["loc"]))
        parts.append(f"{loc}: {err['msg']}" if loc else err["msg"])
    return "; ".join(parts) or str(e)


# --------------------------------------------------------------------------
# Errors


# The host keeps TSR_ERRMSG_MAX (1024) bytes of a message, its own words
# first: the text before an "invalid:" line is cut to leave room for it.
_INVALID_BODY_MAX = 640


def format_error(exc: BaseException) -> str:
    """'ExcType: message', the causes' messages not already in it, then the
    traceback lines of the component's own files, innermost last. For an
    InvalidInput, a last line "invalid: <type> <loc>" (tsr_ctx_invalid's)."""
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
    text = "\n".join(lines)
    if not isinstance(exc, InvalidInput):
        return text
    if len(text.encode("utf-8")) > _INVALID_BODY_MAX:
        text = text.encode("utf-8")[:_INVALID_BODY_MAX - 3].decode("utf-8", "ignore") + "..."
    # The loc is the line's rest: no control characters in it.
    loc = "".join(c if c >= " " and c != "\x7f" else "?" for c in exc.loc_text)
    return f"{text}\ninvalid: {exc.type} {loc}"


def _message(exc: BaseException) -> str:
    # A KeyError's str() is the repr of its key: show our sentences plainly.
    if isinstance(exc, KeyError) and len(exc.args) == 1 and isinstance(exc.args[0], str):
        return exc.args[0]
    return str(exc)


def _one_line(exc: BaseException) -> str:
    msg = _message(exc)
    if isinstance(exc, InvalidInput) and msg:   # worded as the host words a refused value
        return msg
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__
