# SPDX-License-Identifier: MIT
"""The study's timing, paired by round: every function is timed once per
round, a step beside the calls it makes, so that a difference (the glue
of a step, one mode against another) is taken within each round and the
machine's drift falls on both of its sides alike. A difference is
reported as the median over rounds with its interquartile range; one whose
median is smaller than that range is inside the noise and is printed as
such, never as a figure with a sign."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass
import time

import numpy as np


@dataclass(frozen=True)
class Spread:
    """A figure over rounds: median, quartiles, extremes, how many rounds."""
    median: float
    q1: float
    q3: float
    lo: float
    hi: float
    n: int

    @property
    def iqr(self) -> float:
        return self.q3 - self.q1

    @property
    def in_noise(self) -> bool:
        """|median| smaller than the spread: not distinguishable from 0."""
        return abs(self.median) < self.iqr

    def as_dict(self) -> dict:
        return {"median": self.median, "q1": self.q1, "q3": self.q3, "min": self.lo,
                "max": self.hi, "rounds": self.n, "in_noise": self.in_noise}


def summarise(values: Sequence[float]) -> Spread:
    v = np.asarray(values, dtype=np.float64)
    if v.ndim != 1 or v.size == 0:
        raise ValueError(f"summarise: need a non-empty list of numbers, got shape {v.shape}")
    q1, med, q3 = (float(x) for x in np.percentile(v, [25, 50, 75]))
    return Spread(med, q1, q3, float(v.min()), float(v.max()), int(v.size))


def paired(minuend: Sequence[float], *subtrahends: Sequence[float]) -> Spread:
    """Per round, minuend minus the sum of the subtrahends; their spread."""
    a = np.asarray(minuend, dtype=np.float64)
    for k, s in enumerate(subtrahends):
        if len(s) != a.size:
            raise ValueError(f"paired: subtrahend {k} has {len(s)} rounds, "
                             f"the minuend {a.size}")
        a = a - np.asarray(s, dtype=np.float64)
    return summarise(a)


def cell(s: Spread, digits: int = 1, difference: bool = True) -> str:
    """A table cell: 'median (IQR x)', or for a difference inside the
    noise '~0 (IQR x)' (a time is never marked: it cannot be 0)."""
    iqr = f"IQR {s.iqr:.{digits}f}"
    if difference and s.in_noise:
        return f"~0 ({iqr})"
    return f"{s.median:.{digits}f} ({iqr})"


def rounds_ms(groups: Mapping[Hashable, Mapping[str, Callable[[], object]]], rounds: int,
              clock: Callable[[], float] = time.perf_counter) -> dict:
    """Milliseconds of every function in every round: {group: {name: [ms
    per round]}}. Each function is called once before the first round (so
    that compilation and first-call set-up count in none); in round r the
    groups, and the functions within each, start at the r-th one in turn,
    so that no function always runs first or right after the same one."""
    if rounds < 1:
        raise ValueError(f"rounds_ms: rounds must be at least 1, got {rounds}")
    for fns in groups.values():
        for fn in fns.values():
            fn()
    keys = list(groups)
    times = {g: {name: [] for name in groups[g]} for g in keys}
    for r in range(rounds):
        for g in keys[r % len(keys):] + keys[:r % len(keys)]:
            names = list(groups[g])
            for name in names[r % len(names):] + names[:r % len(names)]:
                t0 = clock()
                groups[g][name]()
                times[g][name].append((clock() - t0) * 1e3)
    return times
