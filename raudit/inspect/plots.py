"""The study's figures 2-4 for one inspected run: records seen per teacher, teacher
losses (own rows vs the others'), and the accountant's moments per iteration (the
run's, and the probe's next to the correct accountant's recomputation).

Each function writes one PNG and returns its file name, or "" when the run holds
nothing to draw (a generator without events).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from raudit.inspect.accountant import correct_table, recompute
from raudit.inspect.context import Context
from raudit.plots import pyplot, save

__all__ = ["FIGURES", "plot_all", "plot_file"]

FIGURES = ("records-seen", "teacher-losses", "moments")


def plot_file(impl: str, figure: str) -> str:
    """``<impl>-<figure>.png`` with a plugin's ``module:Class`` made file-safe."""
    return f"{re.sub(r'[^A-Za-z0-9_.-]+', '.', impl)}-{figure}.png"


def _records(ctx: Context, path: Path) -> bool:
    tr = ctx.trace
    ids = sorted(tr.teachers_seen) if tr is not None else []
    if not ids:
        return False
    plt = pyplot()
    grid = np.zeros((len(ids), ctx.n_rows), dtype=bool)
    for i, t in enumerate(ids):
        rows = tr.teachers_seen[t]
        grid[i, rows[rows < ctx.n_rows]] = True
    fig, ax = plt.subplots(figsize=(8, 0.5 + 0.45 * len(ids)))
    ax.imshow(grid, aspect="auto", interpolation="nearest", cmap="Blues")
    ax.set_yticks(range(len(ids)), [("critic" if t < 0 else f"teacher {t}") +
                                    f" ({int(grid[i].sum())})" for i, t in enumerate(ids)])
    ax.set_xlabel("training row id")
    ax.set_title(f"{ctx.impl}: records seen per teacher (N = {ctx.n_rows})")
    save(fig, path, dpi=100)
    return True


def _losses(ctx: Context, path: Path) -> bool:
    tr = ctx.trace
    if tr is None or not tr.losses:
        return False
    plt = pyplot()
    its = np.array(sorted(tr.losses))
    mats = np.stack([tr.losses[i] for i in its])  # (T, j, i)
    k = mats.shape[1]
    own = np.stack([np.diag(m) for m in mats])  # (T, k)
    others = np.stack([(m.sum(0) - np.diag(m)) / max(k - 1, 1) for m in mats])
    fig, axes = plt.subplots(1, k, figsize=(2.6 * k, 2.6), sharey=True, squeeze=False)
    for i, ax in enumerate(axes[0]):
        ax.plot(its, own[:, i], label="own first rows")
        ax.plot(its, others[:, i], label="the others on them")
        ax.set_title(f"teacher {i}")
        ax.set_xlabel("iteration")
    axes[0][0].set_ylabel("cross entropy (real)")
    axes[0][0].legend(fontsize=7)
    fig.suptitle(f"{ctx.impl}: teacher losses")
    save(fig, path, dpi=100)
    return True


def _moments(ctx: Context, path: Path) -> bool:
    tr = ctx.trace
    if tr is None or not tr.accountant:
        return False
    plt = pyplot()
    panels = [("run", tr, ctx.lam)]
    if ctx.accountant_probe is not None and ctx.accountant_probe.accountant:
        panels.append(("probe", ctx.accountant_probe, ctx.probe_lam))
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 3.6), squeeze=False)
    for ax, (label, t, lam) in zip(axes[0], panels):
        mom = t.moments()
        its = np.arange(mom.shape[0])
        if mom.ndim < 2 or mom.shape[1] == 0:  # an RDP/PLD accountant reports eps only
            _, eps = t.eps_series()
            ax.plot(np.arange(eps.size), eps, color="tab:blue", lw=2, label="eps_hat")
            ax.axhline(ctx.epsilon, color="red", ls="--", label=f"eps = {ctx.epsilon:g}")
            ax.set_xlabel("accountant step")
            ax.set_title(f"{label}: eps_hat (no moments reported)")
            ax.legend(fontsize=7)
            continue
        ax.plot(its, mom, color="tab:blue", alpha=0.25, lw=0.8)
        ax.plot(its, mom[:, 0], color="tab:blue", lw=2, label="generator (orders 1..L)")
        k = t.votes[0][7] if t.votes else ctx.k
        if k and lam and not any(v[5] == "gaussian" for v in t.votes):
            _, ref = recompute(t, correct_table(k, lam, mom.shape[1]), k, ctx.delta)
            ax.plot(its, ref[:, 0], "k--", lw=1.5, label="correct, order 1")
            ax.plot(its, ref[:, -1], "k:", lw=1.5, label=f"correct, order {mom.shape[1]}")
        ax.set_yscale("log")
        ax.set_xlabel("iteration")
        ax.set_title(f"{label}: lambda {lam:g}")
        ax.legend(fontsize=7)
    if axes[0][0].get_ylabel() == "":
        axes[0][0].set_ylabel("moment alpha(l)" if tr.moments().shape[-1] else "eps_hat")
    fig.suptitle(f"{ctx.impl}: " + ("moments accountant" if tr.moments().shape[-1] else "accountant"))
    save(fig, path, dpi=100)
    return True


_DRAW = {"records-seen": _records, "teacher-losses": _losses, "moments": _moments}


def plot_all(ctx: Context, folder: Path) -> dict[str, str]:
    """Write every figure the run can fill; figure -> file name in ``folder``."""
    out = {}
    for fig in FIGURES:
        name = plot_file(ctx.impl, fig)
        if _DRAW[fig](ctx, Path(folder) / name):
            out[fig] = name
    return out
