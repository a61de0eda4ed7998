"""The PNG of utility vs eps for a sweep (matplotlib, Agg backend: no display needed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from raudit.plots import pyplot, save


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
    ax.set_xscale("log")
    ax.set_xlabel("epsilon")
    ax.set_ylabel(f"{metric.upper()}: best of fits x samples, mean over classifiers")
    ax.set_title(f"{result.get('impl')} on {result.get('dataset')}")
    ax.legend(fontsize=7)
    return save(fig, path, dpi=120)
