# SPDX-License-Identifier: MIT
"""Python components (a Tesseract's tesseract_api.py) through tessera's
Python face: in this interpreter and in workers, under JAX transforms, two
components whose requirements clash in their own environments, errors from
Python code, and tesseract-core's own examples against
Tesseract.from_tesseract_api on the same inputs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from conftest import BUILD, ROOT

PYCOMPONENTS = ROOT / "tests" / "pycomponents"
CLASH = ROOT / "plugins" / "python"
EXAMPLES = BUILD / "third_party" / "tesseract-examples"


@pytest.fixture(params=["inproc", "worker"])
def affine(request):
    c = tessera.load(PYCOMPONENTS / "affine", request.param)
    yield c
    c.close()


def test_every_endpoint_matches_the_closed_form(affine):
    x, a = np.array([1.0, -2.0, 0.5]), np.array(3.0)
    np.testing.assert_allclose(affine.apply({"x": x, "a": a})["y"], a * x + 1)
    t = affine.jvp({"x": x, "a": a}, ["x", "a"], ["y"], {"x": np.ones(3), "a": np.array(2.0)})
    np.testing.assert_allclose(t["y"], a + 2 * x)
    g = affine.vjp({"x": x, "a": a}, ["x", "a"], ["y"], {"y": np.array([1.0, 2.0, 3.0])})
    np.testing.assert_allclose(g["x"], a * np.array([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(g["a"], x @ np.array([1.0, 2.0, 3.0]))
    j = affine.jacobian({"x": x, "a": a}, ["x"], ["y"])
    np.testing.assert_allclose(j["y"]["x"], a * np.eye(3))


def test_jax_grad_through_a_worker():
    c = tessera.load(PYCOMPONENTS / "affine", "worker")
    x = jnp.array([1.0, 2.0, 3.0])

    def loss(x, a):
        return jnp.sum(tessera.jax.apply(c, {"x": x, "a": a})["y"] ** 2)

    gx, ga = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, 2.0)
    y = 2.0 * x + 1
    np.testing.assert_allclose(gx, 2 * y * 2.0)
    np.testing.assert_allclose(ga, 2 * float(y @ x))
    c.close()


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_an_exception_keeps_its_type_message_and_line(mode):
    c = tessera.load(PYCOMPONENTS / "raising", mode)
    with pytest.raises(tessera.PluginError) as info:
        c.apply({"x": np.array([1.0, -4.0])})
    text = str(info.value)
    assert "ValueError: negative input at index 1" in text
    assert "tesseract_api.py" in text and "check_positive" in text
    np.testing.assert_allclose(c.apply({"x": np.array([4.0])})["y"], [2.0])  # it lives on
    c.close()


def test_a_crash_restarts_the_worker():
    c = tessera.load(PYCOMPONENTS / "crashing", "worker", restart="auto", log_level="off")
    with pytest.raises(tessera.WorkerError, match="signal 6"):
        c.apply({"x": np.array([-1.0])})
    np.testing.assert_allclose(c.apply({"x": np.array([3.0])})["y"], [6.0])
    c.close()


def test_a_hang_ends_at_the_timeout():
    c = tessera.load(PYCOMPONENTS / "hanging", "worker", timeout_ms=500, restart="auto",
                     log_level="off")
    with pytest.raises(tessera.CallTimeoutError):
        c.apply({"x": np.array([-1.0])})
    np.testing.assert_allclose(c.apply({"x": np.array([1.0])})["y"], [2.0])
    c.close()


def test_load_errors_name_the_cause():
    with pytest.raises(tessera.LoadError, match="'label'"):
        tessera.load(PYCOMPONENTS / "badschema")
    with pytest.raises(tessera.LoadError, match="a_package_that_is_not_installed"):
        tessera.load(PYCOMPONENTS / "broken")
    with pytest.raises(tessera.UnsupportedError, match="use worker mode"):
        tessera.load(PYCOMPONENTS / "affine", "isolated")
    with pytest.raises(tessera.LoadError, match="option python"):
        tessera.load(PYCOMPONENTS / "affine", python=sys.executable)


def test_clashing_requirements_each_in_its_own_environment():
    """NumPy 1 and NumPy 2 components in one JAX program, as the example does."""
    cumprod = tessera.load(CLASH / "cumprod_numpy1", "worker")
    cumsum = tessera.load(CLASH / "cumsum_numpy2", "worker")
    x = np.array([1.5, -0.5, 2.0, 0.75])
    assert cumprod.apply({"x": x})["numpy_major"] == 1
    assert cumsum.apply({"y": x})["numpy_major"] == 2

    def loss(x):
        p = tessera.jax.apply(cumprod, {"x": x})["p"]
        return jnp.sum(tessera.jax.apply(cumsum, {"y": p})["s"])

    grad = jax.grad(loss)(x)
    n, p = len(x), np.cumprod(x)
    exact = np.cumsum(((n - np.arange(n)) * p)[::-1])[::-1] / x
    np.testing.assert_allclose(grad, exact, rtol=1e-13)
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(CLASH / "cumprod_numpy1")
    assert "cumproduct" in str(info.value) and "worker mode" in str(info.value)
    cumprod.close()
    cumsum.close()


def test_the_clash_example_runs():
    out = subprocess.run([sys.executable, str(ROOT / "bindings/python/examples/python_clash.py")],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert "max error" in out.stdout and "cannot load" in out.stdout


def test_an_environment_that_cannot_be_built_says_why(tmp_path):
    (tmp_path / "tesseract_api.py").write_text((PYCOMPONENTS / "affine" / "tesseract_api.py")
                                               .read_text())
    (tmp_path / "tesseract_requirements.txt").write_text("a-package-that-does-not-exist-x9q\n")
    env = {"TESSERA_ENV_DIR": str(tmp_path / "envs")}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with pytest.raises(tessera.LoadError) as info:
            tessera.load(tmp_path, "worker")
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    text = str(info.value)
    assert "cannot build the component's Python environment" in text
    assert "a-package-that-does-not-exist-x9q" in text and ".log" in text


# ---- tesseract-core's own examples, unchanged --------------------------------

def example(name: str) -> Path:
    path = EXAMPLES / name
    if not (path / "tesseract_api.py").exists():
        pytest.skip(f"tesseract-core's examples are not fetched ({EXAMPLES}): "
                    "scripts/fetch_tesseract_examples.sh")
    return path


def reference(path: Path):
    from tesseract_core import Tesseract
    return Tesseract.from_tesseract_api(str(path / "tesseract_api.py"))


VECTORADD = {"a": np.arange(1.0, 5.0, dtype=np.float32),
             "b": np.array([0.5, -1.0, 2.0, 4.0], dtype=np.float32),
             "s": np.array(1.5, dtype=np.float32),
             "normalize": True}   # a plain bool: a JSON field, given a Python bool
CASES = [
    ("vectoradd", VECTORADD, ["a", "b", "s"], ["result"]),
    ("vectoradd_torch", {"a": {"v": np.arange(1.0, 4.0, dtype=np.float32),
                               "s": np.array(2.0, dtype=np.float32)},
                         "b": {"v": np.array([1.0, 0.0, -1.0], dtype=np.float32),
                               "s": np.array(0.5, dtype=np.float32)}},
     ["a.v", "b.s"], ["vector_add.result"]),
    # derivatives from JAX autodiff inside the component
    ("univariate", {"x": np.float32(0.3), "y": np.float32(-0.7), "a": np.float32(1.0),
                    "b": np.float32(100.0)}, ["x", "y"], ["result"]),
]


def leaves(tree, path):
    for part in path.split("."):
        tree = tree[part] if isinstance(tree, dict) else getattr(tree, part)
    return np.asarray(tree)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
@pytest.mark.parametrize("name,inputs,wrt_in,wrt_out", CASES, ids=[c[0] for c in CASES])
def test_tesseract_examples_match_tesseract_core(name, inputs, wrt_in, wrt_out, mode):
    path = example(name)
    ref = reference(path)
    comp = tessera.load(path, mode, python_env="none") if mode == "worker" else \
        tessera.load(path, mode)
    # Inputs nested as tesseract-core takes them; apply's outputs nested as
    # it returns them; derivatives keyed by dotted paths, as its are.
    want = ref.apply(inputs)
    got = comp.apply(inputs)
    for out in comp.schema.output_names:
        np.testing.assert_allclose(leaves(got, out), leaves(want, out), rtol=1e-6)
    if "jacobian" in comp.endpoints:
        ref_j = ref.jacobian(inputs, jac_inputs=wrt_in, jac_outputs=wrt_out)
        j = comp.jacobian(inputs, wrt_in, wrt_out)
        assert set(j) == set(ref_j) and all(set(j[o]) == set(ref_j[o]) for o in j)
        for o in wrt_out:
            for i in wrt_in:
                np.testing.assert_allclose(j[o][i], ref_j[o][i], rtol=1e-6, atol=1e-12)
    rng = np.random.default_rng(0)
    if "jvp" in comp.endpoints:
        tangent = {i: rng.normal(size=leaves(inputs, i).shape).astype(leaves(inputs, i).dtype)
                   for i in wrt_in}
        ref_t = ref.jacobian_vector_product(inputs, jvp_inputs=wrt_in, jvp_outputs=wrt_out,
                                            tangent_vector=tangent)
        t = comp.jvp(inputs, wrt_in, wrt_out, tangent)
        assert set(t) == set(ref_t)
        for o in wrt_out:
            np.testing.assert_allclose(t[o], ref_t[o], rtol=1e-6, atol=1e-12)
    if "vjp" in comp.endpoints:
        cot = {o: rng.normal(size=leaves(got, o).shape).astype(leaves(got, o).dtype)
               for o in wrt_out}
        ref_g = ref.vector_jacobian_product(inputs, vjp_inputs=wrt_in, vjp_outputs=wrt_out,
                                            cotangent_vector=cot)
        g = comp.vjp(inputs, wrt_in, wrt_out, cot)
        assert set(g) == set(ref_g)
        for i in wrt_in:
            np.testing.assert_allclose(g[i], ref_g[i], rtol=1e-6, atol=1e-12)
    comp.close()


def test_the_cli_runs_a_tesseract_example_in_its_own_environment(tmp_path):
    """The issue's own words: `tessera apply --mode worker FOLDER @inputs.json`,
    the environment built from the example's requirements by Tessera itself."""
    path = example("vectoradd")
    payload = tmp_path / "inputs.json"
    payload.write_text('{"inputs": {"a": [1, 2, 3], "b": [4, 5, 6], "s": 2, "normalize": false}}')
    out = subprocess.run([str(BUILD / "bin" / "tessera"), "apply", "--mode", "worker", str(path),
                          f"@{payload}"], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    assert '"buffer":[6.0,9.0,12.0]' in out.stdout, out.stdout
