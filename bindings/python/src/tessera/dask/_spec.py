# SPDX-License-Identifier: MIT
"""ComponentSpec: how to open a component, as a small picklable value.

Tasks carry the spec, never an open component: a component holds a
library handle, worker processes and shared memory, none of which can
travel. Each Dask worker opens the spec once and keeps it (see _plugin).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .._component import Component, load


def _text(value: Any) -> str:
    # As tessera.load writes options, so that equal loads make equal specs.
    if isinstance(value, bool):
        return "1" if value else "0"
    return os.fspath(value) if isinstance(value, os.PathLike) else str(value)


def _pairs(items: Mapping[str, Any] | None) -> tuple[tuple[str, str], ...]:
    return tuple(sorted((str(k), _text(v)) for k, v in (items or {}).items()))


@dataclass(frozen=True)
class ComponentSpec:
    """What ``tessera.load`` is given: the path (made absolute, since the
    workers' working directory is not the client's; a served component's
    URL as it is), the mode and every option, configuration entry and
    environment variable, as text."""

    path: str
    mode: str
    options: tuple[tuple[str, str], ...] = ()
    config: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    # Which ClusterComponent opened it: two of the same path are two
    # components on each worker, and closing one leaves the other open.
    owner: str = ""

    @classmethod
    def make(cls, path: str | os.PathLike[str], mode: str = "inproc", *,
             config: Mapping[str, Any] | None = None, env: Mapping[str, Any] | None = None,
             owner: str = "", **options: Any) -> ComponentSpec:
        # A crashed worker process is started again at the next call: on a
        # cluster the alternative, every later task on that Dask worker
        # failing, is never what is wanted.
        if mode == "worker":
            options.setdefault("restart", "auto")
        opts = {k: v for k, v in options.items() if v is not None}
        where = os.fspath(path)
        if "://" not in where:
            where = os.path.abspath(where)
        return cls(where, mode, _pairs(opts), _pairs(config), _pairs(env), owner)

    @property
    def key(self) -> str:
        """A short digest of everything in the spec."""
        return hashlib.sha1(repr(self).encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        """The file or folder name, for keys and messages."""
        base = os.path.basename(self.path.rstrip("/")) or self.path
        return base[:-3] if base.endswith(".so") else base

    @property
    def plugin_name(self) -> str:
        """The name of the Dask worker plugin that keeps it open."""
        return f"tessera-{self.label}-{self.key}"

    def open(self) -> Component:
        """Open the component in this process."""
        return load(self.path, self.mode, config=dict(self.config), env=dict(self.env),
                    **dict(self.options))
