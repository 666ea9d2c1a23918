# SPDX-License-Identifier: MIT
"""An FMU built by pythonfmu3 from a Python class (fmu_sources/
first_order_lag.py: y' = (u - y) / tau, one Euler step per communication
step), validated by FMPy and opened by tessera.

pythonfmu3's binary does not link libpython: it calls CPython's C API
through symbols it expects the importing process to provide, and starts
an interpreter itself when none runs (Py_IsInitialized, Py_Initialize).
So where it runs decides what happens:
- in a worker (tessera-worker, a C program) its binary does not load until
  libpython is put into the process (LD_PRELOAD through the worker's env);
  then the FMU runs its own interpreter there, and its trajectory is
  FMPy's;
- without that the load fails, naming the undefined Python symbol, and so
  does isolated mode (a namespace of its own has no Python);
- in-process nothing refuses it: the class runs inside the host's own
  interpreter, which it changes (its resources folder, in the library's
  scratch folder, stays on sys.path after close; its bundled pythonfmu3
  is what `import pythonfmu3` then finds). That is checked in a separate
  interpreter, never in the test's own.
The FMU is built into a scratch folder by the pythonfmu3 command line, in
a process of its own (the builder imports the class to write the
description)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest

import tessera
from conftest import ROOT
from fmu_util import fmpy_simulate, grid, held_signal

SOURCE = ROOT / "tests" / "python" / "fmu_sources" / "first_order_lag.py"
PARAMS = {"tau": 0.25, "y0": 0.5}


def libpython() -> Path | None:
    """This interpreter's shared libpython: the one it links, or (an
    interpreter with libpython built in, as Debian's) the shared library
    installed beside it; None without one."""
    var = sysconfig.get_config_var
    libdir = Path(var("LIBDIR") or "/nonexistent")
    names = [var("LDLIBRARY") if var("Py_ENABLE_SHARED") else None, var("INSTSONAME")]
    for folder in (libdir, libdir / (var("MULTIARCH") or "")):
        for name in names:
            if name and ".so" in name and (folder / name).is_file():
                return folder / name
    return None


@pytest.fixture(scope="module")
def lag(tmp_path_factory) -> Path:
    pytest.importorskip("pythonfmu3")
    out = tmp_path_factory.mktemp("pythonfmu3")
    run = subprocess.run([sys.executable, "-m", "pythonfmu3", "build", "-f", str(SOURCE),
                          "-d", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    path = out / "FirstOrderLag.fmu"
    assert path.is_file(), run.stdout
    return path


@pytest.fixture(scope="module")
def python_lib() -> Path:
    path = libpython()
    if path is None:
        pytest.skip("this Python has no shared libpython, which pythonfmu3's binary needs")
    return path


def recurrence(t: np.ndarray, u: np.ndarray, tau: float, y0: float) -> np.ndarray:
    """The lag's trajectory, written here: one Euler step per interval."""
    y = np.empty_like(t)
    y[0] = y0
    for k in range(len(t) - 1):
        y[k + 1] = y[k] + (t[k + 1] - t[k]) * (u[k] - y[k]) / tau
    return y


T = grid(0.0, 2.0, 0.05)
U = np.where(T < 0.8, 1.0, -0.5) + 0.25 * np.sin(7 * T)


def test_the_built_fmu_passes_fmpys_validation(lag):
    from fmpy.validation import validate_fmu
    assert validate_fmu(str(lag)) == []


def test_fmpy_simulates_the_lag_as_its_recurrence(lag):
    ref = fmpy_simulate(lag, T, PARAMS, ["y"], signal=held_signal("u", T, U))
    np.testing.assert_allclose(ref["y"], recurrence(T, U, **PARAMS), rtol=0, atol=1e-12)


def test_in_a_worker_with_libpython_its_trajectory_is_fmpys(lag, python_lib):
    env = {"LD_PRELOAD": str(python_lib)}
    with tessera.load(str(lag), "worker", env=env) as comp:
        assert {f.name for f in comp.schema.inputs} >= {"t", "tau", "y0", "u"}
        ours = comp.apply({"t": T, "u": U, **PARAMS})["y"]
        again = comp.apply({"t": T, "u": U, **PARAMS})["y"]  # a reset instance runs again
    ref = fmpy_simulate(lag, T, PARAMS, ["y"], signal=held_signal("u", T, U))["y"]
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(again, ours)


def test_in_a_worker_without_libpython_the_load_fails_naming_the_python_symbol(lag):
    env = {"LD_PRELOAD": ""}
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(str(lag), "worker", env=env)
    message = str(info.value)
    assert "FirstOrderLag" in message and "undefined symbol" in message, message
    assert "Py" in message.split("undefined symbol", 1)[1], message


def test_isolated_mode_fails_naming_the_python_symbol(lag):
    with pytest.raises(tessera.LoadError) as info:
        tessera.load(str(lag), "isolated")
    message = str(info.value)
    assert "FirstOrderLag" in message and "undefined symbol" in message, message


INPROC_PROBE = """
import json, os, sys
import numpy as np
import tessera
path, t, u = sys.argv[1], np.array(json.loads(sys.argv[2])), np.array(json.loads(sys.argv[3]))
modules, paths = set(sys.modules), list(sys.path)
try:
    with tessera.load(path, "inproc") as comp:
        y = comp.apply({"t": t, "u": u, "tau": 0.25, "y0": 0.5})["y"]
except tessera.TesseraError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
    sys.exit(0)
added = [p for p in sys.path if p not in paths]
print(json.dumps({"y": np.asarray(y).tolist(), "imported": sorted(set(sys.modules) - modules),
                  "paths_added": added, "left": [os.path.exists(p) for p in added],
                  "pythonfmu3": getattr(sys.modules.get("pythonfmu3"), "__file__", None)}))
"""


def test_in_process_it_runs_inside_the_hosts_own_interpreter_and_changes_it(lag, tmp_path):
    """What happens in-process, seen from a separate interpreter: nothing
    refuses it; the FMU's class runs in the host's interpreter (the
    trajectory is the lag's), its resources folder, in the library's
    scratch folder, is put on the host's sys.path and stays there after
    close, when that folder is gone, and its bundled copy of pythonfmu3
    is the one the host's `import pythonfmu3` now finds."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    run = subprocess.run([sys.executable, "-c", INPROC_PROBE, str(lag), json.dumps(T.tolist()),
                          json.dumps(U.tolist())], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "TMPDIR": str(scratch)})
    assert run.returncode == 0, (run.returncode, run.stderr)
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert "error" not in result, result
    np.testing.assert_allclose(result["y"], recurrence(T, U, **PARAMS), rtol=0, atol=1e-12)
    assert "first_order_lag" in result["imported"], result["imported"]
    assert len(result["paths_added"]) == 1 and result["left"] == [False], result
    added = Path(result["paths_added"][0])
    assert added.parent.parent == scratch and added.parent.name.startswith("tessera-fmu-"), added
    assert result["pythonfmu3"].startswith(str(added)), result["pythonfmu3"]
    assert list(scratch.iterdir()) == [], "the scratch folder is removed at close"
