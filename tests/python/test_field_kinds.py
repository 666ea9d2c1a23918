# SPDX-License-Identifier: MIT
"""Fields beyond arrays in the Python package: text and JSON inputs and
outputs, choices, paths inside JSON values for derivatives, in the NumPy
API and in JAX; through a C plugin (tests/plugins/valued.c) and a Python
component written as a Tesseract author writes one
(tests/pycomponents/kinds_grad), in-process and in a worker.

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
from tessera import _errors, _values
from tessera._schema import Schema

from conftest import plugin_path

HERE = Path(__file__).resolve().parent
KINDS_COMPONENT = HERE.parent / "pycomponents" / "kinds_grad"

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


def test_text_value_outside_choices_is_left_to_the_library():
    # The one check of choices is the host's (TSR_E_VALUE), with its wording.
    assert _values.encode_text("cubic", "opts.method") == "cubic"


def test_text_value_takes_a_str_enum_member_as_its_value():
    class Method(str, enum.Enum):
        LINEAR = "linear"

    assert _values.encode_text(Method.LINEAR, "m") == "linear"


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


def test_text_outside_choices_is_the_hosts_value_error_with_location_and_detail(kinds):
    with pytest.raises(tessera.ValueNotAllowedError) as info:
        kinds.apply({"x": np.zeros(2), "mode": "cube", "tag": 1})
    err = info.value
    assert err.code == _errors.TSR_E_VALUE and err.code_name == "TSR_E_VALUE"
    assert isinstance(err, ValueError)
    assert err.loc == ("inputs", "mode")
    assert "Input should be 'double' or 'negate'" in err.message
    assert err.detail[0]["type"] == "literal_error"
    assert err.detail[0]["loc"] == ("inputs", "mode")


def test_text_outside_choices_in_a_vjp_is_refused_before_the_endpoint_runs(kinds):
    with pytest.raises(tessera.ValueNotAllowedError) as info:
        kinds.vjp({"x": np.zeros(2), "mode": "Double", "tag": 1}, ["x"], ["y"],
                  {"y": np.zeros(2)})
    assert info.value.loc == ("inputs", "mode")


def test_text_that_is_a_choice_with_a_different_case_or_padding_is_refused(kinds):
    for bad in ("DOUBLE", " double", "double ", ""):
        with pytest.raises(tessera.ValueNotAllowedError):
            kinds.apply({"x": np.zeros(2), "mode": bad, "tag": 1})


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
    with pytest.raises(tessera.ValueNotAllowedError) as info:
        kinds_py.apply(_kinds_inputs("cubic"))
    assert info.value.loc == ("inputs", "method")
    assert "Input should be 'sum' or 'scaled'" in info.value.message
    assert info.value.detail[0]["type"] == "literal_error"


def test_jax_refuses_an_option_outside_choices_with_the_hosts_error_at_trace_time():
    jax = pytest.importorskip("jax")
    import tessera.jax as tj
    jax.config.update("jax_enable_x64", True)
    with tessera.load(KINDS_COMPONENT) as c:
        def f(x):
            return tj.apply(c, {**_kinds_inputs("cubic"), "x": x})["y"].sum()

        with pytest.raises(tessera.ValueNotAllowedError) as info:
            jax.jit(f).lower(np.ones(3))     # tracing alone, nothing run
        assert info.value.loc == ("inputs", "method")


def test_kinds_component_has_regression_cases_in_tesseract_format():
    cases = sorted((KINDS_COMPONENT / "test_cases").glob("*.json"))
    assert len(cases) >= 3
    for path in cases:
        case = json.loads(path.read_text())
        assert case["endpoint"] in ("apply", "vector_jacobian_product")
        assert "inputs" in case["payload"]
        assert ("expected_outputs" in case) != ("expected_exception" in case)


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


# ---- JAX: the valued route in both modes, forward and reverse -------------------

def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.fixture(params=MODES)
def valued(request):
    with tessera.load(plugin_path("valued"), request.param) as c:
        yield c


def test_jax_jvp_and_jacfwd_on_the_valued_route_follow_the_text_option(valued):
    jax = _jax()
    import tessera.jax as tj

    def f(x, mode):
        return tj.apply(valued, {"x": x, "mode": mode, "tag": [1, "a"]})["y"]

    x, t = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.5, -1.0])
    y, ty = jax.jvp(lambda x: f(x, "negate"), (x,), (t,))
    np.testing.assert_array_equal(y, -x)
    np.testing.assert_array_equal(ty, -t)
    _, ty = jax.jit(lambda x, t: jax.jvp(lambda x: f(x, "double"), (x,), (t,)))(x, t)
    np.testing.assert_array_equal(ty, 2.0 * t)
    np.testing.assert_array_equal(jax.jit(jax.jacfwd(lambda x: f(x, "double")))(x),
                                  2.0 * np.eye(3))
    np.testing.assert_array_equal(jax.jit(jax.jacrev(lambda x: f(x, "negate")))(x), -np.eye(3))


def test_jax_vmap_on_the_valued_route_runs_each_item(valued):
    jax = _jax()
    import tessera.jax as tj
    xs = np.arange(6.0).reshape(3, 2)
    got = jax.jit(jax.vmap(lambda x: tj.apply(valued, {"x": x, "mode": "negate",
                                                       "tag": None})["y"]))(xs)
    np.testing.assert_array_equal(got, -xs)


def test_jax_second_derivative_on_the_valued_route_is_unsupported(valued):
    jax = _jax()
    import tessera.jax as tj

    def loss(x):
        return (tj.apply(valued, {"x": x, "mode": "double", "tag": 0})["y"] ** 2).sum()

    np.testing.assert_array_equal(jax.grad(loss)(np.array([1.0, 2.0])), [8.0, 16.0])
    with pytest.raises(NotImplementedError, match="first derivatives only"):
        jax.hessian(loss)(np.array([1.0, 2.0]))


def test_jax_tangent_for_an_array_leaf_of_a_non_differentiable_json_input_is_refused():
    jax = _jax()
    import tessera.jax as tj
    with tessera.load(plugin_path("valued")) as c:
        def f(w):
            return tj.apply(c, {"x": np.ones(2), "mode": "double", "tag": {"w": w}})["y"].sum()

        with pytest.raises(ValueError, match=r"'tag\.\{w\}'.*not differentiable"):
            jax.grad(f)(np.ones(2))


def test_jax_valued_failure_under_jit_raises_the_components_error_class(valued):
    jax = _jax()
    import tessera.jax as tj
    f = jax.jit(lambda x: tj.apply(valued, {"x": x, "mode": "double", "tag": 0})["y"])
    with pytest.raises(tessera.ShapeError):
        f(np.ones((2, 2))).block_until_ready()


def _loss_of_kinds(c, method="sum", count=1):
    import jax.numpy as jnp
    import tessera.jax as tj

    def loss(k0, wb, x):
        inputs = {"x": x, "method": method, "count": count,
                  "layers": [{"k": k0}, {"k": jnp.float64(1.5)}],
                  "weights": {"a": jnp.ones(3), "b": wb}}
        return tj.apply(c, inputs)["y"].sum()
    return loss


def test_kinds_component_jit_of_grad_wrt_leaves_in_the_list_and_the_dict(kinds_py):
    # y = f (x * sum(k) + sum(w)), f = count for "scaled": closed forms
    # d sum(y)/d k0 = f sum(x), d/d weights.{b} = f, d/d x = f sum(k).
    jax = _jax()
    import jax.numpy as jnp
    x = jnp.asarray([1.0, 2.0, 3.0])
    g = jax.jit(jax.grad(_loss_of_kinds(kinds_py, "scaled", 3), argnums=(0, 1, 2)))
    gk, gw, gx = g(jnp.float64(0.5), jnp.zeros(3), x)
    np.testing.assert_allclose(gk, 3 * 6.0)
    np.testing.assert_allclose(gw, 3 * np.ones(3))
    np.testing.assert_allclose(gx, 3 * 2.0 * np.ones(3))


def test_kinds_component_jvp_at_leaves_agrees_with_its_grad(kinds_py):
    jax = _jax()
    import jax.numpy as jnp
    loss = _loss_of_kinds(kinds_py)
    x = jnp.asarray([1.0, 2.0, 3.0])
    primals = (jnp.float64(0.5), jnp.zeros(3), x)
    tangents = (jnp.float64(1.0), jnp.asarray([1.0, -1.0, 2.0]), jnp.zeros(3))
    _, dl = jax.jit(lambda p, t: jax.jvp(loss, p, t))(primals, tangents)
    g = jax.grad(loss, argnums=(0, 1, 2))(*primals)
    np.testing.assert_allclose(dl, sum(float(jnp.vdot(a, b)) for a, b in zip(g, tangents)))
    np.testing.assert_allclose(dl, 6.0 + 2.0)


def test_kinds_component_retraces_for_a_changed_option_only(kinds_py):
    jax = _jax()
    import jax.numpy as jnp
    import tessera.jax as tj
    traces = []

    def f(x, wb, method):
        traces.append(method)
        inputs = {"x": x, "method": method, "count": 2,
                  "layers": [{"k": 1.0}], "weights": {"b": wb}}
        return tj.apply(kinds_py, inputs)["y"]

    jf = jax.jit(f, static_argnames="method")
    x, wb = jnp.asarray([1.0, 2.0]), jnp.zeros(2)
    np.testing.assert_allclose(jf(x, wb, "sum"), [1.0, 2.0])
    np.testing.assert_allclose(jf(x + 1, wb + 1, "sum"), [3.0, 4.0])   # new arrays
    assert traces == ["sum"]
    np.testing.assert_allclose(jf(x, wb, "scaled"), [2.0, 4.0])        # new option
    assert traces == ["sum", "scaled"]
    np.testing.assert_allclose(jf(x, wb, "sum"), [1.0, 2.0])           # seen before
    np.testing.assert_allclose(jf(x, wb, "scaled"), [2.0, 4.0])
    assert traces == ["sum", "scaled"]


# ---- PyTorch and Dask -------------------------------------------------------------

def test_torch_backward_through_leaves_of_both_json_inputs_in_each_mode(kinds_py):
    torch = pytest.importorskip("torch")
    import tessera.torch as tt
    k0 = torch.tensor(0.5, dtype=torch.float64, requires_grad=True)
    wb = torch.zeros(3, dtype=torch.float64, requires_grad=True)
    x = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    out = tt.apply(kinds_py, {"x": x, "method": "scaled", "count": 2,
                              "layers": [{"k": k0}, {"k": 1.5}],
                              "weights": {"a": torch.ones(3, dtype=torch.float64), "b": wb}})
    assert out["summary"] == "scaled:2:2"
    out["y"].sum().backward()
    assert float(k0.grad) == pytest.approx(2 * 6.0)
    np.testing.assert_allclose(wb.grad.numpy(), 2 * np.ones(3))
    np.testing.assert_allclose(x.grad.numpy(), 2 * 2.0 * np.ones(3))


def test_torch_forward_gives_values_with_tensor_leaves_that_need_no_grad(kinds_py):
    torch = pytest.importorskip("torch")
    import tessera.torch as tt
    out = tt.apply(kinds_py, {"x": torch.tensor([1.0, 2.0], dtype=torch.float64),
                              "method": "sum", "layers": [{"k": torch.tensor(2.0,
                                                                             dtype=torch.float64)}],
                              "weights": {"a": torch.ones(2, dtype=torch.float64)}})
    np.testing.assert_allclose(out["y"].numpy(), [3.0, 5.0])
    assert out["names"] == ["a"] and out["summary"] == "sum:1:1"


def test_dask_map_sends_text_options_and_json_values_to_each_task():
    distributed = pytest.importorskip("distributed")
    import tessera.dask
    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                       dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        with tessera.dask.load(client, KINDS_COMPONENT, "worker") as cc:
            items = [dict(_kinds_inputs(m), count=n) for m, n in
                     (("sum", 1), ("scaled", 2), ("scaled", 3))]
            got = cc.apply(items)
            for item, out in zip(items, got):
                f = item["count"] if item["method"] == "scaled" else 1
                np.testing.assert_allclose(out["y"], f * np.array([3.0, 6.0, 9.0]))
                assert out["summary"] == f"{item['method']}:{item['count']}:2"
            with pytest.raises(tessera.ValueNotAllowedError) as info:
                cc.apply([_kinds_inputs("cubic")])
            assert info.value.loc == ("inputs", "method")

