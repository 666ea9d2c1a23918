# SPDX-License-Identifier: MIT
"""The Python face of the contract Tessera shares with Tesseract:

* casting: Tesseract's rule (NumPy's same_kind, refusing values that do not
  fit), the same values refused as by the C API with casting=same_kind;
* nested fields: inputs nested or dotted, apply's outputs nested,
  derivatives keyed by dotted paths, in the NumPy, JAX and PyTorch faces;
* machine-readable errors: ``.loc``, ``.code``, ``.type`` and ``.detail``
  in the shape of pydantic's ``ValidationError.errors()``, kept by pickling.
"""

from __future__ import annotations

import ctypes
import pickle

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera
import tessera.jax
import tessera.torch
from conftest import BUILD, plugin_path

# ---- casting -------------------------------------------------------------------


def echo_inputs(**override):
    """A valid point of the echo_dtypes plugin: every field of its dtype."""
    inputs = {}
    for dt in ("float64", "float32", "int32", "int64", "bool", "uint8"):
        for rank in range(4):
            inputs[f"{dt}_{rank}"] = np.zeros((2,) * rank, dt)
    inputs.update(override)
    return inputs


# (field, value given): converted, with the values it had.
CONVERTED = [
    ("float32_1", np.array([1.5, -2.0])),                       # float64 -> float32
    ("float32_1", np.array([np.nan, np.inf, -np.inf])),          # carried over as they are
    ("int32_1", np.array([2 ** 31 - 1, -2 ** 31], np.int64)),    # int64 -> int32, in range
    ("uint8_1", np.array([0, 255], np.int64)),                   # signed -> unsigned, in range
    ("int64_1", np.array([1, 2 ** 63 - 1], np.uint64)),          # unsigned -> signed, in range
    ("float64_2", np.array([[True, False]])),                    # bool -> float
    ("uint8_0", np.int16(200)),
    ("float32_0", 3.0e38),                                       # a Python float that fits
    ("uint8_0", 255),                                            # a Python int that fits
    ("float64_1", np.array([1, 2], np.uint64)),                  # integer -> float
]


@pytest.mark.parametrize("field, value", CONVERTED, ids=lambda v: repr(v)[:40])
def test_same_kind_conversions_keep_the_values(load, field, value):
    comp = load("echo_dtypes")
    out = comp.apply(echo_inputs(**{field: value}))[field]
    want = np.asarray(value).astype(out.dtype)
    assert out.dtype == np.dtype(field.rsplit("_", 1)[0])
    np.testing.assert_array_equal(out, want)


# (field, value given, the message's cause, the offending value or None).
REFUSED = [
    ("int32_1", np.array([1.0, 2.0]),
     "dtype float64 given, int32 expected: a float array cannot become integer", None),
    ("float64_1", np.array([1j]),
     "dtype complex128 given, float64 expected: a complex array cannot become float", None),
    ("bool_1", np.array([0, 1]),
     "dtype int64 given, bool expected: an integer array cannot become bool", None),
    ("uint8_1", np.array([0, 1, 2, -1]), "value -1 at index 3 does not fit in uint8", -1),
    ("uint8_2", np.array([[0, 1], [256, 2]], np.int32),
     "value 256 at index 2 does not fit in uint8", 256),
    ("int32_1", np.array([0, 2 ** 31]), "value 2147483648 at index 1 does not fit in int32",
     2 ** 31),
    ("int64_1", np.array([2 ** 63], np.uint64),
     "value 9223372036854775808 at index 0 does not fit in int64", 2 ** 63),
    ("float32_1", np.array([0.0, 1e300]), "value 1e+300 at index 1 does not fit in float32",
     1e300),
    ("uint8_0", np.int64(-1), "value -1 does not fit in uint8", -1),
    ("uint8_0", -1, "value -1 does not fit in uint8", -1),
    ("int32_0", 2.0, "2.0 given, int32 expected: a float cannot become integer", 2.0),
    ("float32_0", 1e300, "value 1e+300 does not fit in float32", 1e300),
]


@pytest.mark.parametrize("field, value, cause, offending", REFUSED,
                         ids=lambda v: repr(v)[:40])
def test_refusals_name_the_field_the_index_and_the_value(load, field, value, cause, offending):
    comp = load("echo_dtypes")
    with pytest.raises(tessera.DtypeError) as info:
        comp.apply(echo_inputs(**{field: value}))
    err = info.value
    assert err.message.startswith(f"component 'echo_dtypes', endpoint 'apply': input '{field}': ")
    assert cause in err.message, err.message
    assert err.code == -9 and err.code_name == "TSR_E_DTYPE"
    assert err.loc == ("inputs", field) and err.type == "dtype_error"
    entry = err.detail[0]
    assert entry["loc"] == ("inputs", field) and entry["msg"] == err.message
    if offending is None:
        assert "input" not in entry
    else:
        assert entry["input"] == offending


def test_float16_overflow_and_complex_parts_are_checked(load):
    mixed = load("mixed_dtypes")
    inputs = {"x": np.ones(3, np.float32), "w": np.ones((2, 3)), "z": np.ones(3, complex),
              "h": np.float16(0.5), "k": np.int64(2)}
    with pytest.raises(tessera.DtypeError, match="value 70000.0 does not fit in float16"):
        mixed.apply({**inputs, "h": 70000.0})
    with pytest.raises(tessera.DtypeError, match="value 70000.0 does not fit in float16"):
        mixed.apply({**inputs, "h": np.float64(70000.0)})
    assert mixed.apply({**inputs, "h": np.float64(np.inf)})["u"].shape == (3,)
    echo = load("echo_complex")
    point = {f"{dt}_{r}": np.zeros((2,) * r, dt) for dt in ("complex128", "complex64")
             for r in range(4)}
    # the imaginary part alone overflows complex64
    with pytest.raises(tessera.DtypeError, match=r"at index 1 does not fit in complex64"):
        echo.apply({**point, "complex64_1": np.array([1 + 1j, 1 + 1e300j])})
    got = echo.apply({**point, "complex64_1": np.array([1 + 2j, np.nan + 1j])})["complex64_1"]
    np.testing.assert_array_equal(got, np.array([1 + 2j, np.nan + 1j], np.complex64))


def test_arrays_of_the_fields_dtype_are_still_read_in_place(load):
    comp = load("echo_dtypes")
    calls = []
    from tessera import _coerce, _ext

    def counting(*args):
        calls.append(args[3])
        return _coerce.coerce(*args)

    _ext._set_coerce(counting)
    try:
        comp.apply(echo_inputs())
        assert calls == []
        comp.apply(echo_inputs(float32_1=np.ones(2)))
        assert calls == ["input"]
    finally:
        _ext._set_coerce(_coerce.coerce)


class _CApi:
    """tsr_open with casting=same_kind and one apply of echo_dtypes, through
    ctypes: what the C library accepts of the same arrays."""

    class Array(ctypes.Structure):
        _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int),
                    ("rank", ctypes.c_int32), ("shape", ctypes.c_int64 * 16)]

    class Error(ctypes.Structure):
        _fields_ = [("code", ctypes.c_int), ("message", ctypes.c_char * 1024),
                    ("loc", ctypes.c_char * 256)]

    def __init__(self) -> None:
        lib = ctypes.CDLL(str(BUILD / "lib" / "libtessera.so"))
        for fn, res, args in (
                ("tsr_options_new", ctypes.c_void_p, []),
                ("tsr_options_set", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_char_p, ctypes.c_void_p]),
                ("tsr_options_free", None, [ctypes.c_void_p]),
                ("tsr_open", ctypes.c_int, [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p,
                                            ctypes.c_void_p]),
                ("tsr_close", None, [ctypes.c_void_p]),
                ("tsr_call_new", ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_int]),
                ("tsr_call_free", None, [ctypes.c_void_p]),
                ("tsr_call_set_input", ctypes.c_int, [ctypes.c_void_p, ctypes.c_char_p,
                                                      ctypes.c_void_p]),
                ("tsr_call_run", ctypes.c_int, [ctypes.c_void_p]),
                ("tsr_call_errmsg", ctypes.c_char_p, [ctypes.c_void_p]),
                ("tsr_call_errloc", ctypes.c_char_p, [ctypes.c_void_p]),
                ("tsr_dtype_from_name", ctypes.c_int, [ctypes.c_char_p])):
            getattr(lib, fn).restype = res
            getattr(lib, fn).argtypes = args
        self.lib = lib
        opts = lib.tsr_options_new()
        err = self.Error()
        assert lib.tsr_options_set(opts, b"casting", b"same_kind", ctypes.byref(err)) == 0, \
            err.message
        self.comp = ctypes.c_void_p()
        rc = lib.tsr_open(str(plugin_path("echo_dtypes")).encode(), opts,
                          ctypes.byref(self.comp), ctypes.byref(err))
        lib.tsr_options_free(opts)
        assert rc == 0, err.message

    def apply(self, inputs) -> tuple[int, str, str]:
        """(code, message, loc) of one apply."""
        lib, keep = self.lib, []
        call = lib.tsr_call_new(self.comp, 0)
        try:
            for name, value in inputs.items():
                arr = np.require(value, requirements="C")   # 0-d stays 0-d
                keep.append(arr)
                a = self.Array(data=arr.ctypes.data, rank=arr.ndim,
                               dtype=lib.tsr_dtype_from_name(arr.dtype.name.encode()))
                for d, n in enumerate(arr.shape):
                    a.shape[d] = n
                assert lib.tsr_call_set_input(call, name.encode(), ctypes.byref(a)) == 0
            rc = lib.tsr_call_run(call)
            return rc, lib.tsr_call_errmsg(call).decode(), lib.tsr_call_errloc(call).decode()
        finally:
            lib.tsr_call_free(call)

    def close(self) -> None:
        self.lib.tsr_close(self.comp)


def test_the_c_api_with_casting_same_kind_refuses_the_same_values(load):
    """Every NumPy case of the tables above through the C API: the same
    answer (accepted, or refused with TSR_E_DTYPE at the same location and
    for the same element)."""
    c_api = _CApi()
    try:
        cases = [(f, v, None) for f, v in CONVERTED] + [(f, v, c) for f, v, c, _ in REFUSED]
        compared = 0
        for field, value, cause in cases:
            if not isinstance(value, (np.ndarray, np.generic)):
                continue   # Python numbers have no C form
            rc, message, loc = c_api.apply(echo_inputs(**{field: value}))
            if cause is None:
                assert rc == 0, (field, value, message)
            else:
                assert rc == -9 and loc == f"inputs.{field}", (field, value, rc, message, loc)
                if " at index " in cause:
                    index = cause.split(" at index ")[1].split()[0]
                    assert f"element {index}:" in message, (cause, message)
            compared += 1
        assert compared >= 15
    finally:
        c_api.close()


# ---- nested fields -------------------------------------------------------------

NODES = np.arange(6.0).reshape(3, 2)
CELLS = np.array([[0, 1, 2]], np.int32)


def contract_inputs(nested: bool = True) -> dict:
    """A valid point of the contract plugin (inputs mesh.nodes, mesh.cells,
    flags, scale, z; outputs moved.nodes, cells, flags, total, z, ragged)."""
    # every flag set: the ragged output is then as long as flags, as
    # abstract evaluation (which tessera.jax relies on) says
    rest = {"flags": np.array([True, True, True]), "scale": np.float32(2.0),
            "z": np.array([1 + 1j, 2.0])}
    if nested:
        return {"mesh": {"nodes": NODES, "cells": CELLS}, **rest}
    return {"mesh.nodes": NODES, "mesh.cells": CELLS, **rest}


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_apply_takes_nested_or_dotted_inputs_and_returns_nested_outputs(load, mode):
    comp = load("contract", mode)
    nested = comp.apply(contract_inputs(nested=True))
    dotted = comp.apply(contract_inputs(nested=False))
    mixed = comp.apply({**contract_inputs(nested=False), "mesh.nodes": NODES * 0 + NODES})
    assert list(nested) == ["moved", "cells", "flags", "total", "z", "ragged"]
    assert list(nested["moved"]) == ["nodes"]
    for out in (dotted, mixed):
        np.testing.assert_array_equal(out["moved"]["nodes"], nested["moved"]["nodes"])
        np.testing.assert_array_equal(out["total"], nested["total"])
    np.testing.assert_array_equal(dotted["cells"], nested["cells"])
    # part of a path dotted, the rest nested
    partly = comp.apply({"mesh": {"nodes": NODES}, "mesh.cells": CELLS,
                         **{k: v for k, v in contract_inputs().items() if k != "mesh"}})
    np.testing.assert_array_equal(partly["total"], nested["total"])


def test_abstract_eval_nests_as_apply_does(load):
    comp = load("contract")
    shapes = comp.abstract_eval(contract_inputs())
    assert shapes["moved"]["nodes"].shape == (3, 2) and shapes["total"].shape == ()
    assert comp.abstract_eval(contract_inputs(nested=False)).keys() == shapes.keys()


def test_a_field_given_nested_and_dotted_is_refused(load):
    comp = load("contract")
    for inputs in ({**contract_inputs(), "mesh.nodes": NODES},
                   {"mesh.nodes": NODES, **contract_inputs()}):
        with pytest.raises(tessera.ArgumentError) as info:
            comp.apply(inputs)
        err = info.value
        assert "input 'mesh.nodes' is given twice" in err.message
        assert err.message.startswith("component 'contract', endpoint 'apply': ")
        assert err.loc == ("inputs", "mesh", "nodes")
        assert err.detail == [{"type": "value_error", "loc": ("inputs", "mesh", "nodes"),
                               "msg": err.message}]


@pytest.mark.parametrize("inputs, path", [
    ({**contract_inputs(), "mesh": {"nodes": NODES, "cells": CELLS, "edges": NODES}},
     "mesh.edges"),
    ({**contract_inputs(), "bogus": 1.0}, "bogus"),
    ({**contract_inputs(), "mesh.bogus": 1.0}, "mesh.bogus"),
    ({**contract_inputs(), "mesh": NODES}, "mesh"),          # not a dict: no field 'mesh'
    ({**contract_inputs(), "flags": {"x": 1}}, None),        # a leaf given as a dict
])
def test_an_unknown_nested_key_names_its_full_path(load, inputs, path):
    comp = load("contract")
    if path is None:
        with pytest.raises(TypeError):
            comp.apply(inputs)
        return
    with pytest.raises(tessera.UnknownFieldError) as info:
        comp.apply(inputs)
    err = info.value
    assert f"'{path}' is not an input (inputs: mesh.nodes, mesh.cells" in err.message
    assert err.loc == ("inputs", *path.split(".")) and err.type == "extra_forbidden"


def test_inputs_that_are_not_a_dict_are_refused(load):
    comp = load("contract")
    with pytest.raises(TypeError, match="inputs must be a dict"):
        comp.apply([NODES])
    with pytest.raises(TypeError, match="input names must be str"):
        comp.apply({**contract_inputs(), 3: NODES})


def test_a_missing_nested_field_is_located(load):
    comp = load("contract")
    with pytest.raises(tessera.MissingError) as info:
        comp.apply({**contract_inputs(), "mesh": {"nodes": NODES}})
    assert "'mesh.cells'" in info.value.message
    assert info.value.loc == ("inputs", "mesh", "cells") and info.value.type == "missing"


def test_derivatives_take_nested_inputs_and_key_results_by_dotted_paths(load):
    comp = load("contract")
    for inputs in (contract_inputs(), contract_inputs(nested=False)):
        grads = comp.vjp(inputs, ["mesh.nodes", "scale"], ["total", "moved.nodes"],
                         {"total": 1.0, "moved.nodes": np.ones((3, 2))})
        assert list(grads) == ["mesh.nodes", "scale"] and grads["mesh.nodes"].shape == (3, 2)
        tangents = comp.jvp(inputs, ["mesh.nodes"], ["moved.nodes", "total"],
                            {"mesh.nodes": np.ones((3, 2))})
        assert list(tangents) == ["moved.nodes", "total"]
        jac = comp.jacobian(inputs, ["mesh.nodes"], ["moved.nodes"])
        assert jac["moved.nodes"]["mesh.nodes"].shape == (3, 2, 3, 2)


@pytest.mark.parametrize("endpoint, section", [("vjp", "vjp_inputs"), ("jvp", "jvp_outputs"),
                                               ("jacobian", "jac_inputs")])
def test_a_field_named_twice_in_a_derivative_list_is_refused(load, endpoint, section):
    comp = load("contract")
    call = {
        "vjp": lambda: comp.vjp(contract_inputs(), ["mesh.nodes", "mesh.nodes"], ["total"],
                                {"total": 1.0}),
        "jvp": lambda: comp.jvp(contract_inputs(), ["scale"], ["total", "moved.nodes",
                                                               "total"], {"scale": 1.0}),
        "jacobian": lambda: comp.jacobian(contract_inputs(), ["scale", "scale"], ["total"]),
    }[endpoint]
    with pytest.raises(tessera.ArgumentError) as info:
        call()
    err = info.value
    assert "named twice" in err.message and err.loc[0] == section
    named = err.message.split("'")[-2]
    assert named in ("mesh.nodes", "total", "scale")
    assert isinstance(err.loc[1], int) and err.loc[1] >= 1


def test_jax_and_torch_return_the_same_nesting_as_apply(load):
    comp = load("contract")
    want = comp.apply(contract_inputs())
    got = tessera.jax.apply(comp, {**contract_inputs(), "scale": jnp.float32(2.0)})
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    np.testing.assert_allclose(got["moved"]["nodes"], want["moved"]["nodes"])

    def total(nodes):
        out = tessera.jax.apply(comp, {**contract_inputs(), "mesh": {"nodes": nodes,
                                                                      "cells": CELLS}})
        return out["total"] + out["moved"]["nodes"].sum()

    g = jax.grad(total)(jnp.asarray(NODES))
    expected = comp.vjp(contract_inputs(), ["mesh.nodes"], ["total", "moved.nodes"],
                        {"total": 1.0, "moved.nodes": np.ones((3, 2))})["mesh.nodes"]
    np.testing.assert_allclose(g, expected)
    out, _ = jax.vjp(lambda n: tessera.jax.apply(
        comp, {**contract_inputs(nested=False), "mesh.nodes": n}), jnp.asarray(NODES))
    assert set(out) == set(want) and set(out["moved"]) == {"nodes"}

    nodes = torch.tensor(NODES, requires_grad=True)
    res = tessera.torch.apply(comp, {**contract_inputs(), "mesh": {"nodes": nodes,
                                                                   "cells": CELLS}})
    assert set(res) == set(want) and set(res["moved"]) == {"nodes"}
    (res["total"] + res["moved"]["nodes"].sum()).backward()
    np.testing.assert_allclose(nodes.grad.numpy(), expected)
    with pytest.raises(tessera.UnknownFieldError) as info:
        tessera.torch.apply(comp, {**contract_inputs(), "mesh": {"nodes": nodes, "x": 1}})
    assert info.value.loc == ("inputs", "mesh", "x")
    with pytest.raises(tessera.ArgumentError):
        tessera.jax.apply(comp, {**contract_inputs(), "mesh.nodes": NODES})


def test_flat_components_keep_flat_outputs(load):
    rosen = load("rosenbrock")
    out = rosen.apply({"x": np.ones(3), "a": 1.0, "b": 100.0})
    assert list(out) == ["value"]


# ---- machine-readable errors ------------------------------------------------------

def test_library_errors_carry_their_location(load):
    comp = load("contract")
    with pytest.raises(tessera.ShapeError) as info:
        comp.apply({**contract_inputs(), "scale": np.ones(2, np.float32)})
    err = info.value
    assert err.loc == ("inputs", "scale") and err.type == "shape_error"
    assert err.code == -10 and err.code_name == "TSR_E_SHAPE"
    assert err.detail == [{"type": "shape_error", "loc": ("inputs", "scale"), "msg": err.message}]
    with pytest.raises(tessera.NotDifferentiableError) as info:
        comp.vjp(contract_inputs(), ["scale", "mesh.cells"], ["total"], {"total": 1.0})
    assert info.value.loc == ("vjp_inputs", 1) and info.value.type == "not_differentiable"
    with pytest.raises(tessera.DtypeError) as info:
        comp.vjp(contract_inputs(), ["scale"], ["total"], {"total": 1j})
    assert info.value.loc == ("cotangent_vector", "total")
    with pytest.raises(tessera.ShapeError) as info:
        comp.apply({**contract_inputs(), "z": np.ones((1,) * 40, complex)})
    assert info.value.loc == ("inputs", "z")


def test_errors_about_no_one_place_have_an_empty_location(load, tmp_path):
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(tmp_path / "missing.so")
    assert info.value.loc == () and info.value.detail[0]["loc"] == ()
    assert info.value.type == "load_error"
    comp = load("contract")
    comp.close()
    with pytest.raises(tessera.ArgumentError) as info:
        comp.apply(contract_inputs())
    assert info.value.loc == () and info.value.type == "value_error"


def test_errors_pickle_with_location_and_input(load):
    comp = load("echo_dtypes")
    with pytest.raises(tessera.DtypeError) as info:
        comp.apply(echo_inputs(uint8_0=-1))
    for err in (info.value, tessera.ShapeError(-10, "m", ("inputs", "a", 0)),
                tessera.PluginError(-12, "m")):
        back = pickle.loads(pickle.dumps(err))
        assert type(back) is type(err) and str(back) == str(err)
        assert back.loc == err.loc and back.detail == err.detail and back.code == err.code
    assert "input" not in pickle.loads(pickle.dumps(tessera.PluginError(-12, "m"))).detail[0]


def test_a_failure_located_for_dask_keeps_its_location(load):
    pytest.importorskip("distributed")
    from tessera.dask._tasks import located
    comp = load("echo_dtypes")
    with pytest.raises(tessera.DtypeError) as info:
        comp.apply(echo_inputs(uint8_1=np.array([1, -1])))
    moved = pickle.loads(pickle.dumps(located(info.value, "item 3")))
    assert type(moved) is tessera.DtypeError and moved.message.endswith("(item 3)")
    assert moved.loc == ("inputs", "uint8_1") and moved.detail[0]["input"] == -1


def test_every_code_has_a_type():
    for code in range(-21, 0):
        err = tessera.error_class(code)(code, "m")
        assert err.type and err.type == tessera._ext.error_type(code)
    assert tessera.TesseraError(-8, "m").type == "missing"
    assert tessera.TesseraError(-7, "m").type == "extra_forbidden"
