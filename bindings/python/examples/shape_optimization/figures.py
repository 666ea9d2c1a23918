# SPDX-License-Identifier: MIT
"""The study's pictures: the designs side by side, and compliance and
volume over the iterations."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from problem import Problem  # noqa: E402


def _panel(ax, rho: np.ndarray, title: str, p: Problem, bars: np.ndarray | None = None) -> None:
    ax.imshow(rho, origin="lower", cmap="Greys", vmin=0, vmax=1,
              extent=(0, p.nx, 0, p.ny))
    if bars is not None:
        for (a, b) in bars:
            ax.plot([a[0], b[0]], [a[1], b[1]], color="tab:red", lw=1, alpha=0.7)
    ax.annotate("", xy=(p.nx, p.ny / 2 - 0.12 * p.ny), xytext=(p.nx, p.ny / 2),
                arrowprops=dict(arrowstyle="->", color="tab:blue", lw=1.5))
    ax.plot([0, 0], [0, p.ny], color="tab:green", lw=4)
    ax.set_xlim(-0.5, p.nx + 0.5)
    ax.set_ylim(-0.5, p.ny + 0.5)
    ax.set_title(title, fontsize=9)
    ax.set_xticks([])
    ax.set_yticks([])


def designs(path: Path, p: Problem, bars0: np.ndarray, run: dict, base) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(12, 2.9))
    h = run["history"]
    _panel(axes[0], run["rho_initial"], f"initial bars: compliance {h.compliance[0]:.1f}, "
           f"volume {h.volume[0]:.2f}", p, bars0)
    _panel(axes[1], run["rho"], f"optimised bars ({len(h.compliance)} Adam steps): "
           f"{run['final_compliance']:.1f}, {run['final_volume']:.2f}", p, h.bars)
    _panel(axes[2], base.rho, f"free-form SIMP ({len(base.compliance)} OC steps): "
           f"{base.compliance[-1]:.1f}, {base.volume[-1]:.2f}", p)
    fig.suptitle(f"Cantilever, {p.nx} x {p.ny} elements, clamped left (green), unit load "
                 f"right (blue), volume <= {p.volume_fraction}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def history(path: Path, p: Problem, run: dict, base) -> None:
    fig, (ax_c, ax_v) = plt.subplots(1, 2, figsize=(11, 3.4))
    h = run["history"]
    ax_c.semilogy(np.arange(1, len(h.compliance) + 1), h.compliance,
                  label=f"parametric bars ({run['mode']})")
    ax_c.semilogy(np.arange(1, len(base.compliance) + 1), base.compliance,
                  label="free-form SIMP")
    ax_c.set_xlabel("iteration")
    ax_c.set_ylabel("compliance")
    ax_c.legend(fontsize=8)
    ax_c.grid(alpha=0.3, which="both")
    ax_v.plot(np.arange(1, len(h.volume) + 1), h.volume, label="parametric bars")
    ax_v.plot(np.arange(1, len(base.volume) + 1), base.volume, label="free-form SIMP")
    ax_v.axhline(p.volume_fraction, color="k", ls="--", lw=1, label="constraint")
    ax_v.set_xlabel("iteration")
    ax_v.set_ylabel("volume fraction")
    ax_v.legend(fontsize=8)
    ax_v.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
