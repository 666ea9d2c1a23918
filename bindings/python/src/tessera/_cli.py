# SPDX-License-Identifier: MIT
"""The ``tessera`` command of the Python package: the C command line bundled
in the package (``_native/bin/tessera``, with its worker and library beside
it), run in place of this interpreter so that its arguments, its standard
streams and its exit status are the command's own."""

from __future__ import annotations

import os
import sys


def executable() -> str:
    """The path of the bundled ``tessera`` executable."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "_native", "bin", "tessera")


def main() -> None:
    exe = executable()
    try:
        os.execv(exe, [exe, *sys.argv[1:]])
    except OSError as e:
        sys.stderr.write(f"tessera: error: cannot run the bundled command line {exe}: {e.strerror}\n")
        sys.exit(126 if os.path.exists(exe) else 127)
