"""The PNG of utility vs eps for a sweep (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raudit.plots import eps_axis, pyplot, save
from raudit.utility import controls


def utility_vs_eps(result: dict[str, Any], path: Path, metric: str = "auroc") -> Path | None:
    """Best-of average ``metric`` (Settings B solid, C dashed) vs eps, one line per other
    sweep axis combination, Setting A as a horizontal line. None if fewer than 2 eps."""
    pts = [p for p in result["points"] if p.get("status") == "ok" and p.get(f"{metric}_B") is not None]
    if len({p["epsilon"] for p in pts}) < 2:
        return None
    plt = pyplot()
    groups: dict[str, list] = {}
    for p in pts:
        rest = " ".join(p["label"].split(" ")[1:]) or result.get("impl", "")
        groups.setdefault(rest, []).append(p)
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for name, ps in groups.items():
        ps = sorted(ps, key=lambda p: p["epsilon"])
        x = [p["epsilon"] for p in ps]
        line, = ax.plot(x, [p[f"{metric}_B"] for p in ps], marker="o", label=f"{name} B")
        c = [(p["epsilon"], p[f"{metric}_C"]) for p in ps if p.get(f"{metric}_C") is not None]
        if c:  # C is undefined where the synthetic test split had one class
            ax.plot(*zip(*c), marker="x", ls="--", color=line.get_color(), label=f"{name} C")
    real = (result.get("real") or {}).get(metric)
    if real is not None:
        ax.axhline(real, color="k", lw=1, ls=":", label="A (real)")
    if metric == "auroc":
        ax.axhline(0.5, color="grey", lw=0.8, label="random")
    eps_axis(ax)
    ax.set_ylabel(f"{metric.upper()}: best of fits x samples, mean over classifiers")
    ax.set_title(f"{result.get('impl')} on {result.get('dataset')}")
    ax.legend(fontsize=7)
    return save(fig, path, dpi=120)


def learning_vs_eps(result: dict[str, Any], path: Path) -> Path | None:
    """Setting B AUROC mean +- se (over fits x samples) of the real run and its data-free
    control vs eps, one pair of lines per learning curve; the threshold marked. None
    without a control or with fewer than 2 eps."""
    curves = [c for c in result.get("learning") or [] if len(c["rows"]) >= 2]
    if not curves:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 4.2))
    for c in curves:
        rows = sorted(c["rows"], key=lambda r: r["epsilon"])
        x = [r["epsilon"] for r in rows]
        for arm, ls in (("real", "-"), ("control", "--")):
            y = [r[f"{arm}_mean"] for r in rows]
            e = [r[f"{arm}_se"] or 0.0 for r in rows]
            ax.errorbar(x, y, yerr=e, marker="o", ls=ls, capsize=3,
                        label=f"{c['group'] or result.get('impl')} {arm}")
        if c.get("threshold") is not None:
            ax.axvline(c["threshold"], color="grey", lw=0.8, ls=":")
    ax.axhline(0.5, color="grey", lw=0.8)
    eps_axis(ax)
    ax.set_ylabel("Setting B AUROC, mean ± se over fits x samples")
    ax.set_title(f"{result.get('impl')} on {result.get('dataset')}: "
                 f"real vs {controls.title(controls.kind_of(curves))}")
    ax.legend(fontsize=7)
    return save(fig, path, dpi=120)
