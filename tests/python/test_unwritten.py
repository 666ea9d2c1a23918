# SPDX-License-Identifier: MIT
"""No result carries another call's bytes, from Python: the lazy test
plugin returns success without writing 'y' when x[0] < 0 (tests/plugins/
lazy.c). Its answer is zeros in every mode, and through tessera.torch,
never the previous call's values; option unwritten='check'
raises instead, naming the output."""
import numpy as np
import pytest

import tessera
from conftest import open_plugin

MODES = ["inproc", "isolated", "worker"]


@pytest.mark.parametrize("mode", MODES)
def test_a_result_left_unwritten_is_zeros_not_the_previous_calls(mode):
    with open_plugin("lazy", mode) as c:
        good = c.apply({"x": np.array([1.5, 3.0, 4.5])})
        np.testing.assert_array_equal(good["y"], [3.0, 6.0, 9.0])
        kept = good["y"].copy()
        lazy = c.apply({"x": np.array([-1.0, 0.0, 0.0])})
        np.testing.assert_array_equal(lazy["y"], [0.0, 0.0, 0.0])
        # the first call's result, if still held, is as it was
        np.testing.assert_array_equal(kept, [3.0, 6.0, 9.0])


@pytest.mark.parametrize("mode", MODES)
def test_with_unwritten_check_a_result_left_unwritten_raises_naming_it(mode):
    with open_plugin("lazy", mode, unwritten="check") as c:
        c.apply({"x": np.array([1.5, 3.0, 4.5])})
        with pytest.raises(tessera.PluginResultError) as info:
            c.apply({"x": np.array([-1.0, 0.0, 0.0])})
        assert "output 'y': 3 of 3 elements left unwritten" in str(info.value)


def test_through_torch_a_result_left_unwritten_is_zeros():
    torch = pytest.importorskip("torch")
    import tessera.torch as tt

    with open_plugin("lazy", "worker") as c:
        good = tt.apply(c, {"x": torch.tensor([1.5, 3.0, 4.5], dtype=torch.float64)})
        assert good["y"].tolist() == [3.0, 6.0, 9.0]
        lazy = tt.apply(c, {"x": torch.tensor([-1.0, 0.0, 0.0], dtype=torch.float64)})
        assert lazy["y"].tolist() == [0.0, 0.0, 0.0]
