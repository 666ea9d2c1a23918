# SPDX-License-Identifier: MIT
"""What the FMU tests share: where the build packed the project's FMUs
(<build>/fmu/NAME.fmu, plugins/fmu), the spring's and Van der Pol's
variables and closed forms, the communication grid FMPy steps on, and
FMPy's simulation of the same experiment. Written here, not taken from the
package under test."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from conftest import BUILD

FMU_DIR = BUILD / "fmu"
TESSERA = BUILD / "bin" / "tessera"

# The spring's parameters in the tests: underdamped, from rest at x0 = 1.
SPRING = {"k": 4.0, "c": 0.4, "m": 1.0, "x0": 1.0, "v0": 0.0}


def fmu_path(name: str) -> Path:
    """The packed FMU NAME.fmu of the build; its absence is a failure (the
    build makes them), not a skip."""
    path = FMU_DIR / f"{name}.fmu"
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: build the project first (plugins/fmu)")
    return path


def grid(start: float, stop: float, interval: float) -> np.ndarray:
    """The communication points FMPy's simulate_fmu steps to:
    start + k * interval, computed as it computes them, so that both
    importers call fmi3DoStep with the same arguments."""
    steps = int(round((stop - start) / interval))
    return start + np.arange(steps + 1) * interval


def held_signal(name: str, t: np.ndarray, values: np.ndarray) -> np.ndarray:
    """A piecewise-constant input for FMPy: values[k] over [t[k], t[k+1]).

    FMPy (0.3.x, FMI 3.0 Co-Simulation without event mode or input
    derivatives) sets an input once per communication point, before that
    fmi3DoStep, to its table's value there: linear interpolation between
    rows, and at a time given twice the second row (the value after the
    event). Each inner point t[k] is written twice, (t[k], values[k-1])
    ending the previous interval and (t[k], values[k]) starting the next,
    so the table itself is piecewise constant and FMPy sets values[k] at
    t[k], held for the step, as Tessera does. (With one row per grid point
    FMPy would set the same values, since it samples only at the grid's
    points; the doubled rows keep the meaning if the grids differ.)"""
    rows = [(t[0], values[0])]
    for k in range(1, len(t)):
        rows.append((t[k], values[k - 1]))
        if k < len(t) - 1:
            rows.append((t[k], values[k]))
    return np.array(rows, dtype=[("time", np.float64), (name, np.float64)])


def fmpy_simulate(path: Path, t: np.ndarray, start_values: dict, outputs: list[str],
                  signal: np.ndarray | None = None) -> np.ndarray:
    """FMPy's Co-Simulation of the FMU over the grid t (one fmi3DoStep per
    interval), with the parameters' values as start_values."""
    import fmpy
    interval = float(t[1] - t[0])
    return fmpy.simulate_fmu(str(path), start_time=float(t[0]), stop_time=float(t[-1]),
                             output_interval=interval, start_values=dict(start_values),
                             input=signal, output=outputs, fmi_type="CoSimulation")


def vdp_rhs(x: np.ndarray, mu: float) -> np.ndarray:
    """Van der Pol: x0' = x1, x1' = mu (1 - x0^2) x1 - x0."""
    return np.array([x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]])


def vdp_jacobian(x: np.ndarray, mu: float) -> np.ndarray:
    """d(dx)/d(x0, x1, mu), exact: 2 x 3."""
    return np.array([[0.0, 1.0, 0.0],
                     [-2 * mu * x[0] * x[1] - 1, mu * (1 - x[0] ** 2), (1 - x[0] ** 2) * x[1]]])
