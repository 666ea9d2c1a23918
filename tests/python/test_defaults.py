# SPDX-License-Identifier: MIT
"""Defaults and optional inputs from Python: the field objects, apply and
abstract_eval with inputs left out (a C plugin and a Python component,
whose `s: float = 2.0` and `bias: Optional[...] = None` become a default
and an optional input), `tessera serve` given a request that leaves them
out, and the OpenAPI document against tesseract-core's for the same
tesseract_api.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest
import requests

import tessera
from conftest import BUILD, MODES, ROOT, open_plugin, plugin_path

PYCOMPONENT = ROOT / "tests" / "pycomponents" / "defaults"
TESSERA = BUILD / "bin" / "tessera"


def test_field_objects_show_defaults_and_optional_inputs():
    comp = open_plugin("defaults")
    try:
        x, s, w, bias = comp.schema.inputs
        assert x.required and x.default is None and not x.optional
        assert not s.required and s.default.shape == () and s.default.dtype == np.float64
        assert float(s.default) == 2.0
        np.testing.assert_array_equal(w.default, [1.0, 2.0, 3.0])
        assert not w.default.flags.writeable, "a default cannot be changed through the schema"
        assert bias.optional and bias.default is None and not bias.required
        assert all(f.default is None and not f.optional for f in comp.schema.outputs)
        # y's symbol n comes from x, which is always given
        assert comp.schema.output_shapes_static
    finally:
        comp.close()


@pytest.mark.parametrize("mode", MODES)
def test_apply_leaves_defaulted_and_optional_inputs_out(mode):
    comp = open_plugin("defaults", mode)
    try:
        out = comp.apply({"x": np.array([1.0, 2.0])})
        np.testing.assert_array_equal(out["y"], [8.0, 10.0])
        np.testing.assert_array_equal(out["seen"], [2.0, 6.0, 0.0])
        out = comp.apply({"x": np.array([1.0, 2.0]), "s": np.float64(3.0),
                          "bias": np.array([1.0, 1.0])})
        np.testing.assert_array_equal(out["seen"], [3.0, 6.0, 1.0])
        with pytest.raises(tessera.MissingError, match="input 'x' is missing"):
            comp.apply({"s": np.float64(3.0)})
    finally:
        comp.close()


def test_differentiating_an_absent_optional_input_is_refused():
    comp = open_plugin("defaults")
    try:
        with pytest.raises(tessera.MissingError, match="vjp_inputs.*'bias'"):
            comp.vjp({"x": np.array([1.0, 2.0])}, ["bias"], ["y"], {"y": np.ones(2)})
        grads = comp.vjp({"x": np.array([1.0, 2.0])}, ["s"], ["y"], {"y": np.ones(2)})
        assert float(grads["s"]) == 3.0
    finally:
        comp.close()


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_a_python_component_takes_its_defaults(mode):
    comp = tessera.load(PYCOMPONENT, mode, python_env="none")
    try:
        s, w, bias = comp.schema.input("s"), comp.schema.input("w"), comp.schema.input("bias")
        assert float(s.default) == 2.0 and not s.optional
        np.testing.assert_array_equal(w.default, [1.0, 2.0, 3.0])
        assert bias.optional and bias.default is None
        out = comp.apply({"x": np.array([1.0, 2.0])})
        np.testing.assert_array_equal(out["seen"], [2.0, 6.0, 0.0])  # bias came as None
        out = comp.apply({"x": np.array([1.0, 2.0]), "s": np.float64(0.5),
                          "bias": np.array([1.0, 1.0])})
        np.testing.assert_array_equal(out["y"], [7.5, 8.0])
        np.testing.assert_array_equal(out["seen"], [0.5, 6.0, 1.0])
    finally:
        comp.close()


def _tessera_openapi(path) -> dict:
    out = subprocess.run([str(TESSERA), "schema", "--openapi", "--option", "python_env=none",
                          str(path)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)["components"]["schemas"]["Apply_InputSchema"]


def _tesseract_openapi(path) -> dict:
    exe = shutil.which("tesseract-runtime")
    if not exe:
        pytest.skip("tesseract-runtime is not installed")
    env = dict(os.environ, TESSERACT_API_PATH=str(path / "tesseract_api.py"))
    out = subprocess.run([exe, "openapi-schema"], capture_output=True, text=True, env=env,
                         check=True)
    return json.loads(out.stdout)["components"]["schemas"]["Apply_InputSchema"]


def test_the_openapi_document_agrees_with_tesseract_core():
    ours, theirs = _tessera_openapi(PYCOMPONENT), _tesseract_openapi(PYCOMPONENT)
    assert ours["required"] == theirs["required"] == ["x"]
    for name in ("s", "w"):
        assert ours["properties"][name]["default"] == theirs["properties"][name]["default"], name
    assert "default" not in ours["properties"]["x"]
    # Optional[...] = None: the array or null, titled and described outside
    ob, tb = ours["properties"]["bias"], theirs["properties"]["bias"]
    for key in ("title", "description"):
        assert ob[key] == tb[key], key
    assert [a.get("type") for a in ob["anyOf"]] == [a.get("type") for a in tb["anyOf"]]
    assert [a.get("array_flags") for a in ob["anyOf"]] == [a.get("array_flags")
                                                            for a in tb["anyOf"]]
    assert "default" not in ob and "default" not in tb


def test_a_c_plugin_documents_the_same_way():
    doc = _tessera_openapi(BUILD / "tests" / "plugins" / "defaults.so")
    assert doc["required"] == ["x"]
    assert doc["properties"]["s"]["default"] == 2.0
    assert doc["properties"]["w"]["default"] == [1.0, 2.0, 3.0]
    assert doc["properties"]["bias"]["anyOf"][1] == {"type": "null"}


def test_abstract_eval_leaves_defaulted_and_optional_inputs_out():
    comp = open_plugin("defaults")
    try:
        out = comp.abstract_eval({"x": tessera.ShapeDtype((4,), np.dtype("float64"))})
        assert out["y"].shape == (4,) and out["seen"].shape == (3,)
        with pytest.raises(tessera.MissingError, match="input 'x' is missing"):
            comp.abstract_eval({"s": tessera.ShapeDtype((), np.dtype("float64"))})
    finally:
        comp.close()


def test_tessera_serve_applies_defaults_to_a_request_leaving_them_out():
    from test_serve import Served

    served = Served(plugin_path("defaults"), "--option", "log_level=off")
    try:
        body = requests.post(served.url + "/apply", json={"inputs": {"x": [1.0, 2.0]}},
                             timeout=30)
        assert body.status_code == 200, body.text
        seen = body.json()["seen"]["data"]["buffer"]
        assert seen == [2.0, 6.0, 0.0]
        body = requests.post(served.url + "/apply", json={"inputs": {"s": 1.0}}, timeout=30)
        assert body.status_code == 422
        assert body.json()["detail"][0]["loc"][-1] == "x"
    finally:
        served.stop()
