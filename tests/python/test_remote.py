# SPDX-License-Identifier: MIT
"""Remote components through tessera's Python face: tesseract-core's
examples (vectoradd, univariate) and this project's nested fixture, served
by tesseract-core's own ``tesseract-runtime serve`` and opened with
``tessera.load(url)``, compared field by field and endpoint by endpoint
with the same ``tesseract_api.py`` opened in this interpreter (tessera's
Python component backend); ``tessera.jax.apply`` of a served component
under ``jax.grad`` and ``jax.jit``; a refusal and a missing server as
their exception classes.

The servers start once for the module, side by side, and stop at its end.
Without tesseract-runtime every test is skipped, saying why; so are the
examples' tests without scripts/fetch_tesseract_examples.sh's examples.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from conftest import BUILD, ROOT, by_path
from servers import free_port, runtime_serve_argv, serving_all

RUNTIME = shutil.which("tesseract-runtime")
EXAMPLES = BUILD / "third_party" / "tesseract-examples"
PYCOMPONENTS = ROOT / "tests" / "pycomponents"
FOLDERS = {
    "vectoradd": EXAMPLES / "vectoradd",
    "univariate": EXAMPLES / "univariate",
    "nested": PYCOMPONENTS / "nested",
}
START_LIMIT_S = 120

pytestmark = pytest.mark.skipif(
    RUNTIME is None, reason="tesseract-runtime is not installed (pip install 'tesseract-core[runtime]')")


@contextlib.contextmanager
def _servers(names: list[str], logs: Path) -> Iterator[dict[str, str]]:
    """Serve each named component (its folder's tesseract_api.py) on a port
    of its own: {name: url}, the missing ones left out."""
    # tesseract-runtime writes a run_<id> folder per request into its
    # output path (conftest.py points TESSERACT_OUTPUT_PATH at a scratch
    # folder) or, without one, into its current directory.
    runs = logs / "runs"
    runs.mkdir()
    specs = {}
    for name in names:
        api = FOLDERS[name] / "tesseract_api.py"
        if api.exists():
            specs[name] = (runtime_serve_argv(),
                           {"env": {**os.environ, "TESSERACT_API_PATH": str(api)}, "cwd": runs,
                            "log": logs / f"{name}.log"})
    with serving_all(specs, START_LIMIT_S) as servers:
        yield {name: s.url for name, s in servers.items()}


@pytest.fixture(scope="module")
def urls(tmp_path_factory) -> Iterator[dict[str, str]]:
    with _servers(list(FOLDERS), tmp_path_factory.mktemp("servers")) as running:
        yield running


def _url(urls: dict[str, str], name: str) -> str:
    if name not in urls:
        pytest.skip(f"{FOLDERS[name]} is missing (scripts/fetch_tesseract_examples.sh fetches it)")
    return urls[name]


# ---- the same component, served and in this interpreter ----------------------------

def _inputs(name: str) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    if name == "vectoradd":
        return {"a": rng.standard_normal(5).astype(np.float32),
                "b": rng.standard_normal(5).astype(np.float32),
                "s": np.float32(1.5), "normalize": np.bool_(True)}
    if name == "univariate":
        return {k: np.float32(v) for k, v in {"x": 0.3, "y": -0.7, "a": 1.0, "b": 100.0}.items()}
    return {"p.v": rng.standard_normal(4), "p.w": rng.standard_normal(3).astype(np.float32),
            "scale": np.float64(2.0), "count": np.int64(3), "flag": np.bool_(True),
            "gain": np.float64(0.5)}


def _seeds(fields, names, rng) -> dict[str, np.ndarray]:
    """A random array for each named field, of its dtype and of the shape
    the inputs give it (a jvp's tangents, a vjp's cotangents)."""
    return {n: rng.standard_normal(fields[n].shape).astype(fields[n].dtype) for n in names}


@pytest.mark.parametrize("name", list(FOLDERS))
def test_every_endpoint_matches_the_component_in_this_interpreter(urls, name):
    remote = tessera.load(_url(urls, name))
    local = tessera.load(FOLDERS[name])
    for mine, theirs in ((remote.schema.inputs, local.schema.inputs),
                         (remote.schema.outputs, local.schema.outputs)):
        assert [(f.name, f.dtype, f.dims, f.differentiable) for f in mine] == \
            [(f.name, f.dtype, f.dims, f.differentiable) for f in theirs]
    assert set(remote.endpoints) == set(local.endpoints)

    x = _inputs(name)
    # apply nests outputs named by dotted paths; compared by path
    here, there = by_path(local.apply(x)), by_path(remote.apply(x))
    assert set(here) == set(there)
    for k in here:
        if not isinstance(here[k], np.ndarray):   # a JSON field: a Python value
            assert there[k] == here[k], k
            continue
        assert there[k].dtype == here[k].dtype
        np.testing.assert_allclose(there[k], here[k], rtol=1e-6, err_msg=k)

    ins = [f.name for f in local.schema.inputs if f.differentiable]
    outs = [f.name for f in local.schema.outputs if f.differentiable]
    rng = np.random.default_rng(11)
    if "jacobian" in local.endpoints:
        jl, jr = local.jacobian(x, ins, outs), remote.jacobian(x, ins, outs)
        for o in outs:
            for i in ins:
                np.testing.assert_allclose(jr[o][i], jl[o][i], rtol=1e-6, atol=1e-7,
                                           err_msg=f"{o}/{i}")
    if "jvp" in local.endpoints:
        tangents = _seeds({n: np.asarray(x[n]) for n in ins}, ins, rng)
        tl, tr = local.jvp(x, ins, outs, tangents), remote.jvp(x, ins, outs, tangents)
        for o in outs:
            np.testing.assert_allclose(tr[o], tl[o], rtol=1e-5, atol=1e-6, err_msg=o)
    if "vjp" in local.endpoints:
        cotangents = _seeds(here, outs, rng)
        gl, gr = local.vjp(x, ins, outs, cotangents), remote.vjp(x, ins, outs, cotangents)
        for i in ins:
            np.testing.assert_allclose(gr[i], gl[i], rtol=1e-5, atol=1e-6, err_msg=i)
    if name == "nested":  # univariate's own abstract_eval fails in tesseract-core 1.15
        # arrays by shape and dtype; JSON fields (plain numbers, flags) by value
        arrays = {f.name for f in local.schema.inputs if f.is_array}
        specs = {k: {"shape": np.shape(v), "dtype": np.asarray(v).dtype} if k in arrays else v
                 for k, v in x.items()}
        assert remote.abstract_eval(specs) == local.abstract_eval(specs)
    remote.close()
    local.close()


# ---- JAX ------------------------------------------------------------------------------

def test_jax_grad_of_a_served_component(urls):
    c = tessera.load(_url(urls, "nested"))
    w = jnp.array([1.0, 2.0, 3.0], dtype=jnp.float32)
    gain = 0.5

    def loss(v, scale):
        out = tessera.jax.apply(c, {"p.v": v, "p.w": w, "scale": scale, "count": 1,
                                    "flag": False, "gain": gain})
        return jnp.sum(out["stats"]["total"] ** 2)

    v, scale = jnp.array([1.0, -2.0, 0.5]), 2.0
    total = scale * gain * np.asarray(v)
    for fn in (jax.grad(loss, argnums=(0, 1)), jax.jit(jax.grad(loss, argnums=(0, 1)))):
        gv, gs = fn(v, scale)
        np.testing.assert_allclose(gv, 2 * total * scale * gain)
        np.testing.assert_allclose(gs, float(np.sum(2 * total * gain * np.asarray(v))))
    c.close()


# ---- failures ---------------------------------------------------------------------------

def test_a_refusal_of_the_server_is_a_payload_error_naming_its_reason(urls):
    c = tessera.load(_url(urls, "vectoradd"))
    with pytest.raises(tessera.PayloadError, match="HTTP 422.*a and b must have the same shape"):
        c.apply({"a": np.ones(3, np.float32), "b": np.ones(2, np.float32), "s": np.float32(1),
                 "normalize": False})
    c.close()


def test_a_server_that_is_not_there_is_a_worker_error_naming_the_url():
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(tessera.WorkerError, match=url):
        tessera.load(url)
