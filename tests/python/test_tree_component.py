# SPDX-License-Identifier: MIT
"""A component written the way a Tesseract author writes one, with fields
beyond arrays (tests/pycomponents/kinds_grad: an option, a count, a list
of nested models with differentiable scalars, a dict of differentiable
arrays, list and text outputs), through the real tools:

- its own regression cases under `tessera test` in each mode, with the
  verdict `tesseract-runtime test` gives on each case;
- `tessera serve` of it reached by tesseract-core's `Tesseract.from_url`:
  apply and the vjp at paths inside the list and the dict, against the
  closed forms and against the component in this interpreter.

(`jax.jit(jax.grad)` through the same leaves: test_field_kinds.py.)
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

import tessera
from conftest import BUILD, ROOT
from servers import Server, tesseract_runtime

TESSERA = BUILD / "bin" / "tessera"
COMPONENT = ROOT / "tests" / "pycomponents" / "kinds_grad"
CASES = sorted((COMPONENT / "test_cases").glob("*.json"))

X = np.array([1.0, 2.0, 3.0])
INPUTS = {"x": X, "method": "scaled", "count": 3,
          "layers": [{"k": 0.5}, {"k": 1.5, "note": "second"}],
          "weights": {"a": np.ones(3), "b": np.array([0.0, 1.0, -1.0])}}


def tessera_test(mode: str) -> dict[str, bool]:
    """{case file: passed} from `tessera test`."""
    p = subprocess.run([TESSERA, "test", "--mode", mode, COMPONENT], capture_output=True,
                       text=True, timeout=600)
    verdicts = {}
    for line in p.stdout.splitlines():
        word, _, rest = line.partition(" ")
        if word in ("PASS", "FAIL"):
            verdicts[rest.split(":")[0]] = word == "PASS"
    assert verdicts, p.stdout + p.stderr
    assert p.returncode == (0 if all(verdicts.values()) else 1), p.stdout
    return verdicts


def runtime_verdict(case) -> bool:
    env = dict(os.environ, TESSERACT_API_PATH=str(COMPONENT / "tesseract_api.py"))
    p = subprocess.run([tesseract_runtime(), "test", f"@{case}"], capture_output=True,
                       text=True, env=env, cwd=tempfile.gettempdir(), timeout=600)
    return json.loads(p.stdout.strip().splitlines()[-1])["status"] == "passed"


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_its_regression_cases_pass_under_tessera_test_as_under_tesseract_runtime(mode):
    if tesseract_runtime() is None:
        pytest.skip("tesseract-runtime is not installed")
    assert len(CASES) >= 3
    mine = tessera_test(mode)
    assert set(mine) == {c.name for c in CASES}
    theirs = {c.name: runtime_verdict(c) for c in CASES}
    assert mine == theirs
    assert all(mine.values()), mine


@pytest.fixture(scope="module")
def served():
    s = Server([TESSERA, "serve", "--port", "{port}", "--option", "log_level=off", COMPONENT],
               what="tessera serve")
    try:
        yield s.wait_healthy(120)
    finally:
        s.stop(grace_s=30)
        s.remove_log()


def test_tesseract_core_client_applies_it_through_tessera_serve(served):
    from tesseract_core import Tesseract
    t = Tesseract.from_url(served.url)
    out = t.apply(INPUTS)
    # y = count * (x * sum(k) + sum(weights))
    np.testing.assert_allclose(out["y"], 3 * (X * 2.0 + np.array([1.0, 2.0, 0.0])))
    assert out["names"] == ["a", "b"]
    assert out["summary"] == "scaled:3:2"
    here = tessera.load(COMPONENT).apply(INPUTS)
    np.testing.assert_array_equal(out["y"], here["y"])
    assert (out["names"], out["summary"]) == (here["names"], here["summary"])


def test_tesseract_core_client_takes_the_vjp_at_leaves_of_the_list_and_the_dict(served):
    from tesseract_core import Tesseract
    t = Tesseract.from_url(served.url)
    ct = np.array([1.0, -1.0, 2.0])
    paths = ["x", "layers.[1].k", "weights.{b}"]
    g = t.vector_jacobian_product(INPUTS, vjp_inputs=paths, vjp_outputs=["y"],
                                  cotangent_vector={"y": ct})
    np.testing.assert_allclose(g["x"], 3 * 2.0 * ct)             # count * sum(k) * ct
    np.testing.assert_allclose(g["layers.[1].k"], 3 * X @ ct)     # count * <x, ct>
    np.testing.assert_allclose(g["weights.{b}"], 3 * ct)          # count * ct
    here = tessera.load(COMPONENT).vjp(INPUTS, paths, ["y"], {"y": ct})
    for p in paths:
        np.testing.assert_allclose(g[p], here[p], err_msg=p)


def test_an_option_outside_its_literal_is_a_422_for_tesseract_cores_client(served):
    from tesseract_core import Tesseract
    t = Tesseract.from_url(served.url)
    with pytest.raises(Exception) as info:
        t.apply(dict(INPUTS, method="cubic"))
    text = str(info.value)
    assert "method" in text and "'sum' or 'scaled'" in text, text
