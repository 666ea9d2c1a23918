# SPDX-License-Identifier: MIT
"""What an editor and a type checker see of the package: text signatures on
every callable of the C extension (inspect.signature works), the stub
tessera/_ext.pyi naming exactly what the extension has (and agreeing with
it under mypy's stubtest where mypy is installed), py.typed shipped, and
only public names in dir(tessera) and its subpackages."""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

import tessera
from tessera import _ext

PACKAGE = Path(tessera.__file__).resolve().parent
STUB = PACKAGE / "_ext.pyi"
SUBPACKAGES = ("jax", "torch", "dask")


def _ext_callables():
    """(label, object) of every function of the extension module and every
    method of its types."""
    out = []
    for name in sorted(vars(_ext)):
        obj = getattr(_ext, name)
        if inspect.isbuiltin(obj):
            out.append((name, obj))
        elif isinstance(obj, type):
            for meth, value in sorted(vars(obj).items()):
                if inspect.ismethoddescriptor(value) and not meth.startswith("__"):
                    out.append((f"{name}.{meth}", getattr(obj, meth)))
    return out


@pytest.mark.parametrize("label,fn", _ext_callables(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_function_and_method_of_the_extension_has_a_signature(label, fn):
    sig = inspect.signature(fn)   # raises ValueError without a text signature
    assert fn.__text_signature__, label
    # the docstring that follows the signature says what it does
    assert fn.__doc__ and fn.__doc__.strip(), label
    if "." in label:
        assert next(iter(sig.parameters)) == "self", label


def test_public_methods_show_their_real_parameters():
    sig = inspect.signature(tessera.Component.apply)
    assert list(sig.parameters) == ["self", "inputs"]
    assert list(inspect.signature(tessera.Component.has_endpoint).parameters) == [
        "self", "name", "native"]
    empty = inspect.signature(tessera.Component.empty)
    assert list(empty.parameters) == ["self", "shape", "dtype"]
    assert empty.parameters["dtype"].default == "float64"
    assert empty.parameters["shape"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
    for name in ("close", "stats", "restart"):
        assert list(inspect.signature(getattr(tessera.Component, name)).parameters) == ["self"]
    # the Python methods and functions have theirs from their definitions
    assert list(inspect.signature(tessera.Component.jvp).parameters) == [
        "self", "inputs", "jvp_inputs", "jvp_outputs", "tangent_vector"]
    assert list(inspect.signature(tessera.Component.hvp).parameters) == [
        "self", "inputs", "hvp_inputs", "hvp_outputs", "cotangent_vector", "tangent_vector"]
    assert "timeout_ms" in inspect.signature(tessera.load).parameters


def _stub_names() -> set[str]:
    tree = ast.parse(STUB.read_text())
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_the_stub_names_exactly_what_the_extension_has():
    runtime = {n for n in dir(_ext) if not n.startswith("__")}
    assert _stub_names() == runtime


def test_the_stub_names_every_method_of_each_type():
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if not isinstance(node, ast.ClassDef):
            continue
        stub = {n.name for n in node.body if isinstance(n, ast.FunctionDef)} - {"__init__"}
        cls = getattr(_ext, node.name)
        runtime = {n for n, v in vars(cls).items()
                   if not n.startswith("__") and (inspect.ismethoddescriptor(v)
                                                  or inspect.isdatadescriptor(v))}
        assert stub == runtime, node.name


def test_the_stub_agrees_with_the_extension_under_stubtest():
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (scripts/setup.sh installs it): "
                    "only the names of the stub are compared")
    env = dict(os.environ)
    # the package as imported here, where mypy looks for its stub
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE.parent)] + sys.path)
    res = subprocess.run([sys.executable, "-m", "mypy.stubtest", "tessera._ext",
                          "--ignore-missing-stub"], capture_output=True, text=True,
                         env=env, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr


def test_py_typed_and_the_stub_are_in_the_installed_package():
    assert (PACKAGE / "py.typed").is_file()
    assert STUB.is_file()
    # the stub sits beside the module it describes
    assert Path(_ext.__file__).resolve().parent == PACKAGE


def _public(names):
    return {n for n in names if not n.startswith("_")}


def test_dir_of_tessera_shows_only_its_public_names():
    shown = _public(dir(tessera)) - set(SUBPACKAGES)
    assert shown == set(tessera.__all__)
    for gone in ("annotations", "atexit"):
        assert gone not in dir(tessera)
    for name in tessera.__all__:
        assert hasattr(tessera, name), name


@pytest.mark.parametrize("sub", SUBPACKAGES)
def test_each_subpackage_lists_and_shows_only_its_public_names(sub):
    try:
        mod = importlib.import_module(f"tessera.{sub}")
    except ImportError as e:
        pytest.skip(f"tessera.{sub} cannot be imported here: {e}")
    assert mod.__all__
    for name in mod.__all__:
        assert hasattr(mod, name), f"tessera.{sub}.{name}"
    assert _public(dir(mod)) == set(mod.__all__)


def test_a_type_checker_sees_the_packages_types(tmp_path):
    """py.typed and the stub reach a user's type checker: a wrong call of
    a C method is an error, and the signature it reports is the stub's."""
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (scripts/setup.sh installs it)")
    user = tmp_path / "user.py"
    user.write_text("import tessera\n"
                    "c = tessera.load('x.so')\n"
                    "reveal_type(c.apply)\n"
                    "c.apply(1)\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(PACKAGE.parent)] + sys.path)
    res = subprocess.run([sys.executable, "-m", "mypy", "--no-incremental", str(user)],
                         capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path)
    out = res.stdout + res.stderr
    assert 'Revealed type is "def (typing.Mapping[str, Any]) -> dict[str, Any]"' in out, out
    assert 'Argument 1 to "apply" of "Component" has incompatible type "int"' in out, out
    assert res.returncode == 1, out
