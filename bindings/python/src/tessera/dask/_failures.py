# SPDX-License-Identifier: MIT
"""A failed task, told in the library's words.

A component's own failure arrives as its tessera class, already naming the
item and the Dask worker (_tasks.located). A component that crashes
in-process takes its Dask worker down with it; Dask runs the task again
elsewhere, and after ``distributed.scheduler.allowed-failures`` deaths
reports ``KilledWorker``, which says nothing of the component: that is
turned into a WorkerError that does.
"""

from __future__ import annotations

from distributed.scheduler import KilledWorker

from .. import _errors


def _key_parts(key) -> tuple[str, str]:
    """Keys read tessera-<label>-<endpoint>-<token>-<item or first:end>
    (_cluster, _batch): the endpoint and the item."""
    parts = str(key).rsplit("-", 3)
    return (parts[1], parts[3]) if len(parts) == 4 else ("?", str(key))


def explained(exc: BaseException, label: str) -> BaseException:
    if isinstance(exc, KilledWorker):
        endpoint, item = _key_parts(exc.task)
        what = "items" if ":" in item else "item"
        return _errors.WorkerError(
            _errors.TSR_E_WORKER,
            f"component '{label}', endpoint '{endpoint}': {what} {item} took down every Dask "
            f"worker that ran it ({exc.allowed_failures + 1}, the last "
            f"{exc.last_worker.address}): the component crashed in-process. Load it with "
            "mode='worker' to keep the Dask worker alive and get the component's error, "
            "retried where Dask places the task")
    return exc
