# SPDX-License-Identifier: MIT
"""What calls cost, seen from Python: Component.stats() per endpoint
(calls, errors, total and mean seconds) and worker mode's wait and copy
seconds, beside the counters it had; TESSERA_LOG as the default log level
of a Python host (debug logs each call with ms= as tessera serve's access
log does; an invalid value warns once and changes nothing); the output of
uv while it builds a component's environment at TESSERA_LOG=info; and
Dask's own progress bar on a tessera.dask map. No figure is compared with
a duration: only > 0, sums and means."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tessera
from conftest import ROOT, plugin_path

OLD_KEYS = {"calls", "bytes_copied", "bytes_by_ref", "worker_starts", "worker_deaths"}
AFFINE = ROOT / "tests" / "pycomponents" / "affine"


def run_mix(c) -> None:
    """apply twice, vjp once, and an apply that fails (x missing)."""
    x = np.linspace(0.0, 1.0, 4096)
    c.apply({"x": x})
    c.apply({"x": x})
    c.vjp({"x": x}, ["x"], ["y"], {"y": x})
    with pytest.raises(tessera.MissingError):
        c.apply({})


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_stats_gives_each_called_endpoint_its_calls_errors_and_seconds(mode):
    with tessera.load(plugin_path("noop"), mode) as c:
        assert c.stats()["endpoints"] == {}, "no call, no endpoint"
        run_mix(c)
        s = c.stats()
    assert OLD_KEYS <= set(s), "the keys stats() had are kept"
    eps = s["endpoints"]
    assert set(eps) == {"apply", "vjp"}, "only the endpoints called"
    assert eps["apply"]["calls"] == 3 and eps["apply"]["errors"] == 1
    assert eps["vjp"]["calls"] == 1 and eps["vjp"]["errors"] == 0
    for name, e in eps.items():
        assert set(e) == {"calls", "errors", "total_s", "mean_s"}, name
        assert e["total_s"] > 0, name
        assert e["mean_s"] == pytest.approx(e["total_s"] / e["calls"]), name
    # The failed apply never reached the plugin.
    assert sum(e["calls"] - e["errors"] for e in eps.values()) == s["calls"]
    total = sum(e["total_s"] for e in eps.values())
    if mode == "worker":
        assert s["worker_wait_s"] > 0 and s["copy_s"] > 0, s
        assert s["worker_wait_s"] + s["copy_s"] <= total, "parts of the calls' time"
    else:
        assert s["worker_wait_s"] == 0 and s["copy_s"] == 0, s


def host(code: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    """code in a fresh Python with env added to this one's (TESSERA_LOG
    and TESSERA_PYTHON only as env says)."""
    base = {k: v for k, v in os.environ.items() if k not in ("TESSERA_LOG", "TESSERA_PYTHON")}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)],
                          env={**base, **env}, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


CALL_NOOP = f"""
    import numpy as np, tessera
    with tessera.load({str(plugin_path("noop"))!r}, "inproc", **OPTIONS) as c:
        c.apply({{"x": np.ones(3)}})
    print("done")
"""


def noop_host(env: dict[str, str], options: str = "{}") -> subprocess.CompletedProcess:
    return host(CALL_NOOP.replace("**OPTIONS", "**" + options), env)


CALL_LINE = re.compile(r"^tessera\[noop\] DEBUG: call apply rc=0 ms=\d+\.\d{3}$", re.M)


def test_tessera_log_debug_logs_each_call_with_ms_like_the_access_log():
    out = noop_host({"TESSERA_LOG": "debug"})
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    assert len(CALL_LINE.findall(out.stderr)) == 1, out.stderr


def test_an_explicit_log_level_wins_over_tessera_log():
    out = noop_host({"TESSERA_LOG": "debug"}, '{"log_level": "warn"}')
    assert out.returncode == 0, out.stderr
    assert "DEBUG" not in out.stderr, out.stderr


@pytest.mark.parametrize("value", ["verbose", "3", "warning"])
def test_an_invalid_tessera_log_warns_once_and_keeps_the_default(value):
    out = noop_host({"TESSERA_LOG": value})
    assert out.returncode == 0 and out.stdout.strip() == "done", out.stderr
    want = (f"TESSERA_LOG='{value}' is not a log level (accepted: debug, info, warn, error, "
            "off); the default, warn, stays")
    assert out.stderr.count(want) == 1, out.stderr
    assert "DEBUG" not in out.stderr, out.stderr


def test_tessera_log_info_shows_what_uv_says_while_building_an_environment(tmp_path):
    """A requirement that cannot be installed: the build fails either way,
    and at info its tool's own lines come through the log; at the default
    level only the error (with the log's tail) says what happened."""
    (tmp_path / "comp").mkdir()
    (tmp_path / "comp" / "tesseract_api.py").write_text(
        (AFFINE / "tesseract_api.py").read_text())
    (tmp_path / "comp" / "tesseract_requirements.txt").write_text(
        "a-package-that-does-not-exist-x9q\n")
    code = f"""
        import tessera
        try:
            tessera.load({str(tmp_path / "comp")!r}, "worker")
        except tessera.LoadError as e:
            print("refused")
    """
    env = {"TESSERA_ENV_DIR": str(tmp_path / "envs")}
    loud = host(code, {**env, "TESSERA_LOG": "info"}, timeout=300)
    assert loud.stdout.strip() == "refused", loud.stderr
    assert "INFO: building the Python environment" in loud.stderr, loud.stderr
    # The tool's own lines follow, the one that names the package among them.
    lines = loud.stderr.splitlines()
    start = next(i for i, line in enumerate(lines) if "building the Python environment" in line)
    told = [line for line in lines[start + 1:] if "INFO: " in line]
    assert any("a-package-that-does-not-exist-x9q" in line for line in told), loud.stderr
    quiet = host(code, env, timeout=300)
    assert quiet.stdout.strip() == "refused", quiet.stderr
    assert "INFO" not in quiet.stderr and "building" not in quiet.stderr, quiet.stderr


def test_a_dask_map_shows_dasks_progress_bar_when_asked(capfd):
    distributed = pytest.importorskip("distributed")
    import tessera.dask

    cluster = distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                       dashboard_address=":0")
    with cluster, distributed.Client(cluster) as client:
        cc = tessera.dask.load(client, plugin_path("noop"))
        try:
            items = [{"x": np.full(3, float(i))} for i in range(8)]
            capfd.readouterr()
            quiet = cc.gather(cc.map("apply", items))
            assert "Completed" not in capfd.readouterr().out, "progress is off by default"
            shown = cc.apply(items, progress=True)
            out = capfd.readouterr().out
            assert "100% Completed" in out, out
            for got, want in zip(shown, quiet):
                np.testing.assert_array_equal(got["y"], want["y"])
            cc.batch("apply", {"x": np.ones((6, 3))}, chunks=3, progress=True)
            assert "100% Completed" in capfd.readouterr().out
        finally:
            cc.close()
