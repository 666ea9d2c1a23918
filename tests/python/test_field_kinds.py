# SPDX-License-Identifier: MIT
"""Fields beyond arrays in the Python package: text and JSON inputs and
outputs, choices, paths inside JSON values for derivatives, in the NumPy
API and in JAX; through a C plugin (tests/plugins/valued.c) and a Python
component written as a Tesseract author writes one
(tests/pycomponents/kinds), in-process and in a worker.

The value conversions (tessera._values) are tested on their own; calls
need a library that carries text and JSON values (tsr_call_set_text)."""

from __future__ import annotations

import base64
import enum
import json
from pathlib import Path

import numpy as np
import pytest

import tessera
from tessera import _ext, _values
from tessera._schema import Schema

from conftest import plugin_path

HERE = Path(__file__).resolve().parent
KINDS_COMPONENT = HERE.parent / "pycomponents" / "kinds"

MODES = ("inproc", "worker")


# ---- values on their own ---------------------------------------------------

def test_json_value_encodes_arrays_as_base64_little_endian_c_order_objects():
    a = np.arange(6, dtype=">f8").reshape(2, 3).T   # big-endian, Fortran order
    doc = json.loads(_values.encode_json({"w": a}, "cfg"))
    obj = doc["w"]
    assert obj["object_type"] == "array"
    assert obj["shape"] == [3, 2]
    assert obj["dtype"] == "float64"
    assert obj["data"]["encoding"] == "base64"
    raw = base64.b64decode(obj["data"]["buffer"])
    np.testing.assert_array_equal(np.frombuffer(raw, "<f8").reshape(3, 2), a)


def test_json_value_round_trips_numbers_bools_none_lists_tuples_and_nested_dicts():
    value = {"n": 3, "f": 0.5, "t": True, "z": None, "s": "hi",
             "l": [1, [2, {"k": np.array([1, 2], np.int32)}]], "tup": (1.5, "a"),
             "np": np.float32(2.5), "i": np.int64(7)}
    back = _values.decode(_values.encode(value, "json", "cfg"), "json")
    assert back["n"] == 3 and back["f"] == 0.5 and back["t"] is True and back["z"] is None
    assert back["s"] == "hi" and back["tup"] == [1.5, "a"] and back["np"] == 2.5
    assert back["i"] == 7 and type(back["i"]) is int
    inner = back["l"][1][1]["k"]
    assert isinstance(inner, np.ndarray) and inner.dtype == np.int32
    np.testing.assert_array_equal(inner, [1, 2])


def test_json_value_takes_jax_and_torch_arrays_inside():
    jnp = pytest.importorskip("jax.numpy")
    torch = pytest.importorskip("torch")
    doc = _values.decode(_values.encode(
        {"j": jnp.asarray([1.0, 2.0]), "t": [torch.tensor([3.0, 4.0], dtype=torch.float64)]},
        "json", "cfg"), "json")
    np.testing.assert_array_equal(doc["j"], [1.0, 2.0])
    np.testing.assert_array_equal(doc["t"][0], [3.0, 4.0])
    assert doc["t"][0].dtype == np.float64


def test_json_value_refuses_a_torch_tensor_that_requires_grad():
    torch = pytest.importorskip("torch")
    with pytest.raises(TypeError, match=r"cfg\.\{w\}.*requires grad"):
        _values.encode({"w": torch.ones(2, requires_grad=True)}, "json", "cfg")


def test_json_value_refuses_an_object_json_cannot_hold_naming_its_path():
    with pytest.raises(TypeError, match=r"input 'cfg\.\{a\}\.\[1\]'.*set has no JSON form"):
        _values.encode({"a": [1, {2, 3}]}, "json", "cfg")
    with pytest.raises(TypeError, match=r"dict keys must be str"):
        _values.encode({1: 2}, "json", "cfg")


def test_json_value_refuses_non_finite_floats():
    with pytest.raises(TypeError, match=r"'cfg\.\[0\]'.*not a finite number"):
        _values.encode([float("nan")], "json", "cfg")


def test_text_value_refuses_what_is_not_a_str_naming_the_field():
    with pytest.raises(TypeError, match=r"input 'method' is a text field: a str is expected, "
                                        r"not int"):
        _values.encode_text(3, "method")


def test_text_value_outside_choices_raises_argument_error_located_at_the_field():
    with pytest.raises(tessera.ArgumentError) as info:
        _values.encode_text("cubic", "opts.method", ("linear", "nearest"))
    assert info.value.loc == ("inputs", "opts", "method")
    assert "'cubic' is not one of the allowed values ('linear', 'nearest')" in str(info.value)
    assert info.value.detail[0]["input"] == "cubic"


def test_text_value_takes_a_str_enum_member_as_its_value():
    class Method(str, enum.Enum):
        LINEAR = "linear"

    assert _values.encode_text(Method.LINEAR, "m", ("linear",)) == "linear"


def test_text_value_with_a_nul_is_refused():
    with pytest.raises(tessera.ArgumentError, match="NUL"):
        _values.encode_text("a\0b", "m")


def test_decode_reads_json_encoded_arrays_and_keeps_other_dicts():
    doc = json.dumps({"a": {"object_type": "array", "shape": [2, 2], "dtype": "int64",
                            "data": {"buffer": [1, 2, 3, 4], "encoding": "json"}},
                      "b": {"object_type": "other"}})
    out = _values.decode(doc.encode(), "json")
    np.testing.assert_array_equal(out["a"], [[1, 2], [3, 4]])
    assert out["b"] == {"object_type": "other"}


def test_array_leaves_are_named_by_tesseract_paths():
    value = {"a": np.zeros(2), "b": 1.0}
    assert [p for p, _ in _values.array_leaves(value, "weights")] == ["weights.{a}"]
    layers = [{"k": np.float64(1.0)}, {"k": np.zeros(())}]
    assert [p for p, _ in _values.array_leaves(layers, "layers")] == ["layers.[1].k"]


def test_schema_reads_kinds_choices_and_any_rank():
    raw = ("c", "1", "", (
        ("x", "float64", None, True, "", None, False, "array", None),
        ("m", None, None, False, "", (b"linear", (6,)), False, "text", ("linear", "nearest")),
        ("cfg", None, None, True, "", (b'{"a":1}', (7,)), False, "json", None),
    ), ())
    s = Schema.from_ext(raw)
    x, m, cfg = s.inputs
    assert x.kind == "array" and x.dims is None and x.rank is None
    assert m.kind == "text" and m.choices == ("linear", "nearest") and m.default == "linear"
    assert cfg.kind == "json" and cfg.default == {"a": 1} and cfg.differentiable
    assert s.outputs == () and s.has_values


# ---- a C plugin with every kind ---------------------------------------------

@pytest.fixture(params=MODES)
def kinds(request):
    with tessera.load(plugin_path("valued"), request.param) as c:
        yield c


def test_c_plugin_schema_exposes_kinds_and_choices():
    with tessera.load(plugin_path("valued")) as c:
        s = c.schema
        assert [f.kind for f in s.inputs] == ["array", "text", "json"]
        assert [f.kind for f in s.outputs] == ["array", "text", "json"]
        assert s.input("mode").choices == ("double", "negate")
        assert s.input("mode").dims is None


def test_text_and_json_cross_a_c_plugin_both_ways(kinds):
    tag = {"run": 3, "w": np.array([1.5, -2.0]), "tags": ["a", None, True]}
    out = kinds.apply({"x": np.array([1.0, 2.0, 3.0]), "mode": "negate", "tag": tag})
    np.testing.assert_array_equal(out["y"], [-1.0, -2.0, -3.0])
    assert out["label"] == "negate:3"
    assert out["echo"]["run"] == 3 and out["echo"]["tags"] == ["a", None, True]
    np.testing.assert_array_equal(out["echo"]["w"], [1.5, -2.0])


def test_a_text_option_changes_the_result_and_the_derivative(kinds):
    x = np.array([1.0, 2.0])
    out = kinds.apply({"x": x, "mode": "double", "tag": None})
    np.testing.assert_array_equal(out["y"], [2.0, 4.0])
    got = kinds.vjp({"x": x, "mode": "negate", "tag": 0}, ["x"], ["y"],
                    {"y": np.array([1.0, 10.0])})
    np.testing.assert_array_equal(got["x"], [-1.0, -10.0])


def test_text_outside_choices_is_refused_with_its_location(kinds):
    with pytest.raises(tessera.ArgumentError) as info:
        kinds.apply({"x": np.zeros(2), "mode": "cube", "tag": 1})
    assert info.value.loc[:2] == ("inputs", "mode")


def test_a_text_field_given_a_number_is_a_type_error_naming_it():
    with tessera.load(plugin_path("valued")) as c:
        with pytest.raises(TypeError, match="input 'mode' is a text field"):
            c.apply({"x": np.zeros(2), "mode": 2, "tag": 1})


def test_a_json_field_given_an_object_json_cannot_hold_is_a_type_error():
    with tessera.load(plugin_path("valued")) as c:
        with pytest.raises(TypeError, match=r"input 'tag\.\{f\}'.*object has no JSON form"):
            c.apply({"x": np.zeros(2), "mode": "double", "tag": {"f": object()}})


@pytest.mark.parametrize("name", ["mode", "mode.{a}"])
def test_a_text_field_named_for_differentiation_is_refused(name):
    with tessera.load(plugin_path("valued")) as c:
        with pytest.raises(tessera.NotDifferentiableError, match="text field"):
            c.vjp({"x": np.zeros(2), "mode": "double", "tag": 1}, [name], ["y"],
                  {"y": np.zeros(2)})


def test_jax_jit_retraces_for_a_changed_option_and_not_for_changed_arrays():
    jax = pytest.importorskip("jax")
    import tessera.jax as tj
    jax.config.update("jax_enable_x64", True)
    traces = []
    with tessera.load(plugin_path("valued")) as c:
        def f(x, mode):
            traces.append(mode)
            return tj.apply(c, {"x": x, "mode": mode, "tag": {"a": 1}})["y"].sum()

        jf = jax.jit(f, static_argnames="mode")
        assert float(jf(np.array([1.0, 2.0]), "double")) == 6.0
        assert float(jf(np.array([3.0, 2.0]), "double")) == 10.0
        assert len(traces) == 1
        assert float(jf(np.array([3.0, 2.0]), "negate")) == -5.0
        assert len(traces) == 2
        g = jax.jit(jax.grad(f), static_argnames="mode")(np.array([1.0, 2.0]), "negate")
        np.testing.assert_array_equal(g, [-1.0, -1.0])


# ---- a Python component, as a Tesseract author writes it ---------------------

def _kinds_inputs(method="scaled"):
    return {"x": np.array([1.0, 2.0, 3.0]), "method": method, "count": 2,
            "layers": [{"k": 0.5}, {"k": 1.5, "note": "second"}],
            "weights": {"a": np.ones(3), "b": np.array([0.0, 1.0, 2.0])}}


@pytest.fixture(params=MODES)
def kinds_py(request):
    with tessera.load(KINDS_COMPONENT, request.param) as c:
        yield c


def test_python_component_fields_have_their_kinds(kinds_py):
    s = kinds_py.schema
    kind = {f.name: f.kind for f in s.inputs}
    assert kind == {"x": "array", "method": "text", "count": "json", "layers": "json",
                    "weights": "json"}
    assert s.input("method").choices == ("sum", "scaled")
    assert {f.name: f.kind for f in s.outputs} == {"y": "array", "names": "json",
                                                   "summary": "text"}


def test_python_component_apply_takes_options_lists_of_models_and_dicts_of_arrays(kinds_py):
    out = kinds_py.apply(_kinds_inputs())
    np.testing.assert_allclose(out["y"], [6.0, 12.0, 18.0])
    assert out["names"] == ["a", "b"]
    assert out["summary"] == "scaled:2:2"


def test_python_component_vjp_at_paths_inside_lists_and_dicts(kinds_py):
    got = kinds_py.vjp(_kinds_inputs("sum"), ["layers.[0].k", "weights.{b}", "x"], ["y"],
                       {"y": np.ones(3)})
    np.testing.assert_allclose(got["layers.[0].k"], 6.0)
    np.testing.assert_allclose(got["weights.{b}"], np.ones(3))
    np.testing.assert_allclose(got["x"], 2.0 * np.ones(3))


def test_python_component_jvp_with_tangents_at_paths(kinds_py):
    got = kinds_py.jvp(_kinds_inputs("sum"), ["layers.[1].k", "weights.{a}"], ["y"],
                       {"layers.[1].k": np.float64(1.0), "weights.{a}": np.ones(3)})
    np.testing.assert_allclose(got["y"], [2.0, 3.0, 4.0])


def test_python_component_refuses_a_method_outside_its_literal(kinds_py):
    with pytest.raises(tessera.ArgumentError) as info:
        kinds_py.apply(_kinds_inputs("cubic"))
    assert info.value.loc[:2] == ("inputs", "method")


def test_python_component_under_jit_of_grad_through_leaves_in_the_list_and_the_dict():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp
    import tessera.jax as tj
    jax.config.update("jax_enable_x64", True)
    with tessera.load(KINDS_COMPONENT) as c:
        def loss(k0, wb, x):
            inputs = {"x": x, "method": "sum", "count": 1,
                      "layers": [{"k": k0}, {"k": jnp.float64(1.5)}],
                      "weights": {"a": jnp.ones(3), "b": wb}}
            return tj.apply(c, inputs)["y"].sum()

        x = jnp.asarray([1.0, 2.0, 3.0])
        gk, gw = jax.jit(jax.grad(loss, argnums=(0, 1)))(jnp.float64(0.5), jnp.zeros(3), x)
        np.testing.assert_allclose(gk, 6.0)           # d sum(y) / d k0 = sum(x)
        np.testing.assert_allclose(gw, np.ones(3))    # d sum(y) / d weights.{b}


def test_kinds_component_has_regression_cases_in_tesseract_format():
    cases = sorted((KINDS_COMPONENT / "test_cases").glob("*.json"))
    assert len(cases) >= 3
    for path in cases:
        case = json.loads(path.read_text())
        assert case["endpoint"] in ("apply", "vector_jacobian_product")
        assert "inputs" in case["payload"]
        assert ("expected_outputs" in case) != ("expected_exception" in case)


def test_torch_passes_text_and_json_through_and_differentiates_array_leaves_inside():
    torch = pytest.importorskip("torch")
    import tessera.torch as tt
    with tessera.load(KINDS_COMPONENT) as c:
        k0 = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
        wb = torch.zeros(3, dtype=torch.float64, requires_grad=True)
        out = tt.apply(c, {"x": torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64),
                           "method": "sum", "count": 1,
                           "layers": [{"k": k0}, {"k": 1.5}],
                           "weights": {"a": torch.ones(3, dtype=torch.float64), "b": wb}})
        assert out["summary"] == "sum:1:2" and out["names"] == ["a", "b"]
        out["y"].sum().backward()
        assert float(k0.grad) == pytest.approx(6.0)
        np.testing.assert_allclose(wb.grad.numpy(), np.ones(3))


def test_dask_batch_keeps_text_and_json_inputs_the_same_for_every_item():
    pytest.importorskip("dask")
    from tessera.dask._batch import Split
    fields = {f.name: f for f in Schema.from_ext(("c", "1", "", (
        ("x", "float64", ("n",), True, "", None, False, "array", None),
        ("m", None, None, False, "", None, False, "text", None),
        ("cfg", None, None, False, "", None, False, "json", None)), ())).inputs}
    split = Split("here", "input", {"x": np.zeros((4, 2)), "m": "linear",
                                    "cfg": [1, 2, 3, 4, 5]}, fields)
    assert split.size == 4 and set(split.batched) == {"x"}
    assert split.shared == {"m": "linear", "cfg": [1, 2, 3, 4, 5]}
