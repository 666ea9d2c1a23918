#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Fitting an FMU's parameters, then sampling their posterior: the damped
spring (spring.fmu, FMI 3.0 Co-Simulation, m x'' + c x' + k x = F) as a
Tessera component inside JAX.

    data   x(t) of the spring with known k, c (m = 1, x0 = 1, v0 = 0) on
           t = 0, 0.1, ..., 10, plus Gaussian noise (sigma 0.02, fixed seed)
    fit    Adam on (log k, log c) under jax.jit(jax.value_and_grad(loss)),
           loss the negative log-likelihood; every value is one simulation
           of the FMU, every gradient the library's central differences of
           whole simulations (2 per parameter: 5 simulations per value
           and gradient), the columns
           split over the worker pool (workers=2: two at once)
    sample MALA (the Metropolis-adjusted Langevin algorithm) on (k, c),
           flat prior on k, c > 0, preconditioned with the Gauss-Newton
           covariance at the fit (jax.jacfwd through the component), its
           step size tuned during a warm-up towards acceptance 0.5 and
           then held

    python3 fit.py                  # 60 Adam steps, 150 warm-up + 400 MALA steps
    python3 fit.py --quick          # the CI form: 40 Adam steps, 60 + 120 MALA steps
    python3 fit.py --mode inproc    # the FMU in this process instead

Writes to --out (default build/fmu_fit): fit.png (data and fitted
trajectory, loss history, posterior samples with the true value) and
summary.json. Exit status 1 if the fit or the posterior mean misses the
true (k, c) by more than FIT_TOLERANCE, or the chain's acceptance is
outside ACCEPTANCE_RANGE."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

import tessera  # noqa: E402
import tessera.jax  # noqa: E402

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[3]
BUILD = Path(os.environ.get("TESSERA_BUILD_DIR") or ROOT / "build")
SPRING = BUILD / "fmu" / "spring.fmu"

TRUE = {"k": 4.0, "c": 0.4}
FIXED = {"m": 1.0, "x0": 1.0, "v0": 0.0}
START = (3.0, 1.0)               # the optimiser's starting (k, c)
SIGMA = 0.02                     # the data's noise, known to the likelihood
GRID = np.linspace(0.0, 10.0, 101)
SEED = 0
TARGET_ACCEPTANCE = 0.5
# What the run must achieve (relative to the true values): the fit and the
# posterior mean within 3 % for k, 10 % for c (the posterior's own spread
# is about 0.2 % and 1 % of them), and an acceptance rate in this range.
FIT_TOLERANCE = {"k": 0.03, "c": 0.10}
ACCEPTANCE_RANGE = (0.25, 0.85)


def log(text: str) -> None:
    print(text, flush=True)


def make_model(spring: tessera.Component):
    """x over GRID as a JAX function of theta = (k, c)."""
    t = jnp.asarray(GRID)

    def trajectory(theta):
        inputs = {"t": t, "k": theta[0], "c": theta[1], **FIXED}
        return tessera.jax.apply(spring, inputs)["x"]

    return trajectory


def synthetic_data(trajectory) -> np.ndarray:
    clean = np.asarray(trajectory(jnp.array([TRUE["k"], TRUE["c"]])))
    rng = np.random.default_rng(SEED)
    return clean + SIGMA * rng.standard_normal(clean.shape)


def make_loss(trajectory, data: np.ndarray):
    """Negative log-likelihood (up to a constant) of theta = (k, c)."""
    data = jnp.asarray(data)

    def loss(theta):
        r = trajectory(theta) - data
        return 0.5 * jnp.sum(r * r) / SIGMA**2

    return loss


def adam(value_and_grad, steps: int, lr0: float = 0.2, lr_end: float = 0.002):
    """Adam on u = log(theta), the rate decaying geometrically from lr0 to
    lr_end: (theta, the loss at every step, seconds per step)."""
    u = jnp.log(jnp.array(START))
    m = jnp.zeros(2)
    v = jnp.zeros(2)
    history, seconds = [], []
    for i in range(steps):
        lr = lr0 * (lr_end / lr0) ** (i / max(steps - 1, 1))
        t0 = time.perf_counter()
        theta = jnp.exp(u)
        value, g = value_and_grad(theta)
        gu = np.asarray(g) * np.asarray(theta)     # d loss / d log theta
        seconds.append(time.perf_counter() - t0)
        history.append(float(value))
        m = 0.9 * m + 0.1 * gu
        v = 0.999 * v + 0.001 * gu * gu
        u = u - lr * (m / (1 - 0.9 ** (i + 1))) / (jnp.sqrt(v / (1 - 0.999 ** (i + 1))) + 1e-12)
        if i % 10 == 0 or i == steps - 1:
            k, c = np.exp(np.asarray(u))
            log(f"  step {i:3d}  loss {value:12.4f}  k {k:.5f}  c {c:.5f}")
    theta = jnp.exp(u)
    history.append(float(value_and_grad(theta)[0]))
    return np.asarray(theta), history, seconds


def mala(value_and_grad, theta0: np.ndarray, chol: np.ndarray, warmup: int, steps: int,
         seed: int):
    """Preconditioned MALA: proposals
        theta' = theta + eps^2/2 M grad + eps L z,   M = L L^T,  z ~ N(0, I),
    accepted by the Metropolis-Hastings ratio with the proposal's density.
    eps adapts during warm-up (Robbins-Monro on log eps towards
    TARGET_ACCEPTANCE), then is held. The kept samples, the acceptance rate
    after warm-up, eps, seconds per step."""
    rng = np.random.default_rng(seed + 1)
    cov = chol @ chol.T
    inv_chol = np.linalg.inv(chol)

    def logp_grad(theta):
        if np.any(theta <= 0):
            return -np.inf, np.zeros(2)
        value, g = value_and_grad(jnp.asarray(theta))
        return -float(value), -np.asarray(g)

    def log_q(to, frm, grad_frm, eps):
        r = inv_chol @ (to - frm - 0.5 * eps**2 * cov @ grad_frm)
        return -0.5 * float(r @ r) / eps**2

    theta = np.array(theta0, dtype=float)
    lp, g = logp_grad(theta)
    log_eps = np.log(1.0)
    samples, accepted, seconds = [], 0, []
    for i in range(warmup + steps):
        eps = float(np.exp(log_eps))
        t0 = time.perf_counter()
        prop = theta + 0.5 * eps**2 * cov @ g + eps * chol @ rng.standard_normal(2)
        lp_new, g_new = logp_grad(prop)
        seconds.append(time.perf_counter() - t0)
        log_alpha = (lp_new - lp + log_q(theta, prop, g_new, eps) - log_q(prop, theta, g, eps)
                     if np.isfinite(lp_new) else -np.inf)
        ok = np.log(rng.uniform()) < log_alpha
        if ok:
            theta, lp, g = prop, lp_new, g_new
        if i < warmup:
            alpha = float(np.exp(min(0.0, log_alpha)))
            log_eps += (alpha - TARGET_ACCEPTANCE) / (i + 1) ** 0.6
        else:
            samples.append(theta.copy())
            accepted += int(ok)
    return np.array(samples), accepted / max(steps, 1), float(np.exp(log_eps)), seconds


def gauss_newton_chol(trajectory, theta: np.ndarray) -> np.ndarray:
    """Cholesky factor of (J^T J / sigma^2)^-1, J = dx/d(k, c) at theta."""
    jac = np.asarray(jax.jit(jax.jacfwd(trajectory))(jnp.asarray(theta)))
    cov = np.linalg.inv(jac.T @ jac / SIGMA**2)
    return np.linalg.cholesky(cov)


def figure(path: Path, data, fitted, history, samples, fit, mean) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(1, 3, figsize=(15, 4.2))
    ax[0].plot(GRID, data, ".", ms=4, color="0.45", label=f"data (sigma {SIGMA})")
    ax[0].plot(GRID, fitted, "-", color="C0",
               label=f"fit: k {fit[0]:.3f}, c {fit[1]:.3f}")
    ax[0].set(xlabel="t", ylabel="x", title="spring.fmu: data and fitted trajectory")
    ax[0].legend(loc="upper right")
    ax[1].semilogy(np.arange(len(history)), history, "-o", ms=3, color="C1")
    ax[1].axhline(0.5 * len(GRID), color="0.6", ls=":", label="n / 2 (noise level)")
    ax[1].set(xlabel="Adam step", ylabel="negative log-likelihood", title="loss")
    ax[1].legend()
    ax[2].plot(samples[:, 0], samples[:, 1], ".", ms=3, alpha=0.5, color="C2",
               label=f"MALA samples ({len(samples)})")
    ax[2].plot([TRUE["k"]], [TRUE["c"]], "r*", ms=14, label="true (k, c)")
    ax[2].plot([mean[0]], [mean[1]], "kx", ms=10, mew=2, label="posterior mean")
    ax[2].set(xlabel="k", ylabel="c", title="posterior of (k, c)")
    ax[2].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true",
                    help="the CI form: 40 Adam steps, 60 warm-up and 120 MALA steps")
    ap.add_argument("--fmu", type=Path, default=SPRING,
                    help="the spring FMU (default: $TESSERA_BUILD_DIR or build/, fmu/spring.fmu)")
    ap.add_argument("--mode", default="worker", choices=("inproc", "isolated", "worker"))
    ap.add_argument("--workers", type=int, default=2,
                    help="worker mode: pool size; the gradient's simulations split across it")
    ap.add_argument("--steps", type=int, help="Adam steps (default 60; 40 quick)")
    ap.add_argument("--warmup", type=int, help="MALA warm-up steps (default 150; 60 quick)")
    ap.add_argument("--samples", type=int, help="MALA steps kept (default 400; 120 quick)")
    ap.add_argument("--out", type=Path, default=BUILD / "fmu_fit")
    args = ap.parse_args()
    steps = args.steps or (40 if args.quick else 60)
    warmup = args.warmup or (60 if args.quick else 150)
    n_samples = args.samples or (120 if args.quick else 400)
    if not args.fmu.exists():
        print(f"fit.py: {args.fmu} does not exist (build the project first)", file=sys.stderr)
        return 1
    args.out.mkdir(parents=True, exist_ok=True)
    options = {"workers": args.workers} if args.mode == "worker" else {}

    wall0 = time.perf_counter()
    with tessera.load(args.fmu, args.mode, **options) as spring:
        where = f"{args.mode}" + (f", workers={args.workers}" if options else "")
        log(f"spring.fmu as a component ({where}): inputs {spring.schema.input_names}")
        trajectory = make_model(spring)
        data = synthetic_data(trajectory)
        loss = make_loss(trajectory, data)
        value_and_grad = jax.jit(jax.value_and_grad(loss))
        log(f"\n== fit: Adam, {steps} steps from k {START[0]}, c {START[1]} "
            f"(true k {TRUE['k']}, c {TRUE['c']})")
        fit, history, fit_seconds = adam(value_and_grad, steps)
        fitted = np.asarray(trajectory(jnp.asarray(fit)))
        chol = gauss_newton_chol(trajectory, fit)
        log(f"\n== posterior: MALA, {warmup} warm-up + {n_samples} steps, preconditioned "
            f"(Gauss-Newton std k {chol[0, 0]:.2e}, c {np.hypot(*chol[1]):.2e})")
        samples, acceptance, eps, mala_seconds = mala(value_and_grad, fit, chol, warmup,
                                                     n_samples, SEED)
    wall = time.perf_counter() - wall0

    mean, std = samples.mean(axis=0), samples.std(axis=0, ddof=1)
    truth = np.array([TRUE["k"], TRUE["c"]])
    failures = []
    for j, name in enumerate(("k", "c")):
        tol = FIT_TOLERANCE[name] * truth[j]
        if not abs(fit[j] - truth[j]) <= tol:
            failures.append(f"fit {name} = {fit[j]:.5f}, more than {tol:.4g} from {truth[j]}")
        if not abs(mean[j] - truth[j]) <= tol:
            failures.append(f"posterior mean {name} = {mean[j]:.5f}, more than {tol:.4g} "
                            f"from {truth[j]}")
    if not ACCEPTANCE_RANGE[0] <= acceptance <= ACCEPTANCE_RANGE[1]:
        failures.append(f"acceptance {acceptance:.2f} outside {ACCEPTANCE_RANGE}")

    figure(args.out / "fit.png", data, fitted, history, samples, fit, mean)
    per_step_ms = 1e3 * statistics.median(fit_seconds[1:] or fit_seconds)
    per_mala_ms = 1e3 * statistics.median(mala_seconds)
    summary = {
        "mode": args.mode, "workers": args.workers if options else None,
        "true": TRUE, "fixed": FIXED, "sigma": SIGMA, "seed": SEED, "points": len(GRID),
        "fit": {"k": float(fit[0]), "c": float(fit[1])},
        "loss_start": history[0], "loss_end": history[-1], "adam_steps": steps,
        "posterior_mean": {"k": float(mean[0]), "c": float(mean[1])},
        "posterior_std": {"k": float(std[0]), "c": float(std[1])},
        "warmup": warmup, "samples": n_samples, "acceptance": acceptance, "step_size": eps,
        "ms_per_value_and_grad": per_step_ms, "ms_per_mala_step": per_mala_ms,
        "wall_s": wall, "fit_tolerance": FIT_TOLERANCE, "failures": failures,
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1))
    log(f"\nfit:       k {fit[0]:.5f}, c {fit[1]:.5f}   (true {TRUE['k']}, {TRUE['c']}); "
        f"loss {history[0]:.1f} -> {history[-1]:.2f} (n/2 = {len(GRID) / 2:.1f})")
    log(f"posterior: k {mean[0]:.5f} ± {std[0]:.5f}, c {mean[1]:.5f} ± {std[1]:.5f} "
        f"(mean ± std of {n_samples} samples)")
    log(f"MALA:      acceptance {acceptance:.2f} at step size {eps:.3f} (target "
        f"{TARGET_ACCEPTANCE})")
    log(f"time:      {wall:.1f} s in all; {per_step_ms:.2f} ms per jitted value_and_grad "
        f"(5 simulations: the value, then 2 per parameter), "
        f"{per_mala_ms:.2f} ms per MALA step ({where})")
    log(f"wrote {args.out}/fit.png, summary.json")
    for f in failures:
        print(f"FAILED: {f}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
