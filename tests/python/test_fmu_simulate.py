# SPDX-License-Identifier: MIT
"""The '#simulate' form of a Model Exchange FMU: the FMU integrated by the
library with CVODES over a grid t. Its trajectory is checked against
FMPy's own simulation and against SciPy's integration of the same ODE, its
jvp, vjp and jacobian (CVODES forward sensitivities over
fmi3GetDirectionalDerivative) against central differences of apply, in
process and in a worker, with `tessera check-gradients`, the central
differences an FMU without directional derivatives gets, and its
refusals: a bad grid, a non-finite x0, a step budget the integration
exceeds, a bad config."""

from __future__ import annotations

import json
import subprocess
import zipfile

import numpy as np
import pytest

import tessera
from conftest import BUILD

FMU = BUILD / "fmu" / "vanderpol.fmu"
SIM = f"{FMU}#simulate"
TESSERA = BUILD / "bin" / "tessera"
# Tight tolerances, so that the comparisons measure the form, not CVODES.
TIGHT = {"rtol": "1e-12"}



def vanderpol(mu: float):
    def f(_t, x):
        return [x[1], mu * (1.0 - x[0] * x[0]) * x[1] - x[0]]
    return f


@pytest.fixture
def sim():
    assert FMU.exists(), f"{FMU} is not built (plugins/fmu)"
    opened = []

    def _open(mode: str = "inproc", path: str = SIM, **kwargs) -> tessera.Component:
        kwargs.setdefault("config", TIGHT)
        comp = tessera.load(path, mode, **kwargs)
        opened.append(comp)
        return comp

    yield _open
    for comp in reversed(opened):
        comp.close()


def test_simulate_schema_has_grid_states_parameter_and_output(sim):
    comp = sim()
    names = [f.name for f in comp.schema.inputs]
    assert names[:2] == ["t", "x0"] and "mu" in names
    outs = {f.name: f for f in comp.schema.outputs}
    assert set(outs) >= {"x", "y"}
    assert set(comp.endpoints) >= {"apply", "jvp", "vjp", "jacobian"}


def test_simulate_is_the_default_form_without_cosimulation(sim):
    comp = sim(path=str(FMU))
    assert [f.name for f in comp.schema.inputs][:2] == ["t", "x0"]


def test_simulate_default_x0_is_the_start_values(sim):
    comp = sim()
    t = np.linspace(0.0, 1.0, 11)
    out = comp.apply({"t": t})
    np.testing.assert_array_equal(np.asarray(out["x"])[0], [2.0, 0.0])
    np.testing.assert_array_equal(np.asarray(out["y"]), np.asarray(out["x"])[:, 0])


def test_simulate_matches_fmpy_on_the_same_grid(sim):
    fmpy = pytest.importorskip("fmpy")
    comp = sim()
    stop, step = 10.0, 0.1
    t = np.linspace(0.0, stop, 101)
    out = comp.apply({"t": t})
    ref = fmpy.simulate_fmu(str(FMU), fmi_type="ModelExchange", stop_time=stop,
                            output_interval=step, relative_tolerance=1e-10,
                            output=["x0", "x1", "y"])
    idx = [int(np.argmin(np.abs(ref["time"] - tk))) for tk in t]
    np.testing.assert_allclose(ref["time"][idx], t, atol=1e-9)
    x = np.asarray(out["x"])
    np.testing.assert_allclose(x[:, 0], ref["x0"][idx], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(x[:, 1], ref["x1"][idx], rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(np.asarray(out["y"]), ref["y"][idx], rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("mode, mu", [("inproc", 0.5), ("inproc", 2.0), ("isolated", 2.0),
                                      ("worker", 2.0)])
def test_simulate_matches_scipy_solve_ivp(sim, mode, mu):
    integrate = pytest.importorskip("scipy.integrate")
    comp = sim(mode)
    t = np.linspace(0.0, 8.0, 41)
    x0 = np.array([1.5, -0.5])
    out = comp.apply({"t": t, "x0": x0, "mu": mu})
    ref = integrate.solve_ivp(vanderpol(mu), (t[0], t[-1]), x0, method="DOP853", t_eval=t,
                              rtol=1e-12, atol=1e-12)
    assert ref.success
    np.testing.assert_allclose(np.asarray(out["x"]), ref.y.T, rtol=1e-4, atol=1e-6)


def test_simulate_again_after_a_run_starts_from_its_own_x0(sim):
    comp = sim()
    t = np.linspace(0.0, 2.0, 5)
    first = np.asarray(comp.apply({"t": t, "x0": [1.0, 1.0]})["x"])
    comp.apply({"t": t, "x0": [3.0, 0.0], "mu": 3.0})
    again = np.asarray(comp.apply({"t": t, "x0": [1.0, 1.0]})["x"])
    np.testing.assert_array_equal(first, again)


# ---- derivatives -----------------------------------------------------------

T = np.linspace(0.0, 2.0, 11)
X0 = np.array([1.2, -0.3])
MU = 1.3
H = 1e-4


def central(comp, v_x0, v_mu):
    """(apply(p + h v) - apply(p - h v)) / 2h over x and y."""
    def at(s):
        out = comp.apply({"t": T, "x0": X0 + s * H * v_x0, "mu": MU + s * H * v_mu})
        return np.asarray(out["x"]), np.asarray(out["y"])
    (xp, yp), (xm, ym) = at(1.0), at(-1.0)
    return (xp - xm) / (2 * H), (yp - ym) / (2 * H)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_simulate_jvp_matches_central_differences(sim, mode):
    comp = sim(mode)
    v_x0, v_mu = np.array([0.7, -0.4]), 0.9
    got = comp.jvp({"t": T, "x0": X0, "mu": MU}, ["x0", "mu"], ["x", "y"],
                   {"x0": v_x0, "mu": v_mu})
    want_x, want_y = central(comp, v_x0, v_mu)
    np.testing.assert_allclose(np.asarray(got["x"]), want_x, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(np.asarray(got["y"]), want_y, rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_simulate_vjp_matches_central_differences(sim, mode):
    comp = sim(mode)
    rng = np.random.default_rng(3)
    w_x, w_y = rng.standard_normal((len(T), 2)), rng.standard_normal(len(T))
    got = comp.vjp({"t": T, "x0": X0, "mu": MU}, ["x0", "mu"], ["x", "y"],
                   {"x": w_x, "y": w_y})
    want = []
    for v_x0, v_mu in (([1.0, 0.0], 0.0), ([0.0, 1.0], 0.0), ([0.0, 0.0], 1.0)):
        dx, dy = central(comp, np.array(v_x0), v_mu)
        want.append(np.sum(w_x * dx) + np.sum(w_y * dy))
    np.testing.assert_allclose(np.asarray(got["x0"]), want[:2], rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(float(np.asarray(got["mu"])), want[2], rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_simulate_jacobian_matches_central_differences(sim, mode):
    comp = sim(mode)
    got = comp.jacobian({"t": T, "x0": X0, "mu": MU}, ["x0", "mu"], ["x", "y"])
    for j, (v_x0, v_mu) in enumerate((([1.0, 0.0], 0.0), ([0.0, 1.0], 0.0))):
        dx, dy = central(comp, np.array(v_x0), v_mu)
        np.testing.assert_allclose(np.asarray(got["x"]["x0"])[:, :, j], dx, rtol=1e-4, atol=1e-7)
        np.testing.assert_allclose(np.asarray(got["y"]["x0"])[:, j], dy, rtol=1e-4, atol=1e-7)
    dx, dy = central(comp, np.zeros(2), 1.0)
    np.testing.assert_allclose(np.asarray(got["x"]["mu"]), dx, rtol=1e-4, atol=1e-7)
    np.testing.assert_allclose(np.asarray(got["y"]["mu"]), dy, rtol=1e-4, atol=1e-7)


def test_simulate_vjp_of_one_output_over_mu_only(sim):
    comp = sim()
    w_y = np.zeros(len(T))
    w_y[-1] = 1.0
    got = comp.vjp({"t": T, "x0": X0, "mu": MU}, ["mu"], ["y"], {"y": w_y})
    _, dy = central(comp, np.zeros(2), 1.0)
    np.testing.assert_allclose(float(np.asarray(got["mu"])), dy[-1], rtol=1e-4, atol=1e-7)


def test_simulate_passes_check_gradients():
    assert TESSERA.exists(), f"{TESSERA} is not built"
    payload = json.dumps({"inputs": {"t": list(np.linspace(0.0, 1.5, 7)), "x0": [1.2, -0.3],
                                     "mu": 1.3}})
    # The step: apply's own error (an adaptive integrator's) over h must stay
    # below the check's tolerance.
    run = subprocess.run([str(TESSERA), "check-gradients", SIM, payload, "--config", "rtol=1e-12",
                          "--eps", "1e-4"], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    for endpoint in ("jvp", "vjp", "jacobian"):
        assert any(line.split()[:1] == [endpoint] and "not checked" not in line
                   for line in run.stdout.splitlines()), run.stdout


@pytest.fixture
def without_derivatives(tmp_path):
    """vanderpol unpacked into a folder whose description claims no
    directional or adjoint derivatives: the library then leaves them
    unloaded."""
    folder = tmp_path / "vanderpol_nodd.fmu"
    with zipfile.ZipFile(FMU) as z:
        z.extractall(folder)
    xml = folder / "modelDescription.xml"
    text = xml.read_text()
    for claim in ("providesDirectionalDerivatives", "providesAdjointDerivatives"):
        assert f'{claim}="true"' in text
        text = text.replace(f'{claim}="true"', f'{claim}="false"')
    xml.write_text(text)
    return f"{folder}#simulate"


@pytest.mark.parametrize("mode, workers", [("inproc", None), ("worker", 2)])
def test_simulate_without_directional_derivatives_serves_central_differences(
        sim, without_derivatives, mode, workers):
    exact = sim()
    fd = sim(mode, path=without_derivatives, workers=workers)
    inputs = {"t": T, "x0": X0, "mu": MU}
    # the same integration, but for the Newton iteration's Jacobian
    # (CVODES' difference quotients here)
    np.testing.assert_allclose(np.asarray(fd.apply(inputs)["x"]),
                               np.asarray(exact.apply(inputs)["x"]), rtol=1e-8)
    tangent = {"x0": np.array([0.7, -0.4]), "mu": 0.9}
    got = fd.jvp(inputs, ["x0", "mu"], ["x"], tangent)
    want = exact.jvp(inputs, ["x0", "mu"], ["x"], tangent)
    np.testing.assert_allclose(np.asarray(got["x"]), np.asarray(want["x"]), rtol=1e-3,
                               atol=1e-5)
    w = {"y": np.linspace(-1.0, 1.0, len(T))}
    got = fd.vjp(inputs, ["x0", "mu"], ["y"], w)
    want = exact.vjp(inputs, ["x0", "mu"], ["y"], w)
    for name in ("x0", "mu"):
        np.testing.assert_allclose(np.asarray(got[name]), np.asarray(want[name]), rtol=1e-3,
                                   atol=1e-5)


# ---- refusals ----------------------------------------------------------------

@pytest.mark.parametrize("t, says", [
    ([0.0, 1.0, 1.0, 2.0], "not strictly increasing at t[2]"),
    ([0.0, 2.0, 1.0], "not strictly increasing at t[2]"),
    ([0.0, float("nan"), 1.0], "t[1] is not finite"),
])
def test_simulate_refuses_a_bad_grid_naming_t(sim, t, says):
    comp = sim()
    with pytest.raises(tessera.TesseraError) as e:
        comp.apply({"t": np.array(t)})
    assert "input 't'" in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_simulate_refuses_a_non_finite_x0_naming_the_state(sim, bad):
    comp = sim()
    with pytest.raises(tessera.TesseraError) as e:
        comp.apply({"t": T, "x0": [1.0, bad]})
    assert "input 'x0'" in str(e.value) and "x0[1]" in str(e.value)


def test_simulate_refuses_a_non_finite_x0_in_jvp_too(sim):
    comp = sim()
    with pytest.raises(tessera.TesseraError) as e:
        comp.jvp({"t": T, "x0": [float("nan"), 0.0]}, ["x0"], ["x"], {"x0": [1.0, 0.0]})
    assert "input 'x0'" in str(e.value)


def test_simulate_stiff_case_over_the_step_budget_names_cvode_flag(sim, capfd):
    comp = sim(config={"rtol": "1e-8", "max_steps": "50"})
    with pytest.raises(tessera.TesseraError) as e:
        comp.apply({"t": np.array([0.0, 3000.0]), "mu": 1e4})
    msg = str(e.value)
    assert "CV_TOO_MUCH_WORK" in msg and "t[0]" in msg and "max_steps" in msg
    # CVODES' own message is in the error, not on the process's stderr
    assert "mxstep" in msg and "mxstep" not in capfd.readouterr().err
    # the instance is usable again afterwards
    out = comp.apply({"t": T})
    assert np.all(np.isfinite(np.asarray(out["x"])))


@pytest.fixture
def unknown_derivative(tmp_path):
    """vanderpol unpacked with der(x0) renumbered in its description: the
    binary's directional derivatives then return Error for that
    valueReference, which the integration's Jacobian asks for."""
    folder = tmp_path / "vanderpol_renumbered.fmu"
    with zipfile.ZipFile(FMU) as z:
        z.extractall(folder)
    xml = folder / "modelDescription.xml"
    text = xml.read_text()
    for old in ('name="der(x0)" valueReference="2"', '<ContinuousStateDerivative valueReference="2"',
                '<InitialUnknown valueReference="2"'):
        assert old in text
        text = text.replace(old, old.replace('"2"', '"70"'))
    xml.write_text(text)
    return f"{folder}#simulate"


def test_simulate_an_fmu_error_inside_the_integration_fails_with_its_message(
        sim, unknown_derivative):
    comp = sim(path=unknown_derivative)
    for _ in range(2):  # and again: the instance is reset, not left half-way
        with pytest.raises(tessera.TesseraError) as e:
            comp.apply({"t": T})
        msg = str(e.value)
        assert "fmi3GetDirectionalDerivative (the Jacobian) returned Error" in msg, msg
        assert "70" in msg and "at t = " in msg, msg


@pytest.mark.parametrize("key, value", [("rtol", "abc"), ("rtol", "-1"), ("max_steps", "0.5"),
                                        ("rtol", "2")])
def test_simulate_refuses_a_bad_config_naming_the_key(key, value):
    with pytest.raises(tessera.TesseraError) as e:
        tessera.load(SIM, "inproc", config={key: value})
    assert key in str(e.value)
