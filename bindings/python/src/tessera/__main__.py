# SPDX-License-Identifier: MIT
"""``python -m tessera``: the ``tessera`` command line bundled in the
package, as the console script runs it (_tessera_cli)."""

from _tessera_cli import main

main()
