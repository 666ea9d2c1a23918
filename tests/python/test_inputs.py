# SPDX-License-Identifier: MIT
"""What the NumPy API accepts and how: arrays of another dtype are converted
by Tesseract's rule (NumPy's same_kind, refusing values that do not fit) or
refused; strided, misaligned and byte-swapped
arrays are copied, never misread; bad names, shapes and options raise the
exception of their library code, carrying the code and the message."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera
from conftest import plugin_path


def mixed_inputs(**override):
    """A valid point of the mixed_dtypes test plugin (float32, float64,
    complex128, float16 and int64 fields)."""
    inputs = {"x": np.array([1.0, 2.0, 3.0], np.float32),
              "w": np.arange(6.0).reshape(2, 3),
              "z": np.array([1 + 2j, 3 - 1j, 0.5j]),
              "h": np.float16(0.5),
              "k": np.int64(2)}
    inputs.update(override)
    return inputs


def expected_u(inputs) -> np.ndarray:
    w = np.asarray(inputs["w"], np.float64)
    return (w ** 2).sum(axis=0) + float(inputs["k"]) * np.asarray(inputs["x"], np.float64).sum()


def test_every_dtype_reaches_the_plugin(load):
    comp = load("mixed_dtypes")
    inputs = mixed_inputs()
    out = comp.apply(inputs)
    assert out["y"].dtype == np.float32 and out["c"].dtype == np.complex128
    np.testing.assert_array_equal(out["y"], inputs["x"] ** 2)
    np.testing.assert_allclose(out["u"], expected_u(inputs))
    np.testing.assert_array_equal(out["c"], inputs["z"])


def test_same_kind_conversions_are_made(load):
    comp = load("mixed_dtypes")
    inputs = mixed_inputs(x=np.array([1, 2, 3], np.int16),        # int16 -> float32
                          w=np.arange(6, dtype=np.float32).reshape(2, 3),
                          z=np.array([1, 2, 3], np.int32),         # int32 -> complex128
                          h=1.5,                                    # Python float -> float16
                          k=np.uint8(2))                            # uint8 -> int64
    out = comp.apply(inputs)
    np.testing.assert_array_equal(out["y"], [1.0, 4.0, 9.0])
    np.testing.assert_allclose(out["u"], expected_u(inputs))
    np.testing.assert_array_equal(out["c"], [1, 2, 3])
    # Narrowing within a kind, when the values fit: float64 -> float32,
    # float64 -> float16, uint64 -> int64.
    inputs = mixed_inputs(x=np.array([1.0, 2.0, 3.0]), h=np.float64(0.25),
                          k=np.uint64(2))
    out = comp.apply(inputs)
    np.testing.assert_array_equal(out["y"], [1.0, 4.0, 9.0])
    np.testing.assert_allclose(out["u"], expected_u(inputs))


@pytest.mark.parametrize("field, value, given", [
    ("k", np.float64(2.0), "float64"),                    # float -> int
    ("k", 2.5, "2.5"),
    ("z", np.array(["a", "b", "c"]), "<U1"),
    ("x", np.array([1.0, 2.0, 3.0], np.complex64), "complex64"),
    ("x", np.array([1.0, 1e300, 3.0]), "value 1e[+]300 at index 1 does not fit in float32"),
    ("k", np.uint64(2 ** 63), "value 9223372036854775808 does not fit in int64"),
    ("h", np.array(70000.0), "value 70000.0 does not fit in float16"),
])
def test_unsafe_conversions_are_refused(load, field, value, given):
    comp = load("mixed_dtypes")
    with pytest.raises(tessera.DtypeError, match=f"input '{field}'.*{given}") as info:
        comp.apply(mixed_inputs(**{field: value}))
    assert info.value.code == -9 and info.value.code_name == "TSR_E_DTYPE"
    assert isinstance(info.value, TypeError)


def test_out_of_range_python_numbers_are_refused(load):
    comp = load("mixed_dtypes")
    with pytest.raises(tessera.DtypeError, match="value 10000000000.0 does not fit in float16"):
        comp.apply(mixed_inputs(h=1e10))
    with pytest.raises(tessera.DtypeError, match="does not fit"):
        comp.apply(mixed_inputs(k=2 ** 70))


def strided(a: np.ndarray) -> np.ndarray:
    big = np.zeros(a.shape + (2,), a.dtype)
    big[..., 0] = a
    return big[..., 0]


def byteswapped(a: np.ndarray) -> np.ndarray:
    return a.astype(a.dtype.newbyteorder(">"))


def misaligned(a: np.ndarray) -> np.ndarray:
    buf = bytearray(a.nbytes + 1)
    out = np.frombuffer(buf, a.dtype, count=a.size, offset=1).reshape(a.shape)
    out[...] = a
    return out


@pytest.mark.parametrize("layout", [strided, byteswapped, misaligned, np.asfortranarray,
                                    lambda a: a.tolist()])
def test_arrays_the_plugin_cannot_read_in_place_are_copied(load, layout):
    comp = load("mixed_dtypes")
    base = mixed_inputs()
    inputs = {**base, "w": layout(base["w"]), "z": layout(base["z"])}
    if layout is not misaligned and not isinstance(inputs["w"], list):
        assert not (inputs["w"].flags.c_contiguous and inputs["w"].dtype.isnative) or \
            not inputs["z"].flags.c_contiguous
    out = comp.apply(inputs)
    np.testing.assert_allclose(out["u"], expected_u(base))
    np.testing.assert_array_equal(out["c"], base["z"])


def test_torch_and_jax_inputs_are_read(load):
    comp = load("vectoradd")
    a = torch.arange(4, dtype=torch.float64)
    b = jnp.arange(4.0) * 10
    out = comp.apply({"a": a, "b": b, "s": 2.0})["result"]
    np.testing.assert_array_equal(out, np.arange(4.0) * 12)
    # a non-contiguous tensor is copied, not misread
    t = torch.arange(8, dtype=torch.float64)[::2]
    np.testing.assert_array_equal(comp.apply({"a": t, "b": np.zeros(4), "s": 1.0})["result"],
                                  [0.0, 2.0, 4.0, 6.0])


def test_tensors_that_require_grad_and_tracers_are_refused(load):
    comp = load("noop")
    with pytest.raises(tessera.DtypeError, match="requires grad.*detach"):
        comp.apply({"x": torch.ones(3, dtype=torch.float64, requires_grad=True)})

    def traced(x):
        return comp.apply({"x": x})["y"]

    with pytest.raises(TypeError, match="tracer.*tessera.jax.apply"):
        jax.jit(traced)(jnp.ones(3))


@pytest.mark.parametrize("inputs, error, message", [
    ({"x": np.ones((2, 2))}, tessera.ShapeError, "input 'x': rank 2 given, rank 1 expected"),
    ({"x": np.ones(3), "q": 1.0}, tessera.UnknownFieldError, "'q' is not an input"),
    ({}, tessera.MissingError, "input 'x' is missing"),
])
def test_bad_inputs_raise_the_library_error(load, inputs, error, message):
    comp = load("noop")
    with pytest.raises(error, match=message) as info:
        comp.apply(inputs)
    assert "component 'noop', endpoint 'apply'" in info.value.message


def test_symbolic_dims_must_agree(load):
    comp = load("vectoradd")
    with pytest.raises(tessera.ShapeError, match="symbolic dim 'n'"):
        comp.apply({"a": np.ones(3), "b": np.ones(4), "s": 1.0})


def test_inputs_must_be_a_dict(load):
    comp = load("noop")
    with pytest.raises(TypeError, match="dict"):
        comp.apply([np.ones(3)])


def test_derivative_arguments_are_checked(load):
    comp = load("heat")
    inputs = {"conductivity": np.ones(4), "source": np.ones(4),
              "initial_temperature": np.zeros(4), "observations": np.zeros(4),
              "dt": 0.01, "steps": 3}
    with pytest.raises(tessera.NotDifferentiableError, match="'dt' is not differentiable"):
        comp.jacobian(inputs, ["dt"], ["misfit"])
    with pytest.raises(tessera.UnknownFieldError, match="'nope'"):
        comp.vjp(inputs, ["nope"], ["misfit"], {"misfit": 1.0})
    with pytest.raises(tessera.MissingError, match="tangent_vector\\['source'\\] is missing"):
        comp.jvp(inputs, ["conductivity", "source"], ["misfit"],
                 {"conductivity": np.ones(4)})
    with pytest.raises(tessera.ShapeError, match="tangent_vector"):
        comp.jvp(inputs, ["source"], ["misfit"], {"source": np.ones(5)})
    with pytest.raises(TypeError, match="list of field names"):
        comp.vjp(inputs, "source", ["misfit"], {"misfit": 1.0})


def test_plugin_failures_carry_the_plugin_message(load):
    comp = load("heat")
    bad = {"conductivity": -np.ones(4), "source": np.ones(4),
           "initial_temperature": np.zeros(4), "observations": np.zeros(4),
           "dt": 0.01, "steps": 3}
    with pytest.raises(tessera.PluginError, match="conductivity must be positive") as info:
        comp.apply(bad)
    assert info.value.code == -12


def test_load_failures(tmp_path):
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(tmp_path / "missing.so")
    assert info.value.code == -3 and "missing.so" in info.value.message
    with pytest.raises(tessera.ArgumentError, match="mode"):
        tessera.load(plugin_path("noop"), mode="sideways")
    with pytest.raises(tessera.InitError, match="matrix"):
        tessera.load(plugin_path("linear"))


def test_worker_timeouts_and_deaths_raise_and_the_host_lives_on(load):
    hung = load("hang", "worker", timeout_ms=200)
    with pytest.raises(tessera.CallTimeoutError) as info:
        hung.apply({"x": np.ones(2)})
    assert isinstance(info.value, TimeoutError)
    crashing = load("crash", "worker", config={"fault": "segv"})
    with pytest.raises(tessera.WorkerError, match="SIGSEGV|signal"):
        crashing.apply({"x": np.ones(2)})


# ---- scalars for fields ------------------------------------------------------
# Python and NumPy scalars are bound without a call into Python where the
# Python-level coercion (tessera._coerce) would accept them; every result and
# every refusal must be what that coercion gives.

SCALARS = [True, False, 0, 3, -2, 255, 256, -129, 2 ** 31, 2 ** 40, 2 ** 63 - 1, 2 ** 63,
           2 ** 64, -(2 ** 63), 2 ** 1100, 1.5, -0.1, 1e300, -1e40, float("inf"), float("nan"),
           np.float64(0.1), np.float64(1e300), np.float32(0.1), np.float16(0.5),
           np.int8(-3), np.int16(300), np.int32(-7), np.int64(7), np.uint8(200),
           np.uint64(2 ** 64 - 1), np.bool_(True), np.complex128(1 + 2j), 1 + 2j,
           np.longdouble(0.5), np.str_("a"), np.datetime64(1, "s")]
SCALAR_PLUGINS = {
    "echo_dtypes": ("float64", "float32", "int32", "int64", "bool", "uint8"),
    "echo_complex": ("complex128", "complex64"),
}


def echo_point(dtypes, field, value):
    inputs = {}
    for d in dtypes:
        for rank in range(4):
            inputs[f"{d}_{rank}"] = np.zeros((2,) * rank, d)
    inputs[field] = value
    return inputs


def same_outcome(comp, inputs, field, reference):
    """comp.apply(inputs) against comp.apply with inputs[field] replaced by
    reference() (an array), or against the exception reference raises."""
    try:
        ref = reference()
    except Exception as exc:  # noqa: BLE001 - any refusal must be the same
        with pytest.raises(type(exc)) as info:
            comp.apply(inputs)
        assert str(info.value) == str(exc)
        assert getattr(info.value, "code", None) == getattr(exc, "code", None)
        return "refused"
    out = comp.apply(inputs)
    want = comp.apply({**inputs, field: ref})
    assert out[field].dtype == want[field].dtype and out[field].shape == want[field].shape
    assert out[field].tobytes() == want[field].tobytes(), (inputs[field], out[field], want[field])
    return "accepted"


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("plugin", sorted(SCALAR_PLUGINS))
def test_scalars_give_what_0d_arrays_give(load, plugin, mode):
    from tessera import _coerce
    comp = load(plugin, mode)
    dtypes = SCALAR_PLUGINS[plugin]
    seen = set()
    for d in dtypes:
        field = f"{d}_0"
        for value in SCALARS:
            inputs = echo_point(dtypes, field, value)
            seen.add(same_outcome(comp, inputs, field, lambda: _coerce.coerce(
                value, d, field, "input", comp, "apply")))
    assert seen == {"accepted", "refused"}


@pytest.mark.parametrize("value", [1.0, np.float64(1.0), 1, True, np.float32(1.0), np.int32(1)])
def test_scalars_for_rank0_float_fields(load, value):
    comp = load("rosenbrock")
    x = np.array([0.5, 1.5, -1.0])
    want = comp.apply({"x": x, "a": np.array(1.0), "b": np.array(100.0)})["value"]
    got = comp.apply({"x": x, "a": value, "b": 100})["value"]
    assert got.dtype == want.dtype and got.shape == () and got == want
    # the same slot, again with other values: nothing is left of the last call
    got = comp.apply({"x": x, "a": value * 2, "b": 10.0})["value"]
    assert got == comp.apply({"x": x, "a": np.array(2.0), "b": np.array(10.0)})["value"]
    # tangents too
    t = comp.jvp({"x": x, "a": 1.0, "b": 100.0}, ["a", "b"], ["value"], {"a": value, "b": 0})
    t0 = comp.jvp({"x": x, "a": np.array(1.0), "b": np.array(100.0)}, ["a", "b"], ["value"],
                  {"a": np.array(1.0), "b": np.array(0.0)})
    assert t["value"] == t0["value"]


@pytest.mark.parametrize("field, value, message", [
    ("k", 2.5, "input 'k': 2.5 given, int64 expected: a float cannot become integer by "
               "the 'same_kind' casting rule (convert it explicitly)"),
    ("k", np.float64(2.0),
     f"input 'k': {np.float64(2.0)!r} given, int64 expected: a float cannot become integer "
     "by the 'same_kind' casting rule (convert it explicitly)"),
    ("k", 2 ** 70, f"input 'k': value {2 ** 70} does not fit in int64"),
    ("k", np.uint64(2 ** 64 - 1), "input 'k': value 18446744073709551615 does not fit in int64"),
    ("h", 1e10, "input 'h': value 10000000000.0 does not fit in float16"),
    ("x", 1.0, None),  # a rank-1 field: the library's error, as for a 0-d array
])
def test_refused_scalars_keep_their_errors(load, field, value, message):
    comp = load("mixed_dtypes")
    with pytest.raises(tessera.TesseraError) as info:
        comp.apply(mixed_inputs(**{field: value}))
    if message is None:
        with pytest.raises(type(info.value)) as as_array:
            comp.apply(mixed_inputs(**{field: np.array(value, np.float32)}))
        assert str(info.value) == str(as_array.value)
        assert info.value.code == as_array.value.code
        return
    assert str(info.value) == ("component 'mixed_dtypes', endpoint 'apply': " + message
                               + " [TSR_E_DTYPE]")
    assert info.value.code_name == "TSR_E_DTYPE" and isinstance(info.value, TypeError)


def test_scalars_do_not_call_into_python(load):
    from tessera import _coerce, _ext
    comp = load("rosenbrock")
    x = np.array([0.5, 1.5, -1.0])
    calls = []

    def counting(*args):
        calls.append(args[0])
        return _coerce.coerce(*args)

    _ext._set_coerce(counting)
    try:
        for value in (1.0, np.float64(1.0), 1, True, np.float32(1.0), np.int32(1), np.bool_(True)):
            comp.apply({"x": x, "a": value, "b": value})
        assert calls == []
        comp.apply({"x": x, "a": np.array(1.0, np.float32), "b": 1.0})  # an array to convert
        assert len(calls) == 1
    finally:
        _ext._set_coerce(_coerce.coerce)
