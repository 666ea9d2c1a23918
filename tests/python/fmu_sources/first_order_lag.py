# SPDX-License-Identifier: MIT
"""A first-order lag as an FMI 3.0 Co-Simulation FMU built by pythonfmu3
(tests/python/test_fmu_pythonfmu3.py): y' = (u - y) / tau, one explicit
Euler step per communication step, so that a trajectory is known exactly:
y[k+1] = y[k] + h (u[k] - y[k]) / tau."""

from pythonfmu3 import Fmi3Causality, Fmi3Slave, Fmi3Variability, Float64


class FirstOrderLag(Fmi3Slave):
    description = "First-order lag y' = (u - y) / tau (explicit Euler per step)"

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.time = 0.0
        self.tau = 0.5
        self.y0 = 0.0
        self.u = 1.0
        self.y = 0.0
        self.register_variable(Float64("time", causality=Fmi3Causality.independent,
                                       variability=Fmi3Variability.continuous))
        self.register_variable(Float64("tau", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed,
                                       description="Time constant (positive)"))
        self.register_variable(Float64("y0", causality=Fmi3Causality.parameter,
                                       variability=Fmi3Variability.fixed,
                                       description="Initial output"))
        self.register_variable(Float64("u", causality=Fmi3Causality.input,
                                       description="Input, held over each step"))
        self.register_variable(Float64("y", causality=Fmi3Causality.output,
                                       description="Lagged output"))

    def exit_initialization_mode(self):
        self.y = self.y0

    def do_step(self, current_time, step_size):
        self.y += step_size * (self.u - self.y) / self.tau
        return True
