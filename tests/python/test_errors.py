# SPDX-License-Identifier: MIT
"""Errors keep their type and their words in every face of the bindings:
the library's advice in a Python user's words (Component.restart()), the
conversion step's refusals prefixed as the library's messages are, and
plugin failures through tessera.jax as tessera exceptions outside jit and,
under jit, as JAX's exception carrying the tessera class, code and message,
which tessera.jax turns back into the tessera exception."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import tessera
import tessera.jax
import tessera.torch
from reference import CASES

ADVICE = r"call Component\.restart\(\), or load with restart='auto'"


def jit_apply(comp):
    return jax.jit(lambda d: tessera.jax.apply(comp, d))


def test_after_a_worker_death_the_advice_is_component_restart(load):
    comp = load("crash", "worker", config={"fault": "segv", "when": "call:2"})
    x = np.ones(2)
    comp.apply({"x": x})
    with pytest.raises(tessera.WorkerError, match="signal"):
        comp.apply({"x": x})
    # Every face says what a Python user calls, never the C function.
    failures = []
    for call in (lambda: comp.apply({"x": x}),
                 lambda: tessera.torch.apply(comp, {"x": torch.ones(2, dtype=torch.float64)}),
                 lambda: tessera.jax.apply(comp, {"x": jnp.ones(2)})):
        with pytest.raises(tessera.WorkerError, match=ADVICE) as info:
            call()
        failures.append(str(info.value))
    with pytest.raises(Exception, match="tessera.WorkerError: .*" + ADVICE) as info:
        jit_apply(comp)({"x": jnp.ones(2)})["y"].block_until_ready()
    failures.append(str(info.value))
    assert not any("tsr_" in text for text in failures), failures
    comp.restart()
    np.testing.assert_array_equal(comp.apply({"x": x})["y"], x)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_plugin_failures_outside_jit_raise_the_tessera_class(load, mode):
    heat = load("heat", mode)
    inputs = {**CASES["heat"].point(), "conductivity": -np.ones(6)}
    message = r"component 'heat', endpoint 'apply': .*conductivity must be positive"
    with pytest.raises(tessera.PluginError, match=message):
        tessera.jax.apply(heat, inputs)

    def misfit(k):
        return tessera.jax.apply(heat, {**inputs, "conductivity": k})["misfit"]

    with pytest.raises(tessera.PluginError, match=message):
        jax.grad(misfit)(jnp.asarray(inputs["conductivity"]))
    with pytest.raises(tessera.PluginError, match=message):
        jax.vmap(misfit)(-jnp.ones((2, 6)))


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_plugin_failures_under_jit_carry_the_tessera_class_and_message(load, mode):
    heat = load("heat", mode)
    inputs = {**CASES["heat"].point(), "conductivity": -np.ones(6)}
    f = jit_apply(heat)
    wrapped = (r"tessera\.PluginError: component 'heat', endpoint 'apply': .*conductivity "
               r"must be positive.* \[TSR_E_PLUGIN\]")
    # JAX raises JaxRuntimeError the first time, and a ValueError from its
    # C++ dispatch once the jitted function has run; both carry the text.
    for _ in range(2):
        with pytest.raises((jax.errors.JaxRuntimeError, ValueError), match=wrapped) as info:
            f(inputs)["misfit"].block_until_ready()
        err = tessera.jax.tessera_error(info.value)
        assert type(err) is tessera.PluginError and err.code_name == "TSR_E_PLUGIN"
        assert err.message.startswith("component 'heat', endpoint 'apply': ")
        assert "tessera.PluginError" not in err.message and "INTERNAL" not in err.message
        with pytest.raises(tessera.PluginError, match="conductivity must be positive") as again:
            with tessera.jax.tessera_errors():
                f(inputs)["misfit"].block_until_ready()
        assert again.value.__cause__ is not None
    assert tessera.jax.tessera_error(ValueError("unrelated")) is None
    # other exceptions pass through tessera_errors unchanged
    with pytest.raises(KeyError), tessera.jax.tessera_errors():
        raise KeyError("x")
    with pytest.raises(tessera.ShapeError), tessera.jax.tessera_errors():
        raise tessera.ShapeError(-10, "kept")


def test_a_closed_component_under_jit_says_so_with_the_class(load):
    comp = load("noop")
    f = jax.jit(lambda x: tessera.jax.apply(comp, {"x": x})["y"])
    f(jnp.ones(3)).block_until_ready()
    comp.close()
    with pytest.raises(Exception, match=r"tessera\.ArgumentError: .*closed") as info:
        f(jnp.ones(3)).block_until_ready()
    assert isinstance(tessera.jax.tessera_error(info.value), tessera.ArgumentError)


PREFIX = "^component '{}', endpoint '{}': "


def test_conversion_refusals_begin_like_the_librarys(load):
    rosen = load("rosenbrock")
    inputs = {"x": np.ones(3), "a": 1.0, "b": 100.0}
    apply_prefix = PREFIX.format("rosenbrock", "apply")
    cases = [
        (lambda: rosen.apply({**inputs, "x": np.ones(3, np.complex128)}),
         tessera.DtypeError, apply_prefix + "input 'x': dtype complex128 given"),
        (lambda: rosen.apply({**inputs, "a": 1j}),
         tessera.DtypeError, apply_prefix + "input 'a': 1j given, float64 expected"),
        (lambda: rosen.apply({**inputs, "x": torch.ones(3, dtype=torch.float64,
                                                         requires_grad=True)}),
         tessera.DtypeError, apply_prefix + "input 'x': a tensor that requires grad"),
        (lambda: rosen.vjp(inputs, ["x"], ["value"], {"value": 1j}),
         tessera.DtypeError, PREFIX.format("rosenbrock", "vjp") + "cotangent_vector 'value'"),
        (lambda: rosen.jvp(inputs, ["x"], ["value"], {"x": np.ones(3, np.complex64)}),
         tessera.DtypeError, PREFIX.format("rosenbrock", "jvp") + "tangent_vector 'x'"),
        (lambda: rosen.apply({**inputs, "x": np.ones((1,) * 40)}),
         tessera.ShapeError, apply_prefix + "input 'x': rank 40 is out of range"),
        (lambda: tessera.torch.apply(rosen, {**inputs, "x": torch.ones(3,
                                                                       dtype=torch.complex128)}),
         tessera.DtypeError, apply_prefix + "input 'x': dtype complex128 given"),
        (lambda: tessera.torch.apply(rosen, {**inputs, "x": torch.ones(3, dtype=torch.float64),
                                             "b": 1j}),
         tessera.DtypeError, apply_prefix + "input 'b': 1j given, float64 expected"),
        (lambda: tessera.jax.apply(rosen, {**inputs, "x": jnp.ones(3, jnp.complex128)}),
         tessera.DtypeError, apply_prefix + "input 'x': dtype complex128 given"),
    ]
    for call, cls, message in cases:
        with pytest.raises(cls, match=message) as info:
            call()
        # located as the library locates its own refusals
        section = message.split(": ")[1].split(" ")[0]
        field = message.split("'")[5]
        assert info.value.loc == ("inputs" if section == "input" else section, field)
        assert info.value.detail[0]["msg"] == info.value.message

    # a JAX tracer given to the NumPy API: a TypeError, prefixed too
    @jax.jit
    def wrong(x):
        return rosen.apply({**inputs, "x": x})["value"]

    with pytest.raises(TypeError, match=apply_prefix + "input 'x': a JAX tracer"):
        wrong(jnp.ones(3))


def test_errors_survive_pickling_with_their_class_and_code():
    """A failure in a Dask task reaches the client pickled."""
    import pickle
    for cls, code in ((tessera.LoadError, -3), (tessera.DtypeError, -9),
                      (tessera.PluginError, -12)):
        err = pickle.loads(pickle.dumps(cls(code, "component 'x': the cause", ("inputs", "x"))))
        assert type(err) is cls and err.code == code
        assert str(err) == f"component 'x': the cause [{err.code_name}]"
        assert err.loc == ("inputs", "x") and err.detail[0]["loc"] == ("inputs", "x")


def test_every_library_code_has_its_own_class_value_not_allowed_included():
    import re
    from conftest import ROOT
    from tessera import _errors
    header = (ROOT / "include" / "tessera" / "tessera.h").read_text()
    library = {n: int(c) for n, c in re.findall(r"\b(TSR_E_\w+) = (-\d+)", header)}
    assert library == {n: c for n, c in vars(_errors).items() if n.startswith("TSR_E_")}
    classes = {tessera.error_class(c) for c in library.values()}
    assert len(classes) == len(library) and tessera.TesseraError not in classes
    assert tessera.error_class(_errors.TSR_E_VALUE) is tessera.ValueNotAllowedError
    assert issubclass(tessera.ValueNotAllowedError, ValueError)
    err = tessera.ValueNotAllowedError(_errors.TSR_E_VALUE, "input 'm': Input should be 'a'",
                                       ("inputs", "m"))
    assert err.type == "literal_error" and err.code_name == "TSR_E_VALUE"
    assert tessera.error_class(-99) is tessera.TesseraError
