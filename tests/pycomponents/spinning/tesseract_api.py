"""Loops in Python for `seconds` before answering y = x (a component busy in
the interpreter, not waiting in C). A negative `seconds` raises
KeyboardInterrupt at once, as Ctrl-C would in a Python host, for hosts
whose interpreter has no handler for it."""

import time

from pydantic import BaseModel

from tesseract_core.runtime import Array, Float64


class InputSchema(BaseModel):
    x: Array[(None,), Float64]
    seconds: Float64


class OutputSchema(BaseModel):
    y: Array[(None,), Float64]


def apply(inputs: InputSchema) -> OutputSchema:
    if inputs.seconds < 0:
        raise KeyboardInterrupt
    end = time.monotonic() + inputs.seconds
    turns = 0
    while time.monotonic() < end:
        turns += 1
    return OutputSchema(y=inputs.x)
