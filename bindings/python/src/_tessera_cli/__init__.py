# SPDX-License-Identifier: MIT
"""The ``tessera`` command of the Python package: the C command line bundled
in the package (``tessera/_native/bin/tessera``, with its worker and library
beside it), run in place of this interpreter so that its arguments, its
standard streams and its exit status are the command's own.

A package of its own, beside ``tessera``, so that the console script does
not import ``tessera`` (NumPy and the extension) before it execs: the
package is only looked up (find_spec runs none of its code)."""

from __future__ import annotations

import importlib.util
import os
import sys


def executable() -> str:
    """The path of the ``tessera`` executable bundled in the package."""
    spec = importlib.util.find_spec("tessera")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("the Python package tessera is not installed")
    return os.path.join(spec.submodule_search_locations[0], "_native", "bin", "tessera")


def main() -> None:
    try:
        exe = executable()
        os.execv(exe, [exe, *sys.argv[1:]])
    except OSError as e:
        sys.stderr.write(f"tessera: error: cannot run the bundled command line: {e}\n")
        sys.exit(127)
