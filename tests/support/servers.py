# SPDX-License-Identifier: MIT
"""Servers for the tests, the benchmarks and the examples alike: a free
loopback port, a server process (`tessera serve`, `tesseract-runtime
serve`, any command line in which "{port}" stands for the port) started in
a session of its own, waited for until GET /health answers 200 or a
deadline passes, and stopped with everything it started.

It lives outside the tessera package so that using it needs no install:
tests/python/conftest.py puts this folder on sys.path; bench/ and the
examples add it by path.
"""
from __future__ import annotations

import contextlib
import http.client
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

HOST = "127.0.0.1"
START_LIMIT_S = 120  # a Python component may take a while to import


class ServerError(RuntimeError):
    """A server that exited while starting or never answered /health."""


def free_port() -> int:
    """A TCP port nothing listens on at 127.0.0.1 right now."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def health_answers(port: int, timeout: float = 5) -> bool:
    """Whether GET /health on the port answers 200."""
    c = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        c.request("GET", "/health")
        return c.getresponse().status == 200
    except OSError:
        return False
    finally:
        c.close()


def tesseract_runtime() -> str | None:
    """tesseract-core's tesseract-runtime on PATH, if installed."""
    return shutil.which("tesseract-runtime")


def runtime_serve_argv(*extra: str) -> list[str]:
    """`tesseract-runtime serve` on loopback; raises ServerError without it."""
    exe = tesseract_runtime()
    if exe is None:
        raise ServerError("tesseract-runtime is not installed "
                          "(pip install 'tesseract-core[runtime]')")
    return [exe, "serve", "--host", HOST, "--port", "{port}", *extra]


class Server:
    """A server process on a free port: "{port}" in argv and in log becomes
    the port. Its stdout and stderr go to log (a path; None: a temporary
    file, removed by remove_log()); env and cwd as for subprocess.Popen."""

    def __init__(self, argv: Sequence[str | os.PathLike], *, env: dict | None = None,
                 cwd: str | os.PathLike | None = None, log: str | os.PathLike | None = None,
                 what: str | None = None) -> None:
        self.port = free_port()
        self.url = f"http://{HOST}:{self.port}"
        argv = [str(a).replace("{port}", str(self.port)) for a in argv]
        self.what = what or " ".join([Path(argv[0]).name, *argv[1:2]])
        self._own_log = log is None
        if log is not None:
            log = str(log).replace("{port}", str(self.port))
        else:
            fd, log = tempfile.mkstemp(prefix="tessera-server-", suffix=".log")
            os.close(fd)
        self.log = Path(log)
        with open(self.log, "wb") as out:
            self.proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True)

    def output(self, tail: int | None = None) -> str:
        """What it wrote so far (its last `tail` characters)."""
        try:
            text = self.log.read_text(errors="replace")
        except OSError:
            return ""
        return text if tail is None else text[-tail:]

    def wait_healthy(self, limit_s: float = START_LIMIT_S, *, deadline: float | None = None,
                     ) -> Server:
        """Back once /health answers; ServerError if it exits first or
        the deadline (a time.monotonic(); else limit_s from now) passes."""
        deadline = time.monotonic() + limit_s if deadline is None else deadline
        while not health_answers(self.port):
            if self.proc.poll() is not None:
                raise ServerError(f"{self.what} exited with {self.proc.returncode} while "
                                  f"starting:\n{self.output(2000)}")
            if time.monotonic() > deadline:
                raise ServerError(f"{self.what} did not answer /health:\n{self.output(2000)}")
            time.sleep(0.05)
        return self

    def stop(self, grace_s: float = 20) -> int:
        """SIGTERM to its process group, SIGKILL after grace_s; its exit
        status (negative: the signal that ended it)."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode

    def remove_log(self) -> None:
        if self._own_log:
            self.log.unlink(missing_ok=True)


@contextlib.contextmanager
def serving(argv: Sequence[str | os.PathLike], *, limit_s: float = START_LIMIT_S,
            **kwargs) -> Iterator[Server]:
    """A Server that answers /health, stopped (and its own log removed)
    however the block ends."""
    server = Server(argv, **kwargs)
    try:
        yield server.wait_healthy(limit_s)
    finally:
        server.stop()
        server.remove_log()


@contextlib.contextmanager
def serving_all(argvs: dict[str, tuple[Sequence[str | os.PathLike], dict]],
                limit_s: float = START_LIMIT_S) -> Iterator[dict[str, Server]]:
    """Several servers started side by side, then each waited for within
    one deadline: {name: (argv, Server keyword arguments)} -> {name: Server}."""
    servers: dict[str, Server] = {}
    try:
        for name, (argv, kwargs) in argvs.items():
            servers[name] = Server(argv, what=name, **kwargs)
        deadline = time.monotonic() + limit_s
        for server in servers.values():
            server.wait_healthy(deadline=deadline)
        yield servers
    finally:
        for server in servers.values():
            if server.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(server.proc.pid, signal.SIGTERM)
        for server in servers.values():
            server.stop(grace_s=5)
            server.remove_log()
