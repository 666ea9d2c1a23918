# SPDX-License-Identifier: MIT
"""``python -m tessera``: the ``tessera`` command line (see _cli.py)."""

from ._cli import main

main()
