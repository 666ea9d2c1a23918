# SPDX-License-Identifier: MIT
"""A UM-Bridge model (protocol 1.0) opened as a Tessera component.

Good paths against models served by `umbridge.serve_models` (umbridge_models.py:
"quad" with Gradient, ApplyJacobian and ApplyHessian written out by hand,
"plain" with Evaluate only), compared with the same models called directly in
this interpreter. Hostile answers come from a small http.server in this
process that answers each route as a test tells it.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from conftest import BUILD
from servers import Server, ServerError

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import umbridge_models  # noqa: E402

TESSERA = BUILD / "bin" / "tessera"
X = np.array([1.5, -0.5])
Y = np.array([2.0])


def _info_answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/Info", timeout=1) as r:
            return "protocolVersion" in json.loads(r.read())
    except (OSError, ValueError):
        return False


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """quad and plain on one umbridge.serve_models server: its URL."""
    s = Server([sys.executable, HERE / "umbridge_models.py", "{port}", "quad", "plain"],
               what="umbridge.serve_models")
    try:
        deadline = time.monotonic() + 60
        while not _info_answers(s.url):
            if s.proc.poll() is not None or time.monotonic() > deadline:
                raise ServerError(f"the UM-Bridge server did not start:\n{s.output(2000)}")
            time.sleep(0.05)
        yield s.url
    finally:
        s.stop()
        s.remove_log()


@pytest.fixture(scope="module")
def only_quad() -> Iterator[str]:
    """A server with one model, quad."""
    s = Server([sys.executable, HERE / "umbridge_models.py", "{port}", "quad"],
               what="umbridge.serve_models")
    try:
        deadline = time.monotonic() + 60
        while not _info_answers(s.url):
            if s.proc.poll() is not None or time.monotonic() > deadline:
                raise ServerError(f"the UM-Bridge server did not start:\n{s.output(2000)}")
            time.sleep(0.05)
        yield s.url
    finally:
        s.stop()
        s.remove_log()


QUAD = umbridge_models.Quad()


def _inputs() -> dict[str, np.ndarray]:
    return {"in0": X.copy(), "in1": Y.copy()}


# ---- the schema and apply ----------------------------------------------------------

def test_a_model_named_by_the_fragment_opens_with_vectors_of_its_declared_sizes(server):
    with tessera.load(server + "#quad") as c:
        assert c.name == "quad"
        assert [(f.name, f.dims, str(f.dtype)) for f in c.schema.inputs] == \
            [("in0", (2,), "float64"), ("in1", (1,), "float64")]
        assert [(f.name, f.dims) for f in c.schema.outputs] == [("out0", (1,)), ("out1", (2,))]
        assert {"apply", "vjp", "jvp"} <= set(c.endpoints)


def test_apply_equals_the_models_evaluate(server):
    with tessera.load(server + "#quad") as c:
        out = c.apply(_inputs())
    want = QUAD([X.tolist(), Y.tolist()])
    np.testing.assert_array_equal(out["out0"], want[0])
    np.testing.assert_array_equal(out["out1"], want[1])


def test_config_keys_travel_as_the_config_object_to_every_request(server):
    with tessera.load(server + "#quad", config={"scale": "3"}) as c:
        out = c.apply(_inputs())
        g = c.vjp(_inputs(), ["in0"], ["out0"], {"out0": np.array([1.0])})
    want = QUAD([X.tolist(), Y.tolist()], {"scale": 3})
    np.testing.assert_array_equal(out["out0"], want[0])
    np.testing.assert_allclose(g["in0"], QUAD.gradient(0, 0, [X, Y], [1.0], {"scale": 3}))


def test_sizes_come_from_the_config(server):
    with tessera.load(server + "#plain", config={"n": "5"}) as c:
        assert c.schema.inputs[0].dims == (5,)
        np.testing.assert_array_equal(c.apply({"in0": np.arange(5.0)})["out0"], 2 * np.arange(5.0))


def test_the_option_umbridge_model_names_the_model(server):
    with tessera.load(server, umbridge_model="plain") as c:
        assert c.name == "plain"


def test_a_fragment_and_an_option_naming_two_models_are_refused(server):
    with pytest.raises(tessera.ArgumentError, match="'quad'.*umbridge_model 'plain'"):
        tessera.load(server + "#quad", umbridge_model="plain")


def test_two_models_on_one_server_open_by_fragment(server):
    with tessera.load(server + "#quad") as q, tessera.load(server + "#plain") as p:
        assert (q.name, p.name) == ("quad", "plain")
        np.testing.assert_array_equal(p.apply({"in0": np.ones(3)})["out0"], 2 * np.ones(3))
        np.testing.assert_array_equal(q.apply(_inputs())["out1"], QUAD([X, Y])[1])


def test_an_empty_fragment_opens_the_only_model_of_a_server(only_quad):
    with tessera.load(only_quad + "#") as c:
        assert c.name == "quad"


def test_an_empty_fragment_on_a_server_of_two_models_lists_them(server):
    with pytest.raises(tessera.LoadError, match="2 models \\('quad', 'plain'\\).*fragment"):
        tessera.load(server + "#")


def test_an_unknown_model_name_is_a_load_error_listing_the_models(server):
    with pytest.raises(tessera.LoadError, match="no model 'nope' \\(its models: 'quad', 'plain'\\)"):
        tessera.load(server + "#nope")


def test_a_bare_url_stays_with_the_remote_backend_which_says_how_to_open_umbridge(server):
    # Tesseract's /openapi.json is what a bare URL is read from; the message
    # then names the UM-Bridge server's first model and the option.
    with pytest.raises(tessera.LoadError,
                       match="openapi.json.*UM-Bridge server with 2 model.*#quad.*umbridge_model"):
        tessera.load(server)


# ---- derivatives ----------------------------------------------------------------------

def test_vjp_sums_gradient_over_the_cotangents_outputs(server):
    w0, w1 = np.array([0.7]), np.array([-1.0, 2.5])
    with tessera.load(server + "#quad") as c:
        g = c.vjp(_inputs(), ["in0", "in1"], ["out0", "out1"], {"out0": w0, "out1": w1})
    p = [X, Y]
    for k, name in enumerate(["in0", "in1"]):
        want = np.add(QUAD.gradient(0, k, p, w0), QUAD.gradient(1, k, p, w1))
        np.testing.assert_allclose(g[name], want, rtol=1e-15)


def test_jvp_sums_apply_jacobian_over_the_tangents_inputs(server):
    v0, v1 = np.array([0.3, -2.0]), np.array([1.25])
    with tessera.load(server + "#quad") as c:
        t = c.jvp(_inputs(), ["in0", "in1"], ["out0", "out1"], {"in0": v0, "in1": v1})
    p = [X, Y]
    for o, name in enumerate(["out0", "out1"]):
        want = np.add(QUAD.apply_jacobian(o, 0, p, v0), QUAD.apply_jacobian(o, 1, p, v1))
        np.testing.assert_allclose(t[name], want, rtol=1e-15)


_HAS_HVP = hasattr(tessera.Component, "hvp")


@pytest.mark.skipif(not _HAS_HVP, reason="Component.hvp is not in this build's Python package")
def test_hvp_sums_apply_hessian_over_cotangents_and_tangents(server):
    w = {"out0": np.array([0.7]), "out1": np.array([-1.0, 2.5])}
    v = {"in0": np.array([0.3, -2.0]), "in1": np.array([1.25])}
    with tessera.load(server + "#quad") as c:
        h = c.hvp(_inputs(), ["in0", "in1"], ["out0", "out1"], w, v)
    p = [X, Y]
    for k, name in enumerate(["in0", "in1"]):
        want = sum(np.asarray(QUAD.apply_hessian(o, k, j, p, w[f"out{o}"], v[f"in{j}"]))
                   for o in range(2) for j in range(2))
        np.testing.assert_allclose(h[name], want, rtol=1e-15)


@pytest.mark.skipif(not _HAS_HVP, reason="Component.hvp is not in this build's Python package")
def test_jax_hessian_through_tessera_jax_uses_apply_hessian(server):
    with tessera.load(server + "#quad") as c:
        def f(x):
            return tessera.jax.apply(c, {"in0": x, "in1": jnp.asarray(Y)})["out0"][0]

        hess = jax.hessian(f)(jnp.asarray(X))
    np.testing.assert_allclose(hess, [[2 * Y[0], 0.0], [0.0, 6 * X[1]]], rtol=1e-14)


def test_a_model_without_gradient_has_no_vjp(server):
    with tessera.load(server + "#plain") as c:
        assert "vjp" not in c.endpoints and "jvp" not in c.endpoints
        assert not c.schema.inputs[0].differentiable
        with pytest.raises(tessera.TesseraError):
            c.vjp({"in0": np.ones(3)}, ["in0"], ["out0"], {"out0": np.ones(3)})


def test_jax_grad_through_tessera_jax_uses_gradient(server):
    with tessera.load(server + "#quad") as c:
        def loss(x, y):
            out = tessera.jax.apply(c, {"in0": x, "in1": y})
            return jnp.sum(out["out0"]) + jnp.sum(out["out1"] ** 2)

        gx, gy = jax.grad(loss, argnums=(0, 1))(jnp.asarray(X), jnp.asarray(Y))
    out1 = np.asarray(QUAD([X, Y])[1])
    want_x = np.add(QUAD.gradient(0, 0, [X, Y], [1.0]), QUAD.gradient(1, 0, [X, Y], 2 * out1))
    want_y = np.add(QUAD.gradient(0, 1, [X, Y], [1.0]), QUAD.gradient(1, 1, [X, Y], 2 * out1))
    np.testing.assert_allclose(gx, want_x, rtol=1e-14)
    np.testing.assert_allclose(gy, want_y, rtol=1e-14)


def test_worker_mode_opens_the_model_named_by_the_fragment(server):
    with tessera.load(server + "#quad", mode="worker") as c:
        out = c.apply(_inputs())
        g = c.vjp(_inputs(), ["in0"], ["out0"], {"out0": np.array([1.0])})
    np.testing.assert_array_equal(out["out0"], QUAD([X, Y])[0])
    np.testing.assert_allclose(g["in0"], QUAD.gradient(0, 0, [X, Y], [1.0]))


def test_worker_mode_refuses_the_option_that_cannot_reach_it(server):
    with pytest.raises(tessera.ArgumentError, match="fragment"):
        tessera.load(server, mode="worker", umbridge_model="quad")


# ---- the CLI ------------------------------------------------------------------------------

def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(TESSERA), *args], capture_output=True, text=True, timeout=120)


def test_tessera_apply_on_the_cli_with_the_url(server):
    payload = json.dumps({"inputs": {"in0": X.tolist(), "in1": Y.tolist()}})
    r = _cli("apply", server + "#quad", payload)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    got = out["out1"]["data"]["buffer"] if isinstance(out["out1"], dict) else out["out1"]
    np.testing.assert_allclose(got, QUAD([X, Y])[1])


def test_tessera_check_gradients_passes_for_the_analytic_model(server):
    payload = json.dumps({"inputs": {"in0": X.tolist(), "in1": Y.tolist()}})
    r = _cli("check-gradients", server + "#quad", payload)
    assert r.returncode == 0, r.stdout + r.stderr
    # Both derivatives were compared, not skipped.
    for endpoint in ("jvp", "vjp"):
        assert re.search(rf"^{endpoint}\s+finite diff\.\s+[1-9]\d*\s+0\s", r.stdout, re.M), r.stdout
    assert "result: passed" in r.stdout


def test_tessera_serve_serves_a_umbridge_model_as_a_tesseract(server):
    s = Server([str(TESSERA), "serve", server + "#quad", "--port", "{port}"], what="tessera serve")
    try:
        s.wait_healthy()
        body = json.dumps({"inputs": {"in0": X.tolist(), "in1": Y.tolist()}}).encode()
        req = urllib.request.Request(s.url + "/apply", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=30) as r:
            out = json.loads(r.read())
        np.testing.assert_allclose(out["out1"]["data"]["buffer"], QUAD([X, Y])[1])
    finally:
        s.stop()
        s.remove_log()


# ---- hostile servers ---------------------------------------------------------------------

GOOD = {
    "Info": {"protocolVersion": 1.0, "models": ["m"]},
    "ModelInfo": {"support": {"Evaluate": True, "Gradient": True, "ApplyJacobian": False,
                              "ApplyHessian": False}},
    "InputSizes": {"inputSizes": [2]},
    "OutputSizes": {"outputSizes": [2]},
    "Evaluate": {"output": [[1.0, 2.0]]},
    "Gradient": {"output": [3.0, 4.0]},
}


class _Hostile(http.server.BaseHTTPRequestHandler):
    """Answers each route from the server's table: a dict (JSON, 200), a
    (status, bytes) pair, or a callable that takes the handler."""

    protocol_version = "HTTP/1.1"

    def _answer(self) -> None:
        route = self.path.strip("/")
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        ans = self.server.table.get(route, (404, b"no such route"))
        if callable(ans):
            ans(self)
            return
        status, body = (200, json.dumps(ans).encode()) if isinstance(ans, dict) else ans
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _answer

    def log_message(self, *args) -> None:
        pass


@contextlib.contextmanager
def hostile(**routes) -> Iterator[str]:
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hostile)
    srv.daemon_threads = True
    srv.table = {**GOOD, **routes}
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def _raw(text: bytes, status: int = 200):
    return (status, text)


def test_an_answer_of_the_wrong_size_is_a_result_error_naming_evaluate():
    with hostile(Evaluate={"output": [[1.0, 2.0, 3.0]]}) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.PluginResultError, match="/Evaluate.*has 3 values, the model declares 2"):
            c.apply({"in0": np.ones(2)})


def test_a_gradient_of_the_wrong_size_is_a_result_error_naming_gradient():
    with hostile(Gradient={"output": [1.0]}) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.PluginResultError, match="/Gradient.*has 1 values"):
            c.vjp({"in0": np.ones(2)}, ["in0"], ["out0"], {"out0": np.ones(2)})


def test_a_value_that_is_not_a_number_is_a_result_error():
    with hostile(Evaluate={"output": [[1.0, "two"]]}) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.PluginResultError, match=r"output\[0\] \(out0\)\[1\] is not a number"):
            c.apply({"in0": np.ones(2)})


def test_nan_in_an_answer_which_json_forbids_is_a_result_error():
    with hostile(Evaluate=_raw(b'{"output": [[1.0, NaN]]}')) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.PluginResultError, match="/Evaluate: the answer is not JSON"):
            c.apply({"in0": np.ones(2)})


def test_nan_in_an_input_is_refused_before_it_is_sent():
    with hostile() as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.ValueNotAllowedError, match=r"in0\[1\] is nan.*cannot carry"):
            c.apply({"in0": np.array([1.0, np.nan])})


def test_an_oversized_answer_is_refused_by_max_payload_bytes():
    big = json.dumps({"output": [[1.0, 2.0]], "pad": "x" * 100_000}).encode()
    with hostile(Evaluate=_raw(big)) as url, \
            tessera.load(url + "#m", max_payload_bytes="16K") as c:
        with pytest.raises(tessera.LimitError, match="max_payload_bytes"):
            c.apply({"in0": np.ones(2)})


def test_an_error_body_in_umbridges_shape_names_its_type_message_and_endpoint():
    err = json.dumps({"error": {"type": "InvalidOutput", "message": "solver diverged"}}).encode()
    with hostile(Evaluate=_raw(err, 500)) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.PluginResultError,
                           match="POST .*/Evaluate: HTTP 500: InvalidOutput: solver diverged"):
            c.apply({"in0": np.ones(2)})


def test_an_unsupported_feature_error_is_an_unsupported_error():
    err = json.dumps({"error": {"type": "UnsupportedFeature", "message": "no gradient"}}).encode()
    with hostile(Gradient=_raw(err, 400)) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.UnsupportedError, match="/Gradient: HTTP 400: UnsupportedFeature"):
            c.vjp({"in0": np.ones(2)}, ["in0"], ["out0"], {"out0": np.ones(2)})


def test_a_hanging_server_is_a_timeout_after_timeout_ms():
    release = threading.Event()

    def hang(h):
        release.wait(30)

    with hostile(Evaluate=hang) as url:
        try:
            with tessera.load(url + "#m", timeout_ms=300) as c:
                with pytest.raises(tessera.CallTimeoutError, match="/Evaluate: no answer in time"):
                    c.apply({"in0": np.ones(2)})
        finally:
            release.set()


def test_a_closed_connection_is_a_worker_error_naming_the_route():
    def close(h):
        h.connection.shutdown(socket.SHUT_RDWR)
        h.close_connection = True

    with hostile(Evaluate=close) as url, tessera.load(url + "#m") as c:
        with pytest.raises(tessera.WorkerError, match="/Evaluate"):
            c.apply({"in0": np.ones(2)})


def test_sizes_that_are_not_sizes_are_a_load_error():
    with hostile(InputSizes={"inputSizes": [2, -1]}) as url:
        with pytest.raises(tessera.LoadError, match=r"inputSizes\[1\] is not a size"):
            tessera.load(url + "#m")


def test_another_protocol_version_is_a_load_error():
    with hostile(Info={"protocolVersion": 0.9, "models": ["m"]}) as url:
        with pytest.raises(tessera.LoadError, match="protocol 0.9, Tessera speaks 1.0"):
            tessera.load(url + "#m")


def test_a_server_that_is_not_umbridge_is_a_load_error():
    with hostile(Info=_raw(b"<html>hello</html>")) as url:
        with pytest.raises(tessera.LoadError, match="/Info: the answer is not JSON"):
            tessera.load(url + "#m")
