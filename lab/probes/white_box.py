"""White-box vs black-box on the SAME shadow models: one white-box audit's store, read four ways.

A white-box audit's feature vector is the black-box vector of the same model (same fit
and sample seeds, bit for bit: tests/audit/test_white_box.py) followed by the white-box
features (raudit.audit.whitebox). So one run gives both audits side by side: the
black-box analysis reads the first L entries, the white-box one all of them; the two
ablations read the black-box part plus only the density or only the critic features.
Each is the audit's own analysis (raudit.audit.analyse: the seeded forest, the
validation threshold, CP and every estimator), at the store's delta.

    raudit audit --impl dpgan --attack querybased -S 100 --backend local \\
        --threat-model white-box --out runs/wb/dpgan
    python lab/probes/white_box.py runs/wb/dpgan [more stores ...]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from raudit.audit import analyse as an
from raudit.audit import whitebox
from raudit.generators import get
from raudit.results import ResultStore


def _views(spec: dict, width: int) -> dict[str, list[int]]:
    """Columns of each view of a white-box vector of ``width`` entries."""
    n_d, n_c = len(whitebox.DENSITY), len(whitebox.CRITIC) if get(spec["impl"]).describe().critic else 0
    L = width - n_d - n_c
    views = {"black-box": list(range(L)), "white-box": list(range(width)),
             "bb + density": list(range(L + n_d))}
    if n_c:
        views["bb + critic"] = list(range(L)) + list(range(L + n_d, width))
    return views


def compare(path: Path) -> list[dict]:
    store = ResultStore(path)
    spec = json.loads((path / "raudit.json").read_text())["spec"]
    summary = store.read("summary").iloc[-1]
    shadow = store.read("shadow")
    ok = shadow[(shadow["status"] == "ok") & (shadow["audit_id"] == summary["audit_id"])]
    ids = set(ok["trial_id"])
    width = len(ok["features_vec"].iloc[0])
    out = []
    for name, cols in _views(spec, width).items():
        view = ok.assign(features_vec=[np.asarray(v, dtype=float)[cols] for v in ok["features_vec"]])
        r = an.analyse(view, trial_ids=ids, seed=spec["seed"], delta=spec["delta"])
        out.append({"impl": spec["impl"], "view": name, "features": len(cols),
                    "models/world": spec["shadow_models"], "auc": r["auc"], "eps_cp": r["eps_cp"],
                    "eps_curve": r["eps_curve"], "eps_max": r["eps_max"],
                    "claimed": spec["epsilon"]})
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("stores", nargs="+", type=Path)
    args = p.parse_args()
    rows = [r for s in args.stores for r in compare(s)]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        print(pd.DataFrame(rows).round(3).to_string(index=False))


if __name__ == "__main__":
    main()
