# SPDX-License-Identifier: MIT
"""A component whose output shapes follow from no input shape and that has
no abstract_eval cannot be traced by tessera.jax: the error says so, names
the outputs, and says what to add where (abstract_eval in its
tesseract_api.py), in every mode and from abstract_eval itself."""

from __future__ import annotations

from pathlib import Path

import jax
import jax.numpy as jnp
import pytest

import tessera
import tessera.jax as tj

ROOT = Path(__file__).resolve().parents[2]
UNSIZED = ROOT / "tests" / "pycomponents" / "unsized"
API = UNSIZED.resolve() / "tesseract_api.py"


def _check(message: str) -> None:
    assert "output 'sums' cannot be known before the call" in message
    assert f"define abstract_eval in {API}" in message
    # 'total' is a scalar: its shape is known, so it is not named
    assert "'total'" not in message
    assert "plugin" not in message
    assert "depend on values" not in message


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_jit_of_an_unsized_output_says_to_define_abstract_eval_in_tesseract_api(mode):
    with tessera.load(UNSIZED, mode) as comp:
        assert not comp.has_endpoint("abstract_eval")
        with pytest.raises(tessera.UnsupportedError) as info:
            jax.jit(lambda x: tj.apply(comp, {"x": x})["sums"])(jnp.ones(3))
        _check(str(info.value))
        # the call itself still runs: only tracing needs the shapes
        out = comp.apply({"x": [1.0, 2.0, 3.0]})
        assert out["sums"].tolist() == [1.0, 3.0, 6.0]


def test_abstract_eval_of_an_unsized_output_names_the_field_and_the_file():
    with tessera.load(UNSIZED / "tesseract_api.py") as comp:
        with pytest.raises(tessera.UnsupportedError) as info:
            comp.abstract_eval({"x": tessera.ShapeDtype((4,), "float64")})
        _check(str(info.value))
        assert "endpoint 'abstract_eval'" in str(info.value)


def test_a_component_whose_shapes_follow_from_its_inputs_is_not_refused():
    # affine's y has its own abstract_eval; the message is only for a
    # component that has none and needs one
    with tessera.load(ROOT / "tests" / "pycomponents" / "affine") as comp:
        res = comp.abstract_eval({"x": tessera.ShapeDtype((5,), "float64"), "a": 1.0})
        assert res["y"].shape == (5,)
