# SPDX-License-Identifier: MIT
"""Progress of a map or an eager batch, shown by Dask itself:
``distributed.progress`` on the tasks' futures. In a console it draws
Dask's text bar on stdout and returns when every task has finished (or
one failed); in a notebook it shows Dask's widget and returns at once.
Off by default, as in Dask, where progress is asked for."""

from __future__ import annotations

from typing import Any, Sequence


def follow(futures: Sequence[Any], progress: bool) -> None:
    """Show the progress of futures when progress is true."""
    if not progress or not futures:
        return
    from distributed import progress as dask_progress

    # multi=False: one bar for the whole map, whatever its keys' prefixes.
    bar = dask_progress(list(futures), multi=False)
    if bar is not None:   # a notebook's widget: shown, as the last line of a cell would be
        from IPython.display import display

        display(bar)
