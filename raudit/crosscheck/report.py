"""The cross-check's verdict line, and its report as JSON and Markdown."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd


def failed(result: dict) -> list[str]:
    return [c.name for c in result["checks"] if c.passed is False]


def verdict(result: dict) -> str:
    s = result["settings"]
    checks = [c for c in result["checks"] if c.passed is not None]
    speed = next((c for c in result["checks"] if c.name == "speed"), None)
    tail = f"; the port trains {speed.numbers['ratio']:.1f}x faster per model" if speed else ""
    bad = failed(result)
    if bad:
        return (f"verdict: the {s['impl']} port DIFFERS from the released code on {s['dataset']}: "
                f"{len(bad)} of {len(checks)} checks failed ({', '.join(bad)}){tail}")
    return (f"verdict: the {s['impl']} port matches the released code on {s['dataset']}: "
            f"{len(checks)} of {len(checks)} checks passed over {s['models']} models per side{tail}")


def _clean(x):
    """JSON without NaN/inf (null instead), numpy scalars as Python numbers."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if hasattr(x, "item") and not isinstance(x, (str, bytes)):
        x = x.item()
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def as_json(result: dict) -> dict:
    return _clean({"verdict": verdict(result), "settings": result["settings"],
                   "checks": [{"name": c.name, "status": _status(c), "summary": c.summary,
                               "numbers": c.numbers} for c in result["checks"]]})


def _status(c) -> str:
    return "info" if c.passed is None else ("pass" if c.passed else "FAIL")


def markdown(result: dict) -> str:
    s = result["settings"]
    lines = [f"# Cross-check: `{s['impl']}` port vs the released code, {s['dataset']}", "",
             f"{s['models']} models per side, eps = {s['epsilon']}, delta = {s['delta']}, "
             f"k = {s['teachers']} teachers, lambda = {s['lam']}, L = {s['orders']}, batch "
             f"{s['batch']}, root seed {s['seed']}, alpha {s['alpha']}; released: "
             f"`{s['released']}`", "", "| check | status | result |", "|---|---|---|"]
    for c in result["checks"]:
        lines.append(f"| {c.name} | {_status(c)} | {c.summary.replace('|', '/')} |")
    lines += ["", verdict(result), ""]
    return "\n".join(lines)


def write(result: dict, out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "crosscheck.json", out / "crosscheck.md", out / "models.csv"]
    paths[0].write_text(json.dumps(as_json(result), indent=2) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(result), encoding="utf-8")
    pd.DataFrame(result["models"]).to_csv(paths[2], index=False)
    return paths
