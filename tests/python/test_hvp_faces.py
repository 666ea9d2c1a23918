# SPDX-License-Identifier: MIT
"""The hvp endpoint on every face but the Python API: `tessera hvp` on a
plugin with its own hvp, on a tesseract_api.py whose hvp is JAX's forward
over reverse and on one without hvp (the core's central differences of its
vjp); `tessera serve`'s POST /hvp, its /openapi.json entry and /docs card;
and a served component as a remote one, whose hvp is the server's when its
/openapi.json lists /hvp and the client's fallback when not. Each answer is
checked against the Hessian written out here."""

from __future__ import annotations

import base64
import json
import subprocess

import numpy as np
import pytest
import requests

from conftest import BUILD, ROOT, plugin_path

TESSERA = BUILD / "bin" / "tessera"
PYCOMPONENTS = ROOT / "tests" / "pycomponents"
NO_ENV = ("--option", "python_env=none")


def rosenbrock_hessian(x: np.ndarray, a: float, b: float) -> np.ndarray:
    """The Hessian of sum (a - x_i)^2 + b (x_{i+1} - x_i^2)^2 in (x, a, b)."""
    n = len(x)
    h = np.zeros((n + 2, n + 2))
    for i in range(n - 1):
        r = x[i + 1] - x[i] ** 2
        h[i, i] += 2 + b * (8 * x[i] ** 2 - 4 * r)
        h[i, i + 1] += -4 * b * x[i]
        h[i + 1, i] += -4 * b * x[i]
        h[i + 1, i + 1] += 2 * b
        h[i, n] += -2          # d2/dx_i da
        h[n, i] += -2
        h[n, n] += 2
        h[i, n + 1] += -4 * x[i] * r      # d2/dx_i db
        h[n + 1, i] += -4 * x[i] * r
        h[i + 1, n + 1] += 2 * r
        h[n + 1, i + 1] += 2 * r
    return h


def hvp_request(x, a, b, w, tangent: dict, inputs=("x",)) -> dict:
    return {"inputs": {"x": list(x), "a": a, "b": b}, "hvp_inputs": list(inputs),
            "hvp_outputs": ["value"], "cotangent_vector": {"value": w},
            "tangent_vector": {k: (list(v) if np.ndim(v) else v) for k, v in tangent.items()}}


def run_cli(*args: str, request: dict | str) -> subprocess.CompletedProcess:
    text = request if isinstance(request, str) else json.dumps(request)
    return subprocess.run([str(TESSERA), *args, "-"], input=text, capture_output=True,
                          text=True, timeout=180)


def array_of(obj: dict) -> np.ndarray:
    data = obj["data"]
    if data["encoding"] == "base64":
        raw = np.frombuffer(base64.b64decode(data["buffer"]), dtype=obj["dtype"])
        return raw.reshape(obj["shape"])
    return np.asarray(data["buffer"], dtype=obj["dtype"]).reshape(obj["shape"])


def test_cli_hvp_of_a_plugin_with_its_own_hvp_is_exact():
    run = run_cli("hvp", str(plugin_path("rosenbrock")),
                  request=hvp_request([1, 2], 1, 100, 0.5, {"x": [1, 0]}))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert set(out) == {"x"}
    assert out["x"]["shape"] == [2] and out["x"]["dtype"] == "float64"
    assert array_of(out["x"]).tolist() == [201.0, -200.0]


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_cli_hvp_of_a_jax_tesseract_api_is_its_own_forward_over_reverse(mode):
    rng = np.random.default_rng(3)
    x, a, b, w = rng.normal(size=4), 0.7, 30.0, 1.5
    v = {"x": rng.normal(size=4), "a": 0.25, "b": -0.5}
    run = run_cli("hvp", "--mode", mode, *NO_ENV, str(PYCOMPONENTS / "rosenbrock_jax"),
                  request=hvp_request(x, a, b, w, v, inputs=("x", "a", "b")))
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    want = w * rosenbrock_hessian(x, a, b) @ np.concatenate([v["x"], [v["a"], v["b"]]])
    # exact to rounding: finite differences would be off by far more
    np.testing.assert_allclose(array_of(out["x"]), want[:4], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(array_of(out["a"]), want[4], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(array_of(out["b"]), want[5], rtol=1e-12, atol=1e-12)


def test_cli_hvp_of_a_tesseract_api_without_hvp_is_central_differences_of_its_vjp():
    # affine: y = a x + 1, so d/d(x, a) of g . y along (vx, va) is (va g, vx . g)
    g, vx, va = [1.0, -2.0, 0.5], [0.3, 0.1, -1.0], 2.0
    req = {**AFFINE, "cotangent_vector": {"y": g}, "tangent_vector": {"x": vx, "a": va}}
    run = run_cli("hvp", *NO_ENV, str(PYCOMPONENTS / "affine"), request=req)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    np.testing.assert_allclose(array_of(out["x"]), va * np.asarray(g), rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(array_of(out["a"]), np.dot(vx, g), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("fmt", ["json+base64", "json+binref"])
def test_cli_hvp_writes_every_output_format(tmp_path, fmt):
    args = ["hvp", "-f", fmt]
    if fmt == "json+binref":
        args += ["--output-path", str(tmp_path)]
    run = run_cli(*args, str(plugin_path("rosenbrock")),
                  request=hvp_request([1, 2], 1, 100, 1.0, {"x": [0, 1]}))
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)["x"]["data"]
    assert data["encoding"] == fmt.split("+")[1]
    if fmt == "json+base64":
        assert array_of(json.loads(run.stdout)["x"]).tolist() == [-400.0, 200.0]
    else:
        path, offset = data["buffer"].rsplit(":", 1)
        raw = (tmp_path / path).read_bytes()[int(offset):int(offset) + 16]
        assert np.frombuffer(raw, "<f8").tolist() == [-400.0, 200.0]


@pytest.mark.parametrize("request_text, loc, needle", [
    (hvp_request([1, 2], 1, 100, 1.0, {}), ["body", "tangent_vector", "x"],
     "missing; every field of \"hvp_inputs\" needs one"),
    ({**hvp_request([1, 2], 1, 100, 1.0, {"x": [1, 0]}), "hvp_inputs": ["x", "x"]},
     ["body", "hvp_inputs", 1], "\"x\" is named twice in \"hvp_inputs\""),
    ({k: v for k, v in hvp_request([1, 2], 1, 100, 1.0, {"x": [1, 0]}).items()
      if k != "cotangent_vector"}, ["body", "cotangent_vector"],
     "the payload lacks \"cotangent_vector\""),
])
def test_cli_hvp_refuses_a_bad_request_naming_the_field(request_text, loc, needle):
    run = run_cli("hvp", "--error-format", "json", str(plugin_path("rosenbrock")),
                  request=request_text)
    assert run.returncode != 0
    detail = json.loads(run.stderr.strip().splitlines()[-1])["detail"][0]
    assert detail["loc"] == loc
    assert needle in detail["msg"]


def test_cli_help_lists_hvp_and_its_payload():
    main = subprocess.run([str(TESSERA), "--help"], capture_output=True, text=True)
    assert "hvp" in main.stdout and "Hessian-vector product" in main.stdout
    own = subprocess.run([str(TESSERA), "hvp", "--help"], capture_output=True, text=True)
    assert own.returncode == 0
    for key in ("hvp_inputs", "hvp_outputs", "cotangent_vector", "tangent_vector"):
        assert key in own.stdout
    alias = subprocess.run([str(TESSERA), "hessian-vector-product", "--help"],
                           capture_output=True, text=True)
    # the same help, under the name it was called by
    assert alias.stdout.replace("hessian-vector-product", "hvp") == own.stdout


@pytest.fixture(scope="module")
def rosenbrock_served():
    from test_serve import Served
    s = Served(plugin_path("rosenbrock"), "--option", "log_level=off")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def affine_served_without_hvp():
    """A component with a vjp and no hvp of its own, served with
    hvp_fallback=off: the server has no hvp to offer."""
    from test_serve import Served
    s = Served(str(PYCOMPONENTS / "affine"), *NO_ENV, "--option", "log_level=off", "--option",
               "hvp_fallback=off")
    yield s
    s.stop()


AFFINE = {"inputs": {"x": [1.0, 2.0, 3.0], "a": 4.0}, "hvp_inputs": ["x", "a"],
          "hvp_outputs": ["y"], "cotangent_vector": {"y": [1.0, -2.0, 0.5]},
          "tangent_vector": {"x": [0.3, 0.1, -1.0], "a": 2.0}}


def test_serve_answers_post_hvp_and_lists_it(rosenbrock_served):
    url = rosenbrock_served.url
    doc = requests.get(url + "/openapi.json", timeout=30).json()
    assert "/hvp" in doc["paths"]
    ref = doc["paths"]["/hvp"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert ref["$ref"].endswith("/HVPInputSchema")
    model = doc["components"]["schemas"]["HVPInputSchema"]
    assert set(model["required"]) == {"inputs", "hvp_inputs", "hvp_outputs", "cotangent_vector",
                                      "tangent_vector"}
    r = requests.post(url + "/hvp", json=hvp_request([1, 2], 1, 100, 0.5, {"x": [1, 0]}),
                      timeout=60)
    assert r.status_code == 200, r.text
    assert array_of(r.json()["x"]).tolist() == [201.0, -200.0]
    r = requests.post(url + "/hvp", json=hvp_request([1, 2], 1, 100, 1.0, {"x": [0, 1]}),
                      headers={"Accept": "application/json+base64"}, timeout=60)
    assert r.status_code == 200 and r.json()["x"]["data"]["encoding"] == "base64"
    assert array_of(r.json()["x"]).tolist() == [-400.0, 200.0]
    bad = requests.post(url + "/hvp", json=hvp_request([1, 2], 1, 100, 1.0, {"a": 1}), timeout=60)
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["body", "tangent_vector", "a"]
    assert requests.get(url + "/hvp", timeout=30).status_code == 405
    page = requests.get(url + "/docs", timeout=30).text
    assert "<code>hvp</code>" in page and "tangent_vector" in page


def test_serve_lists_no_hvp_where_the_component_has_none(affine_served_without_hvp):
    url = affine_served_without_hvp.url
    doc = requests.get(url + "/openapi.json", timeout=30).json()
    assert "/vector_jacobian_product" in doc["paths"]
    assert "/hvp" not in doc["paths"]
    assert "HVPInputSchema" not in doc["components"]["schemas"]
    assert requests.post(url + "/hvp", json=AFFINE, timeout=60).status_code == 404
    assert "not available" in requests.get(url + "/docs", timeout=30).text


def hvp_badge(component: str, *options: str) -> str:
    """How `tessera docs` says hvp is served."""
    page = subprocess.run([str(TESSERA), "docs", *options, component], capture_output=True,
                          text=True, timeout=120)
    assert page.returncode == 0, page.stderr
    return page.stdout.split("<code>hvp</code> ", 1)[1].split("</span>", 1)[0]


def test_a_remote_component_uses_the_servers_hvp(rosenbrock_served):
    assert "implemented" in hvp_badge(rosenbrock_served.url)
    run = run_cli("hvp", rosenbrock_served.url,
                  request=hvp_request([1, 2], 1, 100, 0.5, {"x": [1, 0]}))
    assert run.returncode == 0, run.stderr
    assert array_of(json.loads(run.stdout)["x"]).tolist() == [201.0, -200.0]


def test_a_remote_component_without_a_served_hvp_falls_back_to_its_vjp(
        affine_served_without_hvp):
    # the client differentiates the server's vjp: (va g, vx . g)
    assert "central differences of vjp" in hvp_badge(affine_served_without_hvp.url)
    run = run_cli("hvp", affine_served_without_hvp.url, request=AFFINE)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    g = np.asarray(AFFINE["cotangent_vector"]["y"])
    np.testing.assert_allclose(array_of(out["x"]), 2.0 * g, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(array_of(out["a"]), np.dot([0.3, 0.1, -1.0], g), rtol=1e-6,
                               atol=1e-9)
    off = run_cli("hvp", "--option", "hvp_fallback=off", affine_served_without_hvp.url,
                  request=AFFINE)
    assert off.returncode != 0
    assert "hvp" in off.stderr


def _glue():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "tessera_pycomponent", ROOT / "backends" / "python" / "tessera_pycomponent.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_glue_gives_hvp_its_cotangents_then_its_tangents():
    from conftest import paths_kept
    glue = _glue()
    with paths_kept():
        comp = glue.load(str(PYCOMPONENTS / "rosenbrock_jax" / "tesseract_api.py"))
        assert "hvp" in comp.endpoints
        x = np.array([0.5, -1.0, 2.0])
        inputs = [x, np.array(1.0), np.array(10.0)]
        w, vx = np.array(2.0), np.array([1.0, 0.0, -1.0])
        (got,) = comp.hvp(inputs, [0], [0], [w, vx])
        want = 2.0 * rosenbrock_hessian(x, 1.0, 10.0)[:3, :3] @ vx
        np.testing.assert_allclose(got, want, rtol=1e-12)
        with pytest.raises(ValueError, match="1 seeds for 1 outputs and 1 inputs"):
            comp.hvp(inputs, [0], [0], [w])
        affine = glue.load(str(PYCOMPONENTS / "affine" / "tesseract_api.py"))
        assert "hvp" not in affine.endpoints and "vjp" in affine.endpoints
        assert "central differences of vjp" in hvp_badge(str(PYCOMPONENTS / "affine"), *NO_ENV)
        assert "implemented" in hvp_badge(str(PYCOMPONENTS / "rosenbrock_jax"), *NO_ENV)
        with pytest.raises(NotImplementedError, match="no hvp"):
            affine.hvp([x, np.array(1.0)], [0], [0], [x, x])
