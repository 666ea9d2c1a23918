# SPDX-License-Identifier: MIT
"""tessera.serve: a component behind Tesseract's REST API from this process,
the library `tessera serve` runs, for tests and notebooks."""

from __future__ import annotations

import os

from . import _ext
from ._component import Component

_ENCODINGS = {"json": 0, "json+base64": 1, "json+binref": 2}


class Server:
    """A running server: ``url``, ``port``; ``close()`` (or leaving a
    ``with`` block) stops it after the requests in progress."""

    def __init__(self, component: Component, *, host: str = "127.0.0.1", port: int = 0,
                 token: str | None = None, input_path: str | os.PathLike | None = None,
                 output_path: str | os.PathLike | None = None, output_format: str = "json",
                 compression: str | None = None, max_body_bytes: int = 0,
                 threads: int = 0) -> None:
        if output_format not in _ENCODINGS:
            raise ValueError(f"output_format: {output_format!r} is not one of "
                             f"{', '.join(_ENCODINGS)}")
        if compression not in (None, "none", "lz4"):
            raise ValueError(f"compression: {compression!r} is not 'lz4' or None")
        self._capsule = _ext._serve_start(
            component, host, int(port), token,
            None if input_path is None else os.fspath(input_path),
            None if output_path is None else os.fspath(output_path),
            _ENCODINGS[output_format], compression == "lz4", int(max_body_bytes), int(threads))
        self.host = host
        self.port = _ext._serve_port(self._capsule)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    def close(self) -> None:
        _ext._serve_stop(self._capsule)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<tessera.Server {self.url}>"


def serve(component: Component, port: int = 0, **options) -> Server:
    """Serve ``component`` over HTTP (Tesseract's REST API: /health,
    /openapi.json, /apply and its derivative endpoints) until the returned
    server is closed; tesseract-core's ``Tesseract.from_url(server.url)``
    and tesseract-jax call it unchanged. Options as ``tessera serve``'s:
    host, token, input_path, output_path, output_format, compression,
    max_body_bytes, threads."""
    return Server(component, port=port, **options)
