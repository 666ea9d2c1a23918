# SPDX-License-Identifier: MIT
"""Shared set-up of the Python tests: where the built plugins are, the
bundled plugins as test cases, and the check that no shared memory is left
behind.

The plugins come from the CMake build: $TESSERA_BUILD_DIR, or build/ at the
repository root (scripts/test.sh sets the variable).
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import glob
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import jax
import pytest

# The bundled plugins are float64; JAX needs this before any array exists.
jax.config.update("jax_enable_x64", True)

import tessera  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
# tests/support: helpers shared with bench/ and the examples (servers.py).
sys.path.insert(0, str(ROOT / "tests" / "support"))
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
PLUGINS = BUILD / "plugins"
TEST_PLUGINS = BUILD / "tests" / "plugins"
MATRIX = ROOT / "plugins" / "linear" / "example_matrix.txt"
MODES = ("inproc", "isolated", "worker")

# tesseract-core's runtime (Tesseract.from_tesseract_api, tesseract-runtime
# serve) writes a run_<id>/logs folder per call into its output path, the
# current directory by default: into a scratch folder instead, for this
# process and the servers it starts.
_RUNS = tempfile.mkdtemp(prefix="tessera-test-runs-")
os.environ.setdefault("TESSERACT_OUTPUT_PATH", _RUNS)
atexit.register(shutil.rmtree, _RUNS, True)


def pytest_configure(config: pytest.Config) -> None:
    # torch.autograd.gradcheck uses torch.jit.script internally.
    config.addinivalue_line("filterwarnings",
                            "ignore:`torch.jit.script` is deprecated:DeprecationWarning")


@contextlib.contextmanager
def paths_kept() -> Iterator[None]:
    """Put sys.path and PYTHONPATH back as they were. tesseract-core's
    Tesseract.from_tesseract_api sets PYTHONPATH to this Python's whole
    sys.path, and it and tessera.load put a component's folder on sys.path:
    left so, every later worker (of any component, in its own environment)
    would import this Python's packages first."""
    path, pythonpath = sys.path[:], os.environ.get("PYTHONPATH")
    try:
        yield
    finally:
        sys.path[:] = path
        if pythonpath is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = pythonpath


def by_path(tree: dict, prefix: str = "") -> dict:
    """Nested dicts by dotted path, as the tests compare results:
    ``{"out": {"p": a}}`` -> ``{"out.p": a}``; written here, not taken
    from the package under test."""
    flat = {}
    for key, value in tree.items():
        if isinstance(value, dict):
            flat.update(by_path(value, f"{prefix}{key}."))
        else:
            flat[prefix + key] = value
    return flat


def plugin_path(name: str) -> Path:
    """A bundled plugin's .so, or a test plugin's (tests/plugins)."""
    for d in (PLUGINS, TEST_PLUGINS):
        p = d / f"{name}.so"
        if p.exists():
            return p
    raise FileNotFoundError(f"{name}.so is in neither {PLUGINS} nor {TEST_PLUGINS}: build first")


def open_plugin(name: str, mode: str = "inproc", **kwargs) -> tessera.Component:
    """Load a bundled or test plugin (linear gets its example matrix)."""
    if name == "linear":
        kwargs.setdefault("config", {"matrix": str(MATRIX)})
    return tessera.load(plugin_path(name), mode, **kwargs)


def own_segments() -> list[str]:
    """This process's shared-memory segments: the library's memfds it holds
    open or maps ("/memfd:tessera-arena (deleted)", "/memfd:tessera-chan
    ..."), one entry per fd and per mapped segment, and anything of it in
    /dev/shm (where the library makes nothing: memfds have no name)."""
    held = glob.glob(f"/dev/shm/tessera-{os.getpid()}-*")
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("/memfd:tessera-"):
            held.append(f"fd {fd}: {target}")
    with open("/proc/self/maps") as maps:
        inodes = {}
        for line in maps:
            fields = line.split(maxsplit=5)
            if len(fields) == 6 and fields[5].startswith("/memfd:tessera-"):
                inodes[fields[4]] = fields[5].strip()
    held += [f"mapped inode {inode}: {name}" for inode, name in inodes.items()]
    return held


@pytest.fixture
def load() -> Iterator:
    """open_plugin, with every component closed at the end of the test, in
    the reverse order of opening (isolated mode's static TLS wants that)."""
    opened: list[tessera.Component] = []

    def _load(name: str, mode: str = "inproc", **kwargs) -> tessera.Component:
        comp = open_plugin(name, mode, **kwargs)
        opened.append(comp)
        return comp

    yield _load
    for comp in reversed(opened):
        comp.close()


@pytest.fixture(scope="session", autouse=True)
def no_shared_memory_left() -> Iterator[None]:
    """After every test has run and its arrays are gone, this process may
    hold no segment (no memfd open or mapped, nothing in /dev/shm)."""
    yield
    gc.collect()
    left = own_segments()
    assert not left, f"shared memory left behind: {left}"
