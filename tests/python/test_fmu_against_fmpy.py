# SPDX-License-Identifier: MIT
"""The project's FMUs through tessera against FMPy, the reference importer,
and against closed forms:

- the spring (Co-Simulation) through tessera.load in every mode against
  fmpy.simulate_fmu with the same parameters, grid and a held input force;
- Van der Pol's right-hand side ("#rhs", Model Exchange) against its closed
  form, and its jvp/vjp (the FMU's directional and adjoint derivatives)
  through jax.jit of jax.jvp, jax.grad and jax.jacrev, and through torch
  autograd, against the exact Jacobian;
- jax.jit(jax.value_and_grad) of a loss over the spring's trajectory with
  respect to k and c (the library's central differences of whole
  simulations) against a central difference of the same loss from FMPy.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tessera
import tessera.jax
from conftest import MODES
from fmu_util import SPRING, fmpy_simulate, fmu_path, grid, held_signal, vdp_jacobian, vdp_rhs


@pytest.fixture
def opened():
    """tessera.load, each component closed at the end of the test, last first."""
    comps: list[tessera.Component] = []

    def _open(path, mode="inproc", **kwargs):
        comp = tessera.load(str(path), mode, **kwargs)
        comps.append(comp)
        return comp

    yield _open
    for comp in reversed(comps):
        comp.close()


# ---- the spring against FMPy ---------------------------------------------------------


@pytest.mark.parametrize("mode", MODES)
def test_spring_trajectory_is_fmpys_in_every_mode(opened, mode):
    spring = opened(fmu_path("spring"), mode)
    t = grid(0.0, 5.0, 0.1)
    params = {**SPRING, "k": 3.0, "c": 0.3, "m": 1.5, "x0": 0.8, "v0": -0.5}
    ours = spring.apply({"t": t, **params})
    ref = fmpy_simulate(fmu_path("spring"), t, params, ["x", "v"])
    np.testing.assert_allclose(ref["time"], t, rtol=0, atol=1e-12)
    for name in ("x", "v"):
        assert np.shape(ours[name]) == t.shape
        np.testing.assert_allclose(ours[name], ref[name], rtol=0, atol=1e-9, err_msg=name)
    # a second simulation on the same instance starts again from the reset FMU
    again = spring.apply({"t": t, **params})
    np.testing.assert_array_equal(again["x"], ours["x"])


@pytest.mark.parametrize("mode", MODES)
def test_a_held_piecewise_constant_force_moves_the_spring_as_in_fmpy(opened, mode):
    spring = opened(fmu_path("spring"), mode)
    t = grid(0.0, 4.0, 0.05)
    force = np.random.default_rng(3).uniform(-2.0, 2.0, size=t.shape)
    params = dict(SPRING)
    ours = spring.apply({"t": t, "F": force, **params})
    ref = fmpy_simulate(fmu_path("spring"), t, params, ["x", "v"],
                        signal=held_signal("F", t, force))
    for name in ("x", "v"):
        np.testing.assert_allclose(ours[name], ref[name], rtol=0, atol=1e-9, err_msg=name)
    # the force did move it: without it the trajectory is another one
    free = spring.apply({"t": t, **params})
    assert np.max(np.abs(free["x"] - ours["x"])) > 1e-3


def test_fmpys_held_table_sets_one_force_per_step(tmp_path):
    """The convention held_signal relies on, checked on FMPy itself: its
    simulate_fmu with that table is a loop that sets F[k], reads x and
    takes one fmi3DoStep, written here with FMPy's low-level API."""
    import fmpy
    from fmpy.fmi3 import FMU3Slave
    path = fmu_path("spring")
    t = grid(0.0, 1.0, 0.05)
    force = np.random.default_rng(5).uniform(-2.0, 2.0, size=t.shape)
    ref = fmpy_simulate(path, t, SPRING, ["x"], signal=held_signal("F", t, force))
    md = fmpy.read_model_description(str(path))
    vr = {v.name: v.valueReference for v in md.modelVariables}
    fmpy.extract(str(path), str(tmp_path))
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=str(tmp_path), modelIdentifier="spring",
                    instanceName="spring")
    fmu.instantiate()
    fmu.setFloat64([vr[k] for k in SPRING], list(SPRING.values()))
    fmu.enterInitializationMode(startTime=t[0], stopTime=t[-1])
    fmu.exitInitializationMode()
    x = []
    for k in range(len(t)):
        fmu.setFloat64([vr["F"]], [force[k]])
        x.append(fmu.getFloat64([vr["x"]])[0])
        if k + 1 < len(t):
            fmu.doStep(t[k], t[k + 1] - t[k])
    fmu.terminate()
    fmu.freeInstance()
    np.testing.assert_array_equal(ref["x"], x)


def test_a_constant_force_and_a_force_left_out_agree_with_fmpy(opened):
    spring = opened(fmu_path("spring"))
    t = grid(0.0, 2.0, 0.1)
    given = spring.apply({"t": t, **SPRING, "F": np.full(t.shape, 1.5)})
    ref = fmpy_simulate(fmu_path("spring"), t, SPRING, ["x", "v"],
                        signal=held_signal("F", t, np.full(t.shape, 1.5)))
    np.testing.assert_allclose(given["x"], ref["x"], rtol=0, atol=1e-9)
    # F left out keeps its start value in both importers
    plain = spring.apply({"t": t, **SPRING})
    np.testing.assert_allclose(plain["x"], fmpy_simulate(fmu_path("spring"), t, SPRING,
                                                         ["x"])["x"], rtol=0, atol=1e-9)
    assert np.max(np.abs(plain["x"] - given["x"])) > 1e-3


# ---- Van der Pol's right-hand side ----------------------------------------------------

VDP_POINTS = [(np.array([0.7, -1.3]), 1.5), (np.array([2.0, 0.0]), 1.0),
              (np.array([-0.4, 2.2]), 3.25)]


@pytest.mark.parametrize("mode", MODES)
def test_vanderpol_rhs_is_the_closed_form_in_every_mode(opened, mode):
    vdp = opened(f"{fmu_path('vanderpol')}#rhs", mode)
    for x, mu in VDP_POINTS:
        out = vdp.apply({"t": 0.5, "x": x, "mu": mu})
        np.testing.assert_allclose(out["dx"], vdp_rhs(x, mu), rtol=1e-14, atol=1e-14)
        np.testing.assert_allclose(out["y"], [x[0]], rtol=0, atol=1e-15)


def test_vanderpol_defaults_are_the_descriptions_start_values(opened):
    vdp = opened(f"{fmu_path('vanderpol')}#rhs")
    out = vdp.apply({})
    np.testing.assert_allclose(out["dx"], vdp_rhs(np.array([2.0, 0.0]), 1.0), atol=1e-15)


def _vdp_dx(vdp):
    def dx(x, mu):
        return tessera.jax.apply(vdp, {"t": 0.0, "x": x, "mu": mu})["dx"]
    return dx


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_jitted_jax_jvp_is_the_exact_jacobian_times_the_tangent(opened, mode):
    vdp = opened(f"{fmu_path('vanderpol')}#rhs", mode)
    f = _vdp_dx(vdp)
    jvp = jax.jit(lambda x, mu, tx, tmu: jax.jvp(f, (x, mu), (tx, tmu)))
    tx, tmu = jnp.array([0.3, -0.8]), jnp.array(0.5)
    for x, mu in VDP_POINTS:
        value, tangent = jvp(jnp.asarray(x), jnp.asarray(mu), tx, tmu)
        np.testing.assert_allclose(value, vdp_rhs(x, mu), rtol=1e-14, atol=1e-14)
        want = vdp_jacobian(x, mu) @ np.array([0.3, -0.8, 0.5])
        np.testing.assert_allclose(tangent, want, rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_jitted_jax_grad_and_jacrev_are_the_exact_jacobian(opened, mode):
    vdp = opened(f"{fmu_path('vanderpol')}#rhs", mode)
    f = _vdp_dx(vdp)
    w = jnp.array([0.9, 0.4])
    grad = jax.jit(jax.grad(lambda x, mu: jnp.dot(w, f(x, mu)), argnums=(0, 1)))
    jac = jax.jit(jax.jacrev(f, argnums=(0, 1)))
    for x, mu in VDP_POINTS:
        j = vdp_jacobian(x, mu)
        gx, gmu = grad(jnp.asarray(x), jnp.asarray(mu))
        np.testing.assert_allclose(gx, np.asarray(w) @ j[:, :2], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(gmu, np.asarray(w) @ j[:, 2], rtol=1e-12, atol=1e-13)
        jx, jmu = jac(jnp.asarray(x), jnp.asarray(mu))
        np.testing.assert_allclose(jx, j[:, :2], rtol=1e-12, atol=1e-13)
        np.testing.assert_allclose(jmu, j[:, 2], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_torch_backward_and_forward_ad_are_the_exact_jacobian(opened, mode):
    torch = pytest.importorskip("torch")
    import tessera.torch
    vdp = opened(f"{fmu_path('vanderpol')}#rhs", mode)
    w = torch.tensor([0.9, 0.4], dtype=torch.float64)
    for x, mu in VDP_POINTS:
        j = vdp_jacobian(x, mu)
        xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
        mut = torch.tensor(mu, dtype=torch.float64, requires_grad=True)
        dx = tessera.torch.apply(vdp, {"t": 0.0, "x": xt, "mu": mut})["dx"]
        np.testing.assert_allclose(dx.detach().numpy(), vdp_rhs(x, mu), rtol=1e-14, atol=1e-14)
        (w @ dx).backward()
        np.testing.assert_allclose(xt.grad.numpy(), w.numpy() @ j[:, :2], rtol=1e-12,
                                   atol=1e-13)
        np.testing.assert_allclose(mut.grad.numpy(), w.numpy() @ j[:, 2], rtol=1e-12,
                                   atol=1e-13)

        def f(x_, mu_):
            return tessera.torch.apply(vdp, {"t": 0.0, "x": x_, "mu": mu_})["dx"]

        tx = torch.tensor([0.3, -0.8], dtype=torch.float64)
        tmu = torch.tensor(0.5, dtype=torch.float64)
        _, tangent = torch.func.jvp(f, (torch.tensor(x), torch.tensor(mu)), (tx, tmu))
        np.testing.assert_allclose(tangent.numpy(), j @ np.array([0.3, -0.8, 0.5]),
                                   rtol=1e-12, atol=1e-13)


# ---- a loss over the spring's trajectory: grad by finite differences ------------------

LOSS_T = grid(0.0, 3.0, 0.1)
# a target trajectory: the spring's own with other parameters, from FMPy
_TARGET_PARAMS = {**SPRING, "k": 5.0, "c": 0.7}


def _fmpy_loss(k: float, c: float, target: np.ndarray) -> float:
    r = fmpy_simulate(fmu_path("spring"), LOSS_T, {**SPRING, "k": k, "c": c}, ["x"])
    return float(np.sum((r["x"] - target) ** 2))


@pytest.mark.parametrize("mode", ["inproc", "worker"])
def test_jitted_value_and_grad_of_a_trajectory_loss_matches_fmpy(opened, mode):
    spring = opened(fmu_path("spring"), mode)
    target = fmpy_simulate(fmu_path("spring"), LOSS_T, _TARGET_PARAMS, ["x"])["x"]
    fixed = {"t": jnp.asarray(LOSS_T), "m": SPRING["m"], "x0": SPRING["x0"],
             "v0": SPRING["v0"]}

    def loss(k, c):
        x = tessera.jax.apply(spring, {**fixed, "k": k, "c": c})["x"]
        return jnp.sum((x - target) ** 2)

    value, (gk, gc) = jax.jit(jax.value_and_grad(loss, argnums=(0, 1)))(
        jnp.asarray(SPRING["k"]), jnp.asarray(SPRING["c"]))
    k, c = SPRING["k"], SPRING["c"]
    np.testing.assert_allclose(value, _fmpy_loss(k, c, target), rtol=1e-12)
    h = 1e-5
    want_k = (_fmpy_loss(k + h, c, target) - _fmpy_loss(k - h, c, target)) / (2 * h)
    want_c = (_fmpy_loss(k, c + h, target) - _fmpy_loss(k, c - h, target)) / (2 * h)
    assert abs(want_k) > 1e-2 and abs(want_c) > 1e-2, "the loss depends on both"
    # both are central differences of the same deterministic simulations
    np.testing.assert_allclose(gk, want_k, rtol=1e-7)
    np.testing.assert_allclose(gc, want_c, rtol=1e-7)
