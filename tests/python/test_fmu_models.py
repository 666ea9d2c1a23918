# SPDX-License-Identifier: MIT
"""The project's own FMI 3.0 FMUs (plugins/fmu, packed into build/fmu/*.fmu)
checked with FMPy, the reference importer: their descriptions validate,
their simulations match the equations solved here independently, and the
failures they promise (a second instance of `once`, the faults of `faulty`,
the broken packages) happen as described."""

from __future__ import annotations

import ctypes
import re
import signal
import subprocess
import sys
import zipfile
from pathlib import Path

import fmpy
import numpy as np
import pytest
from fmpy.fmi3 import FMU3Model, FMU3Slave
from fmpy.validation import validate_fmu
from scipy.integrate import solve_ivp

from conftest import BUILD

FMUS = BUILD / "fmu"
GOOD = ("vanderpol", "spring", "once", "faulty")
# Value references, as plugins/fmu/*/modelDescription.xml give them.
VDP = {"x0": 1, "der(x0)": 2, "x1": 3, "der(x1)": 4, "mu": 5, "y": 6}


def fmu_file(name: str) -> Path:
    path = FMUS / f"{name}.fmu"
    assert path.is_file(), f"{path} is missing: build the target tessera_fmus first"
    return path


def open_instance(name: str, unzipdir: Path, logs: list | None = None):
    """An FMPy instance of build/fmu/<name>.fmu extracted to unzipdir;
    what the FMU logs goes to `logs` as (status, message)."""
    path = fmu_file(name)
    if not (unzipdir / "modelDescription.xml").exists():
        fmpy.extract(path, unzipdir)
    md = fmpy.read_model_description(path)
    model = md.modelExchange or md.coSimulation
    cls = FMU3Model if md.modelExchange else FMU3Slave
    fmu = cls(guid=md.guid, unzipDirectory=str(unzipdir),
              modelIdentifier=model.modelIdentifier, instanceName=name)

    def log(env, status, category, message):
        if logs is not None:
            logs.append((status, message.decode()))
    return fmu, log


@pytest.mark.parametrize("name", GOOD)
def test_fmu_model_passes_fmpy_validation(name):
    assert validate_fmu(str(fmu_file(name))) == []


def test_every_declared_fmi3_function_is_exported_and_nothing_else():
    header = Path(fmpy.__file__).parent / "c-code" / "fmi3Functions.h"
    declared = set(re.findall(r"#define (fmi3\w+)\s+fmi3FullName", header.read_text()))
    assert len(declared) > 70
    for name in GOOD:
        so = FMUS / name / "binaries" / "x86_64-linux" / f"{name}.so"
        lib = ctypes.CDLL(str(so))
        missing = [f for f in sorted(declared) if not hasattr(lib, f)]
        assert missing == [], f"{name}.so lacks {missing}"
        nm = subprocess.run(["nm", "-D", "--defined-only", str(so)], check=True,
                            capture_output=True, text=True).stdout
        exported = {line.split()[-1] for line in nm.splitlines() if line.split()[1] in "TDB"}
        assert exported == declared, f"{name}.so exports {sorted(exported - declared)}"


def van_der_pol(mu: float, x0: float, x1: float, times: np.ndarray) -> np.ndarray:
    def rhs(t, x):
        return [x[1], mu * (1 - x[0] ** 2) * x[1] - x[0]]
    sol = solve_ivp(rhs, (times[0], times[-1]), [x0, x1], t_eval=times, method="DOP853",
                    rtol=1e-12, atol=1e-12)
    assert sol.success
    return sol.y[0]


@pytest.mark.parametrize("start", [{}, {"mu": 0.5, "x0": 1.0, "x1": -1.0}],
                         ids=["defaults", "mu_and_states_set"])
def test_vanderpol_simulation_matches_solve_ivp(start):
    result = fmpy.simulate_fmu(str(fmu_file("vanderpol")), relative_tolerance=1e-10,
                               output_interval=0.1, start_values=start)
    assert result["time"][-1] == pytest.approx(20.0)
    expected = van_der_pol(start.get("mu", 1.0), start.get("x0", 2.0), start.get("x1", 0.0),
                           result["time"])
    np.testing.assert_allclose(result["y"], expected, rtol=1e-4, atol=1e-6)


def damped_oscillator(t, k, c, m, x0, v0, force):
    """Closed form of m x'' + c x' + k x = force (underdamped), x and x'."""
    w0 = np.sqrt(k / m)
    zeta = c / (2 * np.sqrt(k * m))
    assert zeta < 1
    wd = w0 * np.sqrt(1 - zeta ** 2)
    xe = force / k
    a = x0 - xe
    b = (v0 + zeta * w0 * a) / wd
    decay = np.exp(-zeta * w0 * t)
    x = xe + decay * (a * np.cos(wd * t) + b * np.sin(wd * t))
    v = decay * ((wd * b - zeta * w0 * a) * np.cos(wd * t) - (zeta * w0 * b + wd * a) * np.sin(wd * t))
    return x, v


@pytest.mark.parametrize("force", [0.0, 0.7], ids=["no_force", "constant_force"])
@pytest.mark.parametrize("params", [{}, {"k": 4.0, "c": 0.5, "m": 2.0, "x0": -0.5, "v0": 1.5}],
                         ids=["defaults", "parameters_set"])
def test_spring_simulation_matches_closed_form(force, params):
    signal_in = np.array([(0.0, force), (10.0, force)], dtype=[("time", float), ("F", float)])
    result = fmpy.simulate_fmu(str(fmu_file("spring")), start_values=params, input=signal_in)
    t = result["time"]
    assert len(t) == 101 and t[-1] == pytest.approx(10.0)
    p = {"k": 1.0, "c": 0.2, "m": 1.0, "x0": 1.0, "v0": 0.0} | params
    x, v = damped_oscillator(t, force=force, **p)
    np.testing.assert_allclose(result["x"], x, rtol=1e-4, atol=1e-8)
    np.testing.assert_allclose(result["v"], v, rtol=1e-4, atol=1e-8)


def test_spring_fmu_state_restores_the_trajectory(tmp_path):
    fmu, log = open_instance("spring", tmp_path)
    fmu.instantiate(logMessage=log)
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    t = 0.0
    for _ in range(5):
        fmu.doStep(t, 0.25)
        t += 0.25
    state = fmu.getFMUState()
    # Uneven steps: the FMU handles variable communication step sizes.
    for h in (0.3, 0.05, 0.65):
        fmu.doStep(t, h)
        t += h
    first = fmu.getFloat64([1, 2])
    fmu.setFMUState(state)
    fmu.doStep(1.25, 1.0)
    np.testing.assert_allclose(fmu.getFloat64([1, 2]), first, rtol=1e-12)
    x, v = damped_oscillator(2.25, 1.0, 0.2, 1.0, 1.0, 0.0, 0.0)
    np.testing.assert_allclose(first, [x, v], rtol=1e-9)
    fmu.freeFMUState(state)
    fmu.terminate()
    fmu.freeInstance()


def test_spring_refuses_a_fixed_parameter_in_step_mode_and_names_it(tmp_path):
    logs: list = []
    fmu, log = open_instance("spring", tmp_path, logs)
    fmu.instantiate(logMessage=log)
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    fmu.setFloat64([3, 4], [0.5, 2.0])   # the input F and the tunable k: allowed
    with pytest.raises(fmpy.fmi1.FMICallException):
        fmu.setFloat64([6], [3.0])        # the fixed mass m: not after initialization
    assert any("m (value reference 6) cannot be set in Step Mode" in m for _, m in logs), logs
    fmu.freeInstance()


def test_once_simulates_the_integrator():
    u = np.array([(0.0, 2.0), (1.0, 2.0)], dtype=[("time", float), ("u", float)])
    result = fmpy.simulate_fmu(str(fmu_file("once")), input=u, start_values={"gain": 3.0})
    np.testing.assert_allclose(result["y"], 6.0 * result["time"], rtol=1e-12, atol=1e-12)


def test_once_refuses_a_second_live_instance_with_a_message(tmp_path):
    logs: list = []
    first, log1 = open_instance("once", tmp_path, logs)
    second, log2 = open_instance("once", tmp_path, logs)   # the same binary, loaded once
    first.instantiate(logMessage=log1)
    with pytest.raises(Exception, match="Failed to instantiate"):
        second.instantiate(logMessage=log2)
    assert any("only once per process" in m for _, m in logs), logs
    first.freeInstance()
    second.instantiate(logMessage=log2)   # the first is gone: allowed again
    second.freeInstance()


@pytest.mark.parametrize("fault, function, status", [
    (1, "fmi3DoStep", 3), (2, "fmi3DoStep", 4), (5, "fmi3ExitInitializationMode", 3)],
    ids=["step_error", "step_fatal", "init_error"])
def test_faulty_fails_as_asked_with_a_message(fault, function, status):
    logs: list = []
    with pytest.raises(fmpy.fmi1.FMICallException, match=f"{function} failed with status {status}"):
        fmpy.simulate_fmu(str(fmu_file("faulty")), start_values={"fault": fault},
                          logger=lambda env, st, cat, msg: logs.append((st, msg.decode())))
    assert [(st, m) for st, m in logs if f"fault {fault}:" in m and st == status], logs


def test_faulty_without_fault_integrates_y_equal_t():
    result = fmpy.simulate_fmu(str(fmu_file("faulty")))
    np.testing.assert_allclose(result["y"], result["time"], rtol=1e-12, atol=1e-12)


def run_faulty_child(fault: int, tmp_path: Path) -> subprocess.Popen:
    """A Python process simulating faulty with `fault`; it prints
    `stepping` just before the first fmi3DoStep."""
    script = tmp_path / "child.py"
    script.write_text(
        "import sys\n"
        "from fmpy.fmi3 import FMU3Slave\n"
        "import fmpy\n"
        f"md = fmpy.read_model_description({str(fmu_file('faulty'))!r})\n"
        f"d = fmpy.extract({str(fmu_file('faulty'))!r}, {str(tmp_path / 'x')!r})\n"
        "f = FMU3Slave(guid=md.guid, unzipDirectory=d, modelIdentifier='faulty')\n"
        "f.instantiate()\n"
        f"f.setFloat64([1], [{float(fault)}])\n"
        "f.enterInitializationMode(startTime=0.0)\n"
        "f.exitInitializationMode()\n"
        "print('stepping', flush=True)\n"
        "f.doStep(0.0, 0.1)\n"
        "print('returned', flush=True)\n")
    return subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)


def test_faulty_fault_3_crashes_the_process_in_do_step(tmp_path):
    child = run_faulty_child(3, tmp_path)
    out, _ = child.communicate(timeout=120)
    assert out == "stepping\n"
    assert child.returncode == -signal.SIGSEGV


def test_faulty_fault_4_never_returns_from_do_step(tmp_path):
    child = run_faulty_child(4, tmp_path)
    try:
        assert child.stdout.readline() == "stepping\n"
        # Inside fmi3DoStep the process sleeps in clock_nanosleep (syscall
        # 230 on x86_64), again and again: it is there, not returning.
        seen = 0
        for _ in range(600):
            fields = Path(f"/proc/{child.pid}/syscall").read_text().split()
            if fields and fields[0] == "230":
                seen += 1
                if seen == 3:
                    break
            assert child.poll() is None
            subprocess.run(["sleep", "0.2"], check=True)
        assert seen == 3, "the child never slept in fmi3DoStep"
    finally:
        child.kill()
        child.wait()
    assert child.stdout.read() == ""


def test_wrongtoken_fails_to_instantiate_with_a_message():
    logs: list = []
    with pytest.raises(Exception, match="Failed to instantiate"):
        fmpy.simulate_fmu(str(fmu_file("wrongtoken")),
                          logger=lambda env, st, cat, msg: logs.append(msg.decode()))
    assert any("instantiationToken" in m and "does not match" in m for m in logs), logs
    # The same binary as vanderpol.fmu: only the description differs.
    with zipfile.ZipFile(fmu_file("wrongtoken")) as a, zipfile.ZipFile(fmu_file("vanderpol")) as b:
        so = "binaries/x86_64-linux/vanderpol.so"
        assert a.read(so) == b.read(so)
        assert a.read("modelDescription.xml") != b.read("modelDescription.xml")


def test_noplatform_has_its_binary_only_for_aarch64_linux():
    with zipfile.ZipFile(fmu_file("noplatform")) as z:
        binaries = [n for n in z.namelist() if n.startswith("binaries/") and not n.endswith("/")]
    assert binaries == ["binaries/aarch64-linux/spring.so"]
    with pytest.raises(Exception, match="cannot be simulated on the current platform"):
        fmpy.simulate_fmu(str(fmu_file("noplatform")))


def vanderpol_in_event_mode(tmp_path, logs=None):
    fmu, log = open_instance("vanderpol", tmp_path, logs)
    fmu.instantiate(logMessage=log)
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    return fmu


def test_vanderpol_directional_and_adjoint_derivatives_match_finite_differences(tmp_path):
    fmu = vanderpol_in_event_mode(tmp_path)
    unknowns = [VDP["der(x0)"], VDP["der(x1)"], VDP["y"]]
    knowns = [VDP["x0"], VDP["x1"], VDP["mu"]]
    point = np.array([0.7, -1.3, 1.8])

    def evaluate(p):
        fmu.setContinuousStates((ctypes.c_double * 2)(p[0], p[1]), 2)
        fmu.setFloat64([VDP["mu"]], [p[2]])
        return np.array(fmu.getFloat64(unknowns))

    h = 1e-6
    fd = np.column_stack([(evaluate(point + h * e) - evaluate(point - h * e)) / (2 * h)
                          for e in np.eye(3)])
    evaluate(point)
    jvp = np.column_stack([fmu.getDirectionalDerivative(unknowns, knowns, list(e)) for e in np.eye(3)])
    np.testing.assert_allclose(jvp, fd, rtol=1e-7, atol=1e-8)
    x0, x1, mu = point
    assert jvp[1, 0] == pytest.approx(-2 * mu * x0 * x1 - 1, rel=1e-14)
    # A seed with several entries and a subset of knowns, in another order.
    seed = [0.3, -2.0]
    sub = fmu.getDirectionalDerivative([VDP["der(x1)"]], [VDP["mu"], VDP["x0"]], seed)
    assert sub[0] == pytest.approx(jvp[1, 2] * seed[0] + jvp[1, 0] * seed[1], rel=1e-14)
    w = [0.5, -1.5, 2.0]
    vjp = fmu.getAdjointDerivative(unknowns, knowns, w, nSensitivity=3)
    np.testing.assert_allclose(vjp, np.array(w) @ fd, rtol=1e-7, atol=1e-8)
    fmu.freeInstance()


def test_vanderpol_derivative_of_an_unknown_value_reference_is_refused(tmp_path):
    logs: list = []
    fmu = vanderpol_in_event_mode(tmp_path, logs)
    with pytest.raises(fmpy.fmi1.FMICallException):
        fmu.getDirectionalDerivative([VDP["der(x1)"]], [VDP["y"]], [1.0])
    assert any("value reference 6 is not a known" in m for _, m in logs), logs
    fmu.freeInstance()


def test_vanderpol_mu_can_be_set_in_continuous_time_mode(tmp_path):
    fmu = vanderpol_in_event_mode(tmp_path)
    fmu.enterContinuousTimeMode()
    fmu.setContinuousStates((ctypes.c_double * 2)(1.5, 2.0), 2)
    fmu.setFloat64([VDP["mu"]], [3.0])
    der = (ctypes.c_double * 2)()
    fmu.getContinuousStateDerivatives(der, 2)
    assert list(der) == [2.0, 3.0 * (1 - 1.5 ** 2) * 2.0 - 1.5]
    fmu.freeInstance()


def spring_in_step_mode(tmp_path, logs):
    fmu, log = open_instance("spring", tmp_path, logs)
    fmu.instantiate(logMessage=log)
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    return fmu


@pytest.mark.parametrize("point, step, message", [
    (0.5, 0.1, "currentCommunicationPoint 0.5 is not the FMU's time 0"),
    (0.0, -0.1, "communicationStepSize -0.1 is not positive"),
    (0.0, 0.0, "communicationStepSize 0 is not positive"),
    (0.0, 1e7, "would take more than 1e+09 substeps")],
    ids=["wrong_point", "negative_step", "zero_step", "huge_step"])
def test_spring_refuses_a_bad_step_and_then_any_step(tmp_path, point, step, message):
    logs: list = []
    fmu = spring_in_step_mode(tmp_path, logs)
    with pytest.raises(fmpy.fmi1.FMICallException, match="fmi3DoStep failed with status 3"):
        fmu.doStep(point, step)
    assert any(message in m for _, m in logs), logs
    # After fmi3Error only fmi3Reset (or freeing) helps.
    with pytest.raises(fmpy.fmi1.FMICallException):
        fmu.doStep(0.0, 0.1)
    assert any("not allowed in an error state" in m for _, m in logs), logs
    fmu.reset()
    fmu.enterInitializationMode(startTime=0.0)
    fmu.exitInitializationMode()
    fmu.doStep(0.0, 0.1)
    fmu.freeInstance()


@pytest.mark.parametrize("name, cls, message", [
    ("vanderpol", FMU3Slave, "this FMU is Model Exchange only"),
    ("spring", FMU3Model, "this FMU is Co-Simulation only")],
    ids=["vanderpol_as_cosimulation", "spring_as_model_exchange"])
def test_instantiating_an_interface_the_fmu_lacks_fails_with_a_message(tmp_path, name, cls,
                                                                       message):
    logs: list = []
    fmu, log = open_instance(name, tmp_path, logs)
    other = cls(guid=fmu.guid, unzipDirectory=str(tmp_path), modelIdentifier=name)
    with pytest.raises(Exception, match="Failed to instantiate"):
        other.instantiate(logMessage=log)
    assert any(message in m for _, m in logs), logs
