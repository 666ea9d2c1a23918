# SPDX-License-Identifier: MIT
"""`tessera serve` speaking UM-Bridge (protocol 1.0) beside Tesseract's
routes, through the real client (umbridge.HTTPModel), shared memory on and
off, and plain HTTP for what the client never sends: hostile bodies, bad
segment names, segments too small, truncated mid-call or replaced by a
FIFO. Results are checked against the analytic values (rosenbrock) and
against the same server's own Tesseract routes (heat)."""

from __future__ import annotations

import os
import threading
import time
from multiprocessing import shared_memory, resource_tracker

import numpy as np
import pytest
import requests

umbridge = pytest.importorskip("umbridge")

from conftest import BUILD, plugin_path  # noqa: E402
from servers import Server  # noqa: E402

TESSERA = BUILD / "bin" / "tessera"
SHMEM = [False, True]


class Served(Server):
    """`tessera serve ARGS PATH` on a free port, answering /health."""

    def __init__(self, path, *args: str) -> None:
        super().__init__([TESSERA, "serve", "--port", "{port}", "--quiet", *args, path],
                         what="tessera serve")
        try:
            self.wait_healthy(60)
        except Exception:
            self.stop()
            raise

    def post(self, route: str, body) -> requests.Response:
        if isinstance(body, (bytes, str)):
            return requests.post(self.url + route, data=body, timeout=30)
        return requests.post(self.url + route, json=body, timeout=30)

    def stop(self) -> int:
        code = super().stop(grace_s=30)
        self.remove_log()
        return code


@pytest.fixture(scope="module")
def rosen():
    s = Served(plugin_path("rosenbrock"), "--option", "log_level=off")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def rosen_sized():
    s = Served(plugin_path("rosenbrock"), "--option", "log_level=off", "--umbridge-size", "n=4",
               "--max-body-bytes", "65536")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def heat():
    s = Served(plugin_path("heat"), "--option", "log_level=off")
    yield s
    s.stop()


def rosen_value(x, a, b):
    return sum(b * (x[i + 1] - x[i] ** 2) ** 2 + (a - x[i]) ** 2 for i in range(len(x) - 1))


def rosen_grad(x, a, b):
    g = np.zeros(len(x))
    for i in range(len(x) - 1):
        g[i] += -4 * b * x[i] * (x[i + 1] - x[i] ** 2) - 2 * (a - x[i])
        g[i + 1] += 2 * b * (x[i + 1] - x[i] ** 2)
    return g


def rosen_hess(x, a, b):
    n = len(x)
    h = np.zeros((n, n))
    for i in range(n - 1):
        h[i, i] += -4 * b * (x[i + 1] - x[i] ** 2) + 8 * b * x[i] ** 2 + 2
        h[i, i + 1] += -4 * b * x[i]
        h[i + 1, i] += -4 * b * x[i]
        h[i + 1, i + 1] += 2 * b
    return h


X = [0.3, -1.2, 0.8]
A, B = 1.0, 100.0
PARAMS = [X, [A], [B]]


def error_of(r: requests.Response):
    body = r.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"type", "message"}, body
    return r.status_code, body["error"]["type"], body["error"]["message"]


# ---- the protocol through the real client ------------------------------------------


def test_info_names_the_component_as_the_one_model_with_protocol_1(rosen):
    info = requests.get(rosen.url + "/Info", timeout=10).json()
    assert info == {"protocolVersion": 1.0, "models": ["rosenbrock"]}
    assert umbridge.supported_models(rosen.url) == ["rosenbrock"]


def test_model_info_support_follows_the_components_endpoints(rosen):
    m = umbridge.HTTPModel(rosen.url, "rosenbrock")
    assert m.supports_evaluate() and m.supports_gradient() and m.supports_apply_jacobian()
    assert m.supports_apply_hessian()   # rosenbrock has a native hvp


@pytest.mark.parametrize("use_shmem", SHMEM)
def test_rosenbrock_evaluate_gradient_jacobian_hessian_match_analytic(rosen, use_shmem):
    m = umbridge.HTTPModel(rosen.url, "rosenbrock", use_shmem=use_shmem)
    assert m.supports_shmem() == use_shmem
    cfg = {"n": len(X)}   # the shared-memory client asks /InputSizes with it
    out = m(PARAMS, cfg)
    assert out == [[pytest.approx(rosen_value(X, A, B), rel=1e-14)]]
    g = m.gradient(0, 0, PARAMS, [2.0], cfg)
    np.testing.assert_allclose(g, 2.0 * rosen_grad(X, A, B), rtol=1e-13)
    v = [0.5, -1.0, 2.0]
    jv = m.apply_jacobian(0, 0, PARAMS, v, cfg)
    np.testing.assert_allclose(jv, [rosen_grad(X, A, B) @ v], rtol=1e-13)
    hv = m.apply_hessian(0, 0, 0, PARAMS, [1.5], v, cfg)
    np.testing.assert_allclose(hv, 1.5 * rosen_hess(X, A, B) @ v, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("use_shmem", SHMEM)
def test_gradient_with_respect_to_a_scalar_input_is_a_length_1_vector(rosen, use_shmem):
    m = umbridge.HTTPModel(rosen.url, "rosenbrock", use_shmem=use_shmem)
    g = m.gradient(0, 1, PARAMS, [1.0], {"n": 3})     # d value / d a
    assert g == [pytest.approx(sum(2 * (A - X[i]) for i in range(len(X) - 1)), rel=1e-13)]


@pytest.mark.parametrize("use_shmem", SHMEM)
def test_mixed_hessian_block_takes_the_tangent_on_inwrt2_only(rosen, use_shmem):
    """inWrt1 = x, inWrt2 = b: d/db (sens * d value/dx) * vec."""
    m = umbridge.HTTPModel(rosen.url, "rosenbrock", use_shmem=use_shmem)
    hv = m.apply_hessian(0, 0, 2, PARAMS, [1.0], [3.0], {"n": 3})
    x = X
    d2 = np.zeros(3)
    for i in range(2):
        d2[i] += -4 * x[i] * (x[i + 1] - x[i] ** 2)
        d2[i + 1] += 2 * (x[i + 1] - x[i] ** 2)
    np.testing.assert_allclose(hv, 3.0 * d2, rtol=1e-12, atol=1e-12)


def test_sizes_come_from_config_keys_named_after_the_symbol(rosen):
    m = umbridge.HTTPModel(rosen.url, "rosenbrock")
    assert m.get_input_sizes({"n": 5}) == [5, 1, 1]
    assert m.get_output_sizes({"n": 5}) == [1]


def test_sizes_come_from_the_serve_option_and_config_overrides_it(rosen_sized):
    m = umbridge.HTTPModel(rosen_sized.url, "rosenbrock")
    assert m.get_input_sizes() == [4, 1, 1]
    assert m.get_input_sizes({"n": 2}) == [2, 1, 1]


def test_sizes_without_a_size_for_a_symbol_say_which_symbol(rosen):
    status, kind, msg = error_of(rosen.post("/InputSizes", {"name": "rosenbrock"}))
    assert (status, kind) == (400, "InvalidInput")
    assert "symbol 'n'" in msg and "input 0 (x)" in msg and "--umbridge-size n=N" in msg
    status, kind, msg = error_of(rosen.post("/InputSizes",
                                            {"name": "rosenbrock", "config": {"n": -1}}))
    assert (status, kind) == (400, "InvalidInput") and 'config key "n"' in msg


def test_evaluate_takes_symbol_sizes_from_the_inputs_not_the_serve_option(rosen_sized):
    m = umbridge.HTTPModel(rosen_sized.url, "rosenbrock")
    assert m([[1.0, 1.0], [1.0], [100.0]]) == [[0.0]]   # n = 2 here, 4 by the option


# ---- several inputs and outputs, and a field UM-Bridge cannot carry ---------------------


N = 6
HEAT_IN = {"conductivity": [1.0 + 0.1 * i for i in range(N)], "source": [0.5] * N,
           "initial_temperature": [0.0] * N, "observations": [0.1 * i for i in range(N)],
           "dt": 0.01}
HEAT_CFG = {"steps": 5, "n": N}


def heat_vectors():
    return [HEAT_IN["conductivity"], HEAT_IN["source"], HEAT_IN["initial_temperature"],
            HEAT_IN["observations"], [HEAT_IN["dt"]]]


def tesseract_call(server, route, body):
    r = requests.post(server.url + route, json=body, timeout=30)
    assert r.status_code == 200, r.text
    out = r.json()

    def value(v):
        return np.asarray(v["data"]["buffer"] if isinstance(v, dict) else v, dtype=float)

    return {k: value(v) for k, v in out.items()}


def test_heat_sizes_list_each_vector_field_in_schema_order(heat):
    m = umbridge.HTTPModel(heat.url, "heat")
    assert m.get_input_sizes(HEAT_CFG) == [N, N, N, N, 1]   # steps (int64) is no vector
    assert m.get_output_sizes(HEAT_CFG) == [N, 1]


@pytest.mark.parametrize("use_shmem", SHMEM)
def test_heat_matches_the_servers_own_tesseract_routes(heat, use_shmem):
    m = umbridge.HTTPModel(heat.url, "heat", use_shmem=use_shmem)
    inputs = dict(HEAT_IN, steps=HEAT_CFG["steps"])
    ref = tesseract_call(heat, "/apply", {"inputs": inputs})
    out = m(heat_vectors(), HEAT_CFG)
    np.testing.assert_array_equal(out[0], ref["temperature"])
    np.testing.assert_array_equal(out[1], [float(ref["misfit"])])

    vjp = tesseract_call(heat, "/vector_jacobian_product",
                         {"inputs": inputs, "vjp_inputs": ["conductivity"],
                          "vjp_outputs": ["misfit"], "cotangent_vector": {"misfit": 2.0}})
    g = m.gradient(1, 0, heat_vectors(), [2.0], HEAT_CFG)
    np.testing.assert_array_equal(g, vjp["conductivity"])

    t = [1.0, 0.0, -1.0, 0.5, 0.0, 2.0]
    jvp = tesseract_call(heat, "/jacobian_vector_product",
                         {"inputs": inputs, "jvp_inputs": ["source"],
                          "jvp_outputs": ["temperature"], "tangent_vector": {"source": t}})
    jv = m.apply_jacobian(0, 1, heat_vectors(), t, HEAT_CFG)
    np.testing.assert_array_equal(jv, jvp["temperature"])


def test_a_non_vector_field_without_config_or_default_is_invalid_input_naming_it(heat):
    r = heat.post("/Evaluate", {"name": "heat", "input": heat_vectors(), "config": {}})
    status, kind, msg = error_of(r)
    assert (status, kind) == (400, "InvalidInput")
    assert "'steps'" in msg and 'config key "steps"' in msg
    r = heat.post("/Evaluate", {"name": "heat", "input": heat_vectors(),
                                "config": {"steps": "five"}})
    status, kind, msg = error_of(r)
    assert (status, kind) == (400, "InvalidInput") and "steps" in msg


def test_a_text_field_takes_its_default_or_its_config_key():
    s = Served(plugin_path("interp1d"), "--option", "log_level=off")
    try:
        m = umbridge.HTTPModel(s.url, "interp1d")
        params = [[0.4, 1.6], [0.0, 1.0, 2.0], [0.0, 10.0, 20.0]]
        assert m(params) == [[pytest.approx(4.0), pytest.approx(16.0)]]          # linear
        assert m(params, {"method": "previous"}) == [[0.0, 10.0]]
        status, kind, msg = error_of(s.post("/Evaluate", {"name": "interp1d", "input": params,
                                                          "config": {"method": "cubic"}}))
        assert (status, kind) == (400, "InvalidInput") and "method" in msg
    finally:
        s.stop()


def test_a_component_without_hvp_says_apply_hessian_unsupported():
    s = Served(plugin_path("noop"), "--option", "log_level=off", "--option", "hvp_fallback=off")
    try:
        m = umbridge.HTTPModel(s.url, "noop")
        assert m.supports_gradient() and not m.supports_apply_hessian()
        body = {"name": "noop", "outWrt": 0, "inWrt1": 0, "inWrt2": 0, "input": [[1.0]],
                "sens": [1.0], "vec": [1.0]}
        for route in ("/ApplyHessian", "/ApplyHessianShMem"):
            status, kind, msg = error_of(s.post(route, body))
            assert (status, kind) == (400, "UnsupportedFeature") and "ApplyHessian" in msg
    finally:
        s.stop()


# ---- errors --------------------------------------------------------------------------


def test_an_unknown_model_is_model_not_found_on_every_route(rosen):
    for route in ("/ModelInfo", "/InputSizes", "/OutputSizes", "/Evaluate", "/Gradient",
                  "/ApplyJacobian", "/ApplyHessian", "/EvaluateShMem", "/TestShMem"):
        status, kind, msg = error_of(rosen.post(route, {"name": "other", "input": PARAMS}))
        assert (status, kind) == (400, "ModelNotFound"), route
        assert "other" in msg and "rosenbrock" in msg
    with pytest.raises(Exception, match="not supported by server"):
        umbridge.HTTPModel(rosen.url, "other")


BAD = [
    ("/Evaluate", {"input": [[1.0, 2.0], [1.0]]}, "Number of input parameters"),
    ("/Evaluate", {"input": [[1.0, 2.0], [1.0, 2.0], [1.0]]}, "Input parameter 1 (a)"),
    ("/Evaluate", {"input": [[1.0, 2.0], [1.0], ["x"]]}, "input 2 (b): element 0"),
    ("/Evaluate", {"input": [[1.0, 2.0], 1.0, [1.0]]}, "input 1 (a) must be a list"),
    ("/Evaluate", {"input": "no"}, "input must be a list"),
    ("/Evaluate", {"input": PARAMS, "config": [1]}, "config must be a JSON object"),
    ("/Gradient", {"input": PARAMS, "outWrt": 1, "inWrt": 0, "sens": [1.0]}, "outWrt"),
    ("/Gradient", {"input": PARAMS, "outWrt": 0, "inWrt": 3, "sens": [1.0]}, "inWrt"),
    ("/Gradient", {"input": PARAMS, "outWrt": 0, "inWrt": -1, "sens": [1.0]}, "inWrt"),
    ("/Gradient", {"input": PARAMS, "outWrt": 0, "inWrt": 0, "sens": [1.0, 2.0]},
     "sens has invalid length"),
    ("/Gradient", {"input": PARAMS, "outWrt": "0", "inWrt": 0, "sens": [1.0]},
     "outWrt must be an integer"),
    ("/ApplyJacobian", {"input": PARAMS, "outWrt": 0, "inWrt": 0, "vec": [1.0]},
     "vec has invalid length"),
    ("/ApplyHessian", {"input": PARAMS, "outWrt": 0, "inWrt1": 0, "inWrt2": 3, "sens": [1.0],
                       "vec": [1.0]}, "inWrt2"),
    ("/ApplyHessian", {"input": PARAMS, "outWrt": 0, "inWrt1": 0, "inWrt2": 1, "sens": [1.0],
                       "vec": [1.0, 2.0]}, "vec has invalid length"),
]


@pytest.mark.parametrize("route,body,words", BAD, ids=[b[2] for b in BAD])
def test_a_bad_request_is_invalid_input_naming_the_cause(rosen, route, body, words):
    status, kind, msg = error_of(rosen.post(route, dict(body, name="rosenbrock")))
    assert (status, kind) == (400, "InvalidInput")
    assert words in msg, msg


@pytest.mark.parametrize("text", [b"", b"{", b"[1, 2]", b"\xff\xfe", b'{"name": "rosenbrock"'])
def test_a_body_that_is_not_a_json_object_is_invalid_input(rosen, text):
    status, kind, msg = error_of(rosen.post("/Evaluate", text))
    assert (status, kind) == (400, "InvalidInput") and "JSON object" in msg


def test_a_body_over_max_body_bytes_is_refused_in_umbridge_shape(rosen_sized):
    big = {"name": "rosenbrock", "input": [[1.0] * 20000, [1.0], [1.0]]}
    status, kind, msg = error_of(rosen_sized.post("/Evaluate", big))
    assert (status, kind) == (413, "InvalidInput") and "max_body_bytes" in msg


def test_a_result_json_cannot_carry_is_invalid_output(rosen):
    status, kind, msg = error_of(rosen.post("/Evaluate", {"name": "rosenbrock",
                                                          "input": [[1e200, 1e200], [1.0], [1.0]]}))
    assert (status, kind) == (500, "InvalidOutput") and "not finite" in msg


def test_a_model_failure_is_invalid_output_with_status_500(heat):
    vecs = heat_vectors()
    vecs[0] = [-1.0] * N    # conductivity must be > 0: the component refuses it
    status, kind, msg = error_of(heat.post("/Evaluate", {"name": "heat", "input": vecs,
                                                         "config": HEAT_CFG}))
    assert status in (400, 500)
    assert kind == ("InvalidOutput" if status == 500 else "InvalidInput")
    assert "conductivity" in msg


def test_wrong_methods_get_405_and_tesseract_routes_still_answer(rosen):
    assert requests.post(rosen.url + "/Info", timeout=10).status_code == 405
    assert requests.get(rosen.url + "/Evaluate", timeout=10).status_code == 405
    r = requests.post(rosen.url + "/apply", json={"inputs": {"x": X, "a": A, "b": B}}, timeout=10)
    assert r.status_code == 200


# ---- shared memory from a hostile client ---------------------------------------------


class Segments:
    """Segments this test creates, removed at the end whatever happens."""

    def __init__(self):
        self.held = []

    def make(self, name: str, values=None, size: int | None = None):
        size = size if size is not None else 8 * len(values)
        shm = shared_memory.SharedMemory(name, create=True, size=size)
        if values is not None:
            np.ndarray((len(values),), dtype=np.float64, buffer=shm.buf)[:] = values
        self.held.append(shm)
        return shm

    def close(self):
        for shm in self.held:
            shm.close()
            try:
                shm.unlink()
            except FileNotFoundError:
                resource_tracker.unregister(shm._name, "shared_memory")


@pytest.fixture
def segments():
    s = Segments()
    yield s
    s.close()


def shm_body(prefix, tid, sizes, **extra):
    body = {"name": "rosenbrock", "shmem_name": prefix, "tid": tid,
            "shmem_num_inputs": len(sizes), "config": {}}
    body.update({f"shmem_size_{i}": n for i, n in enumerate(sizes)})
    body.update(extra)
    return body


def tid_here():
    return f"t{os.getpid()}"


def test_shm_evaluate_by_hand_reads_and_writes_the_clients_segments(rosen, segments):
    tid = tid_here()
    for i, v in enumerate(PARAMS):
        segments.make(f"/umb_in_{tid}_{i}", v)
    out = segments.make(f"/umb_out_{tid}_0", [0.0])
    r = rosen.post("/EvaluateShMem", shm_body("/umb", tid, [3, 1, 1]))
    assert r.status_code == 200 and r.json() == {}
    assert np.ndarray((1,), dtype=np.float64, buffer=out.buf)[0] == \
        pytest.approx(rosen_value(X, A, B), rel=1e-14)


@pytest.mark.parametrize("prefix,tid,words", [
    ("/a/b", "1", "shmem_name"), ("umb", "1", "shmem_name"), ("/" + "x" * 65, "1", "shmem_name"),
    ("/", "1", "shmem_name"), ("/umb", "../1", "tid"), ("/umb", "1/2", "tid"), ("/umb", "", "tid"),
    ("/umb", "y" * 33, "tid"), (7, "1", "shmem_name"), ("/umb", None, "tid")])
def test_bad_segment_names_are_invalid_input(rosen, prefix, tid, words):
    status, kind, msg = error_of(rosen.post("/EvaluateShMem", shm_body(prefix, tid, [3, 1, 1])))
    assert (status, kind) == (400, "InvalidInput") and words in msg


def test_a_missing_segment_is_invalid_input_naming_it(rosen):
    status, kind, msg = error_of(rosen.post("/EvaluateShMem",
                                            shm_body("/umb_none", tid_here(), [3, 1, 1])))
    assert (status, kind) == (400, "InvalidInput") and "/umb_none_in_" in msg


def test_a_segment_smaller_than_declared_is_refused_before_reading(rosen, segments):
    tid = tid_here()
    segments.make(f"/ums_in_{tid}_0", size=16)   # declared 3 values below: 24 bytes
    segments.make(f"/ums_in_{tid}_1", [1.0])
    segments.make(f"/ums_in_{tid}_2", [1.0])
    status, kind, msg = error_of(rosen.post("/EvaluateShMem", shm_body("/ums", tid, [3, 1, 1])))
    assert (status, kind) == (400, "InvalidInput") and "holds 16 bytes" in msg


def test_an_output_segment_too_small_is_refused(rosen, segments):
    tid = tid_here()
    for i, v in enumerate(PARAMS):
        segments.make(f"/umo_in_{tid}_{i}", v)
    segments.make(f"/umo_out_{tid}_0", [0.0])
    body = shm_body("/umo", tid, [3, 1, 1], outWrt=0, inWrt=0, sens=[1.0])
    status, kind, msg = error_of(rosen.post("/GradientShMem", body))   # needs 3 values
    assert (status, kind) == (400, "InvalidInput") and "_out_" in msg


def test_declared_sizes_over_max_body_bytes_are_refused_before_any_read(rosen_sized):
    body = shm_body("/umbig", tid_here(), [10 ** 6, 1, 1])
    status, kind, msg = error_of(rosen_sized.post("/EvaluateShMem", body))
    assert (status, kind) == (400, "InvalidInput") and "max_body_bytes" in msg
    body = shm_body("/umbig", tid_here(), [-1, 1, 1])
    assert error_of(rosen_sized.post("/EvaluateShMem", body))[1] == "InvalidInput"


def test_a_fifo_in_place_of_a_segment_is_refused_without_hanging(rosen, segments):
    tid = tid_here()
    fifo = f"/dev/shm/umf_in_{tid}_0"
    os.mkfifo(fifo)
    try:
        status, kind, msg = error_of(rosen.post("/EvaluateShMem",
                                                shm_body("/umf", tid, [3, 1, 1])))
        assert (status, kind) == (400, "InvalidInput") and "not a shared-memory segment" in msg
    finally:
        os.unlink(fifo)


def test_segments_truncated_during_calls_never_crash_the_server(rosen, segments):
    """A thread shrinks and regrows the input segment while calls read it:
    each call succeeds or is refused, and the server keeps answering."""
    tid = tid_here()
    n = 1 << 18
    x = np.ones(n)
    seg = segments.make(f"/umt_in_{tid}_0", x)
    segments.make(f"/umt_in_{tid}_1", [1.0])
    segments.make(f"/umt_in_{tid}_2", [100.0])
    segments.make(f"/umt_out_{tid}_0", [0.0])
    path = f"/dev/shm/{seg.name.lstrip('/')}"
    stop = threading.Event()

    def shrink():
        fd = os.open(path, os.O_RDWR)
        try:
            while not stop.is_set():
                os.ftruncate(fd, 8)
                os.ftruncate(fd, 8 * n)
        finally:
            os.close(fd)

    t = threading.Thread(target=shrink)
    t.start()
    outcomes = set()
    try:
        deadline = time.monotonic() + 3
        while time.monotonic() < deadline:
            r = rosen.post("/EvaluateShMem", shm_body("/umt", tid, [n, 1, 1]))
            outcomes.add(r.status_code)
            if r.status_code != 200:
                assert error_of(r)[1] == "InvalidInput"
    finally:
        stop.set()
        t.join()
    assert outcomes <= {200, 400}
    assert rosen.proc.poll() is None
    assert requests.get(rosen.url + "/health", timeout=10).json() == {"status": "ok"}


def test_test_shmem_copies_the_probe_value_or_answers_empty(rosen, segments):
    tid = tid_here()
    segments.make(f"/umbridge_test_shmem_in_{tid}", [12345.0])
    out = segments.make(f"/umbridge_test_shmem_out_{tid}", [0.0])
    assert rosen.post("/TestShMem", {"name": "rosenbrock", "tid": tid}).json() == \
        {"value": [12345.0]}
    assert np.ndarray((1,), dtype=np.float64, buffer=out.buf)[0] == 12345.0
    assert rosen.post("/TestShMem", {"name": "rosenbrock", "tid": "../x"}).json() == {}
    assert rosen.post("/TestShMem", {"name": "rosenbrock", "tid": "none9"}).json() == {}


@pytest.mark.parametrize("arg,words", [("n", "SYMBOL=N"), ("n=abc", "SYMBOL=N"),
                                       ("n=-2", "SYMBOL=N"), ("=3", "SYMBOL=N")])
def test_a_bad_umbridge_size_option_stops_serve_naming_it(arg, words):
    import subprocess
    r = subprocess.run([TESSERA, "serve", "--port", "0", "--umbridge-size", arg,
                        plugin_path("rosenbrock")], capture_output=True, text=True, timeout=60)
    assert r.returncode != 0
    assert words in r.stderr and arg.lstrip("=") in r.stderr
