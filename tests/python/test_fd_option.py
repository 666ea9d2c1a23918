# SPDX-License-Identifier: MIT
"""The options fd_method, fd_step and fd_endpoints on a Python component:
bar_geometry (whose own vjp is sequential central differences inside the
component) opened with fd_method=central and fd_endpoints=all has its vjp
served by the library's differences of its apply instead, on a pool of
workers bit-identical to one worker, close to its own vjp (the library's
step is relative, h = fd_step * max(|x|, 1), the component's absolute), and
check-gradients passes on it."""

from __future__ import annotations

import importlib.util
import json
import subprocess

import numpy as np
import pytest

import tessera
from conftest import BUILD, ROOT, paths_kept

GEOMETRY = ROOT / "plugins" / "python" / "bar_geometry"
STEP = 1e-4
BARS = np.array([[[5.2, 5.1], [30.3, 4.9]], [[5.2, 24.8], [30.1, 25.1]],
                 [[5.2, 5.1], [30.1, 25.1]], [[30.3, 4.9], [30.1, 25.1]]])


@pytest.fixture(autouse=True)
def _restore_sys_path():
    if importlib.util.find_spec("shapely") is None:
        pytest.skip("shapely is not installed in this Python (scripts/setup.sh installs it)")
    with paths_kept():
        yield


def inputs(bars=BARS):
    return {"bars": bars, "radius": np.float64(1.5), "grid_x": np.arange(24) + 0.5,
            "grid_y": np.arange(16) + 0.5, "fd_step": np.float64(STEP)}


def host_fd(workers: int, rule: str = "absolute"):
    return tessera.load(GEOMETRY, "worker", workers=workers, python_env="none",
                        fd_method="central", fd_endpoints="all", fd_step=repr(STEP),
                        fd_step_rule=rule)


def vjp_of(comp, cot):
    return comp.vjp(inputs(), ["bars"], ["sdf"], {"sdf": cot})["bars"]


def test_fd_endpoints_all_serves_the_vjp_by_the_hosts_differences():
    cot = np.cos(np.arange(16 * 24).reshape(16, 24))
    with host_fd(2) as pool, host_fd(1) as one, host_fd(2, "relative") as scaled, \
         tessera.load(GEOMETRY, "worker", python_env="none") as own:
        assert pool.has_endpoint("vjp") and not pool.has_endpoint("vjp", True)
        assert own.has_endpoint("vjp", True)
        g_pool, g_one, g_own = vjp_of(pool, cot), vjp_of(one, cot), vjp_of(own, cot)
        # two workers: the same numbers to the last bit as one
        np.testing.assert_array_equal(g_pool, g_one)
        # fd_step_rule=absolute: the component's own points (h = 1e-4 in
        # the bars' units), the differences added in another order
        assert np.max(np.abs(g_pool - g_own)) <= 1e-12 * np.max(np.abs(g_own))
        # relative (h up to 3e-3 here): other points, and at a kink of
        # the field (where two bars' boundaries meet) another value
        g_scaled = vjp_of(scaled, cot)
        assert np.max(np.abs(g_scaled - g_own)) > 1e-6 * np.max(np.abs(g_own))
        # the vjp called the component's apply (its central differences), not its vjp
        eps = pool.stats()["endpoints"]
        assert eps["vjp"]["calls"] == 1 and "apply" not in eps


def test_fd_endpoints_all_without_a_method_is_refused():
    with pytest.raises(tessera.TesseraError, match="fd_endpoints=all.*fd_method"):
        tessera.load(GEOMETRY, "worker", python_env="none", fd_endpoints="all")


def test_bad_fd_values_are_refused():
    with pytest.raises(tessera.TesseraError, match="fd_method"):
        tessera.load(GEOMETRY, "worker", python_env="none", fd_method="spsa")
    with pytest.raises(tessera.TesseraError, match="fd_step"):
        tessera.load(GEOMETRY, "worker", python_env="none", fd_method="central",
                     fd_step="-1")


def test_check_gradients_passes_on_the_hosts_differences(tmp_path):
    inp = inputs(BARS[:2])
    payload = {"inputs": {k: (v.tolist() if isinstance(v, np.ndarray) else float(v))
                          for k, v in inp.items()}}
    (tmp_path / "p.json").write_text(json.dumps(payload))
    done = subprocess.run(
        [str(BUILD / "bin" / "tessera"), "check-gradients", "--mode", "worker",
         "--option", "python_env=none", "--option", "workers=2",
         "--option", "fd_method=central", "--option", "fd_endpoints=all",
         "--option", f"fd_step={STEP}", "--option", "fd_step_rule=absolute", "--endpoints", "vjp", "--input-paths", "bars",
         "--max-evals", "8", str(GEOMETRY), "@" + str(tmp_path / "p.json")],
        capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "vjp" in done.stdout
