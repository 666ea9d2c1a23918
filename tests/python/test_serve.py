# SPDX-License-Identifier: MIT
"""`tessera serve` with the real clients: tesseract-core's Tesseract.from_url
for every endpoint and encoding, tesseract-jax under jit, grad and vmap, and
plain HTTP for what clients do not send (tokens, limits, formats, crashes,
files), with results checked against the same component called in-process."""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import requests

import tessera
from conftest import BUILD, ROOT, plugin_path
from servers import Server

TESSERA = BUILD / "bin" / "tessera"
PYCOMPONENTS = ROOT / "tests" / "pycomponents"


class Served(Server):
    """`tessera serve ARGS PATH` on a free port, answering /health, until stop()."""

    def __init__(self, path, *args: str) -> None:
        super().__init__([TESSERA, "serve", "--port", "{port}", *args, path], what="tessera serve")
        try:
            self.wait_healthy(60)
        except Exception:
            self.stop()
            raise

    def stop(self) -> tuple[int, str]:
        """Its exit status and what it wrote."""
        code = super().stop(grace_s=30)
        out = self.output()
        self.remove_log()
        return code, out


@pytest.fixture(scope="module")
def vectoradd():
    s = Served(plugin_path("vectoradd"), "--option", "log_level=off")
    yield s
    s.stop()


INPUTS = {"a": np.array([1.0, 2.0, 3.0]), "b": np.array([4.0, 5.0, 6.0]), "s": np.array(2.0)}


def test_health_and_openapi(vectoradd):
    assert requests.get(vectoradd.url + "/health").json() == {"status": "ok"}
    doc = requests.get(vectoradd.url + "/openapi.json").json()
    assert set(doc["paths"]) >= {"/apply", "/jacobian", "/vector_jacobian_product", "/health"}
    props = doc["components"]["schemas"]["Apply_InputSchema"]["properties"]
    assert props["a"]["properties"]["object_type"]["const"] == "array"
    diff = doc["components"]["schemas"]["ApplyInputSchema"]["differentiable_arrays"]
    assert diff["a"] == {"dtype": "float64", "shape": [None]}


@pytest.mark.parametrize("accept", [None, "application/json", "application/json+base64"])
def test_tesseract_core_client_every_endpoint(vectoradd, accept):
    from tesseract_core import Tesseract
    t = Tesseract.from_url(vectoradd.url)
    if accept:  # the client's session sends what a user would set
        t._client._session.headers["Accept"] = accept
    local = tessera.load(plugin_path("vectoradd"))
    np.testing.assert_array_equal(t.apply(INPUTS)["result"], local.apply(INPUTS)["result"])
    jac = t.jacobian(INPUTS, jac_inputs=["a", "s"], jac_outputs=["result"])
    want = local.jacobian(INPUTS, ["a", "s"], ["result"])
    np.testing.assert_array_equal(jac["result"]["a"], want["result"]["a"])
    np.testing.assert_array_equal(jac["result"]["s"], want["result"]["s"])
    g = t.vector_jacobian_product(INPUTS, vjp_inputs=["a"], vjp_outputs=["result"],
                                  cotangent_vector={"result": np.ones(3)})
    np.testing.assert_array_equal(g["a"], local.vjp(INPUTS, ["a"], ["result"],
                                                   {"result": np.ones(3)})["a"])
    d = t.jacobian_vector_product(INPUTS, jvp_inputs=["s"], jvp_outputs=["result"],
                                  tangent_vector={"s": np.array(1.0)})
    np.testing.assert_array_equal(d["result"], INPUTS["a"])
    local.close()


def test_a_bad_request_is_a_validation_error_naming_the_field(vectoradd):
    from pydantic import ValidationError
    from tesseract_core import Tesseract
    t = Tesseract.from_url(vectoradd.url)
    with pytest.raises(ValidationError) as info:
        t.apply({**INPUTS, "b": np.array([1.0, 2.0])})
    err = info.value.errors()[0]
    assert err["loc"] == ("body", "inputs", "b") and "dimension 0 is 2" in err["msg"]
    r = requests.post(vectoradd.url + "/apply", json={"inputs": {"a": [1.0]}})
    assert r.status_code == 422
    detail = r.json()["detail"][0]
    assert detail["type"] == "missing" and "b" in detail["msg"]


def test_tesseract_jax_under_jit_grad_and_vmap(vectoradd):
    from tesseract_core import Tesseract
    from tesseract_jax import apply_tesseract
    t = Tesseract.from_url(vectoradd.url)

    def f(a, b, s):
        return apply_tesseract(t, {"a": a, "b": b, "s": s}, vmap_method="sequential")["result"]

    a, b, s = jnp.array(INPUTS["a"]), jnp.array(INPUTS["b"]), jnp.array(2.0)
    np.testing.assert_allclose(jax.jit(f)(a, b, s), 2 * a + b)
    ga, gs = jax.grad(lambda a, s: jnp.sum(f(a, b, s) ** 2), argnums=(0, 1))(a, s)
    y = 2 * a + b
    np.testing.assert_allclose(ga, 2 * y * 2.0)
    np.testing.assert_allclose(gs, 2 * jnp.dot(y, a))
    batch = jax.vmap(f, in_axes=(0, None, None))(jnp.stack([a, a + 1]), b, s)
    np.testing.assert_allclose(batch, jnp.stack([2 * a + b, 2 * (a + 1) + b]))


def test_formats_the_server_cannot_write_are_refused(vectoradd):
    r = requests.post(vectoradd.url + "/apply", json={"inputs": {}},
                      headers={"Accept": "text/html"})
    assert r.status_code == 406 and "application/json+base64" in r.json()["detail"]
    r = requests.post(vectoradd.url + "/apply", json={"inputs": {}},
                      headers={"Accept": "application/json+binref"})
    assert r.status_code == 406  # no --output-path
    r = requests.post(vectoradd.url + "/apply",
                      json={"inputs": {"a": [1.0], "b": [2.0], "s": 1.0}},
                      headers={"Accept": "text/html;q=0.9, application/json+base64;q=0.5"})
    assert r.ok and r.json()["result"]["data"]["encoding"] == "base64"


def test_routes_methods_and_missing_endpoints():
    s = Served(PYCOMPONENTS / "raising", "--quiet")  # apply only
    try:
        assert requests.post(s.url + "/jacobian", json={}).status_code == 404
        assert requests.get(s.url + "/apply").status_code == 405
        assert requests.post(s.url + "/health").status_code == 405
        assert "/jacobian" not in requests.get(s.url + "/openapi.json").json()["paths"]
    finally:
        s.stop()


def test_token_size_limit_and_graceful_stop(tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret-token\n")
    s = Served(plugin_path("noop"), "--token-file", str(token), "--max-body-bytes", "200")
    try:
        body = {"inputs": {"x": [1.0, 2.0]}}
        assert requests.post(s.url + "/apply", json=body).status_code == 401
        assert requests.get(s.url + "/openapi.json").status_code == 401
        bad = {"Authorization": "Bearer s3cret-tokeN"}
        assert requests.post(s.url + "/apply", json=body, headers=bad).status_code == 401
        good = {"Authorization": "Bearer s3cret-token"}
        assert requests.post(s.url + "/apply", json=body, headers=good).ok
        big = {"inputs": {"x": list(range(100))}}
        assert requests.post(s.url + "/apply", json=big, headers=good).status_code == 413
    finally:
        code, err = s.stop()
    assert code == 0 and "SIGTERM: stopping" in err
    assert "POST /apply 401" in err and "POST /apply 413" in err


def test_component_failures_are_500_with_the_cause_and_the_server_lives_on():
    s = Served(PYCOMPONENTS / "crashing", "--mode", "worker", "--option", "restart=auto",
               "--option", "log_level=off", "--quiet")
    try:
        r = requests.post(s.url + "/apply", json={"inputs": {"x": [-1.0]}})
        assert r.status_code == 500
        body = r.json()
        assert body["component"] == "crashing" and "signal 6" in body["detail"]
        r = requests.post(s.url + "/apply", json={"inputs": {"x": [2.0]}})
        assert r.ok and r.json()["y"]["data"]["buffer"] == [4.0]
    finally:
        s.stop()
    s = Served(PYCOMPONENTS / "raising", "--quiet")
    try:
        r = requests.post(s.url + "/apply", json={"inputs": {"x": [1.0, -2.0]}})
        assert r.status_code == 500 and "ValueError: negative input at index 1" in r.json()[
            "detail"]
    finally:
        s.stop()


def test_binref_files_stay_in_their_directories(tmp_path):
    inputs, outputs = tmp_path / "in", tmp_path / "out"
    inputs.mkdir()
    outputs.mkdir()
    np.arange(4.0).tofile(inputs / "x.bin")
    (tmp_path / "secret.bin").write_bytes(np.ones(4).tobytes())
    ref = {"object_type": "array", "shape": [4], "dtype": "float64",
           "data": {"buffer": "x.bin:0", "encoding": "binref"}}
    s = Served(plugin_path("noop"), "--quiet", "--input-path", str(inputs), "--output-path",
               str(outputs))
    try:
        r = requests.post(s.url + "/apply", json={"inputs": {"x": ref}},
                          headers={"Accept": "application/json+binref"})
        assert r.ok, r.text
        out = r.json()["y"]["data"]
        name, offset = out["buffer"].rsplit(":", 1)
        np.testing.assert_array_equal(np.fromfile(outputs / name, offset=int(offset), count=4),
                                      np.arange(4.0))
        escape = json.loads(json.dumps(ref).replace("x.bin", "../secret.bin"))
        r = requests.post(s.url + "/apply", json={"inputs": {"x": escape}})
        assert r.status_code == 422 and "secret" in r.text
    finally:
        s.stop()
    s = Served(plugin_path("noop"), "--quiet")  # no --input-path: no file is read
    try:
        r = requests.post(s.url + "/apply", json={"inputs": {"x": ref}})
        assert r.status_code == 422 and "refused" in r.text
    finally:
        s.stop()


def test_a_python_component_served_in_workers_answers_concurrent_clients():
    from concurrent.futures import ThreadPoolExecutor
    s = Served(PYCOMPONENTS / "affine", "--mode", "worker", "--option", "workers=2", "--quiet")
    try:
        def one(k: int):
            x = np.arange(5.0) + k
            r = requests.post(s.url + "/apply", headers={"Accept": "application/json+base64"},
                              json={"inputs": {"x": x.tolist(), "a": 3.0}})
            y = np.frombuffer(base64.b64decode(r.json()["y"]["data"]["buffer"]), np.float64)
            return np.array_equal(y, 3.0 * x + 1)
        with ThreadPoolExecutor(8) as pool:
            assert all(pool.map(one, range(64)))
    finally:
        s.stop()


def test_tessera_serve_from_python_for_notebooks():
    """tessera.serve(component): the same server in this process."""
    from tesseract_core import Tesseract
    comp = tessera.load(plugin_path("vectoradd"))
    with tessera.serve(comp) as server:
        t = Tesseract.from_url(server.url)
        np.testing.assert_array_equal(t.apply(INPUTS)["result"], comp.apply(INPUTS)["result"])
        comp.close()  # the server keeps what it serves alive until it stops
        np.testing.assert_array_equal(t.apply(INPUTS)["result"], 2 * INPUTS["a"] + INPUTS["b"])
    py = tessera.load(PYCOMPONENTS / "affine")  # a Python component, in this interpreter
    with tessera.serve(py, output_format="json+base64") as server:
        r = requests.post(server.url + "/apply", json={"inputs": {"x": [1.0, 2.0], "a": 2.0}})
        y = np.frombuffer(base64.b64decode(r.json()["y"]["data"]["buffer"]), np.float64)
        np.testing.assert_array_equal(y, [3.0, 5.0])
    py.close()


def test_a_component_without_a_worker_left_answers_503():
    s = Served(PYCOMPONENTS / "crashing", "--mode", "worker", "--option", "restart=never",
               "--option", "log_level=off", "--quiet")
    try:
        assert requests.post(s.url + "/apply", json={"inputs": {"x": [-1.0]}}).status_code == 500
        r = requests.post(s.url + "/apply", json={"inputs": {"x": [1.0]}})
        assert r.status_code == 503 and "died earlier" in r.json()["detail"]
    finally:
        s.stop()
