# SPDX-License-Identifier: MIT
"""Ctrl-C during a long call: SIGINT raises KeyboardInterrupt well before
the call would have ended, and the component serves on.

The plugin is tests/plugins/long_call.c: apply runs for ``ms``
milliseconds (an input), polling tsr_ctx_cancelled unless configured with
poll="0". SIGINT comes from a timer thread 0.3 s into a 3 s call. Bounds on
time are generous (a loaded machine): nothing tighter than "well before 3 s".

An in-process Python component (tests/pycomponents/sleeping, spinning)
runs in this interpreter: Ctrl-C raises KeyboardInterrupt inside it, and
that KeyboardInterrupt, not a tessera error, reaches the caller.
"""

from __future__ import annotations

import os
import signal
import threading
import time

import numpy as np
import pytest

import tessera
from conftest import ROOT

PYCOMPONENTS = ROOT / "tests" / "pycomponents"
LONG_MS = 3000.0
ENDS_BEFORE_S = 1.5
GENEROUS_GRACE_MS = 1000   # cancel_grace_ms: past any scheduling delay


@pytest.fixture(autouse=True)
def ctrl_c_raises():
    """Python's own SIGINT handler, as an interactive session has it: a
    test run started in the background by a non-interactive shell inherits
    SIGINT ignored, and then no KeyboardInterrupt could ever be raised."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def sigint_in(seconds: float) -> threading.Timer:
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    return timer


def interrupted(comp: tessera.Component, ms: float = LONG_MS) -> float:
    """Run a long call, SIGINT 0.3 s in; the time it took to raise."""
    timer = sigint_in(0.3)
    t0 = time.monotonic()
    try:
        with pytest.raises(KeyboardInterrupt):
            comp.apply({"ms": ms, "x": np.arange(4.0)})
        return time.monotonic() - t0
    finally:
        timer.cancel()
        timer.join()


def serves_on(comp: tessera.Component) -> None:
    out = comp.apply({"ms": 1.0, "x": np.arange(4.0)})
    np.testing.assert_array_equal(out["y"], np.arange(4.0))


@pytest.mark.parametrize("poll", ["1", "0"], ids=["plugin-polls", "plugin-does-not-poll"])
def test_ctrl_c_stops_a_long_worker_call(load, poll):
    # A polling worker is given a grace no scheduling delay reaches (4 test
    # processes on 2 cores, ASan), so that it answers and is reused; with
    # the default 25 ms a slow answer is a kill. One that never polls never
    # answers: killed after the default grace whatever the scheduling.
    grace = {"cancel_grace_ms": GENEROUS_GRACE_MS} if poll == "1" else {}
    comp = load("long_call", "worker", config={"poll": poll}, **grace)
    took = interrupted(comp)
    assert took < ENDS_BEFORE_S, f"KeyboardInterrupt came {took:.2f} s into a 3 s call"
    serves_on(comp)
    stats = comp.stats()
    if poll == "1":   # the worker stopped the call itself and was reused
        assert stats["worker_deaths"] == 0 and stats["worker_starts"] == 1
    else:             # killed after the grace, another started for the next call
        assert stats["worker_deaths"] == 1 and stats["worker_starts"] == 2


@pytest.mark.parametrize("mode", ["inproc", "isolated"])
def test_ctrl_c_stops_an_in_process_plugin_that_polls(load, mode):
    comp = load("long_call", mode)
    took = interrupted(comp)
    assert took < ENDS_BEFORE_S, f"KeyboardInterrupt came {took:.2f} s into a 3 s call"
    serves_on(comp)


def test_an_in_process_plugin_that_does_not_poll_runs_to_its_end(load):
    # A running C function cannot be stopped: Ctrl-C arrives after it.
    comp = load("long_call", "inproc", config={"poll": "0"})
    took = interrupted(comp, ms=800.0)
    assert took >= 0.75
    serves_on(comp)


def test_a_handler_that_does_not_raise_lets_the_call_finish(load):
    comp = load("long_call", "worker")
    seen: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda sig, frame: seen.append(sig))
    timer = sigint_in(0.2)
    try:
        out = comp.apply({"ms": 600.0, "x": np.arange(4.0)})
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert seen == [signal.SIGINT]
    np.testing.assert_array_equal(out["y"], np.arange(4.0))


def test_a_handler_that_raises_stops_the_call_with_its_exception(load):
    comp = load("long_call", "worker")

    def handler(sig, frame):
        raise TimeoutError("stop")

    previous = signal.signal(signal.SIGINT, handler)
    timer = sigint_in(0.3)
    t0 = time.monotonic()
    try:
        with pytest.raises(TimeoutError, match="stop"):
            comp.apply({"ms": LONG_MS, "x": np.arange(4.0)})
    finally:
        timer.join()
        signal.signal(signal.SIGINT, previous)
    assert time.monotonic() - t0 < ENDS_BEFORE_S
    serves_on(comp)


def test_the_cancelled_code_has_its_class():
    assert tessera.error_class(-21) is tessera.CancelledError
    assert issubclass(tessera.CancelledError, tessera.TesseraError)
    assert tessera.CancelledError(-21, "x").code_name == "TSR_E_CANCELLED"


def test_ctrl_c_is_not_held_up_by_another_threads_abstract_eval(load):
    """Another thread's abstract_eval that waits for the busy worker waits
    without the GIL: Ctrl-C still stops the main thread's long call, and the
    other thread's call then completes."""
    comp = load("long_call", "worker")
    shapes = {}

    def trace():
        time.sleep(0.1)
        shapes.update(comp.abstract_eval({"ms": 1.0, "x": np.arange(4.0)}))

    other = threading.Thread(target=trace)
    other.start()
    try:
        took = interrupted(comp)
    finally:
        other.join(timeout=10)
    assert not other.is_alive(), "the other thread's abstract_eval never returned"
    assert took < ENDS_BEFORE_S, f"KeyboardInterrupt came {took:.2f} s into a 3 s call"
    assert tuple(shapes["y"].shape) == (4,)
    serves_on(comp)


# ---- in-process Python components ------------------------------------------------


@pytest.mark.parametrize("name", ["sleeping", "spinning"], ids=["sleeps", "loops-in-python"])
def test_ctrl_c_in_an_in_process_python_component_raises_keyboard_interrupt(name):
    comp = tessera.load(str(PYCOMPONENTS / name), "inproc")
    try:
        timer = sigint_in(0.3)
        t0 = time.monotonic()
        try:
            with pytest.raises(KeyboardInterrupt) as raised:
                comp.apply({"x": np.arange(4.0), "seconds": LONG_MS / 1000})
            took = time.monotonic() - t0
        finally:
            timer.cancel()
            timer.join()
        assert took < ENDS_BEFORE_S, f"KeyboardInterrupt came {took:.2f} s into a 3 s call"
        # the exception raised in the component, with its frames
        files = [str(entry.path) for entry in raised.traceback]
        assert any(f.endswith("tesseract_api.py") for f in files), files
        out = comp.apply({"x": np.arange(4.0), "seconds": 0.0})
        np.testing.assert_array_equal(out["y"], np.arange(4.0))
    finally:
        comp.close()


def test_an_except_exception_retry_does_not_swallow_ctrl_c_in_a_python_component():
    comp = tessera.load(str(PYCOMPONENTS / "sleeping"), "inproc")
    attempts = []
    try:
        timer = sigint_in(0.3)
        try:
            with pytest.raises(KeyboardInterrupt):
                for _ in range(3):   # an optimiser's retry on a failed evaluation
                    attempts.append(1)
                    try:
                        comp.apply({"x": np.arange(4.0), "seconds": LONG_MS / 1000})
                    except Exception:  # noqa: BLE001 - the retry under test
                        continue
        finally:
            timer.cancel()
            timer.join()
        assert len(attempts) == 1
    finally:
        comp.close()


def test_a_keyboard_interrupt_the_component_raises_itself_is_raised_too():
    comp = tessera.load(str(PYCOMPONENTS / "spinning"), "inproc")
    try:
        with pytest.raises(KeyboardInterrupt):
            comp.apply({"x": np.arange(4.0), "seconds": -1.0})
        out = comp.apply({"x": np.arange(4.0), "seconds": 0.0})
        np.testing.assert_array_equal(out["y"], np.arange(4.0))
    finally:
        comp.close()
