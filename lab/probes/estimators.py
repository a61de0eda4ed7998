"""How many shadow models each eps estimator needs: re-analyse prefixes of one audit.

Shadow models are independent draws, so the first s models of each world of a
finished audit ARE an audit with s models per world: this script re-splits them
(40/20/40, raudit.audit.game.split_of), refits the attack and prints every
estimator's bound, then the smallest s at which each certifies eps_emp > the claim.

    python lab/probes/estimators.py runs/wc-smartnoise --sizes 10 20 30 50 75 100 150 200
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit.thresholds import audit_bound
from raudit.audit.fdp import tradeoff_bounds
from raudit.audit.game import derive_seed, split_of
from raudit.results import ResultStore

ESTIMATORS = ("eps_cp", "eps_jeffreys", "eps_bayes", "eps_curve", "eps_gdp")


def bounds_at(shadow: pd.DataFrame, s: int, *, seed: int, delta: float) -> dict:
    df = an.ok_rows(shadow)
    df = df[df["shadow_index"] < s].copy()
    df["split"] = [split_of(int(i), s) for i in df["shadow_index"]]
    parts = {k: df[df["split"] == k] for k in ("train", "val", "test")}
    scored = an.attack_scores(parts["train"], {"val": parts["val"], "test": parts["test"]},
                              derive_seed(seed, seeds.ATTACK) % 2**32)
    (vs, vl), (ts, tl) = scored["val"], scored["test"]
    out = audit_bound(vs, vl, ts, tl, delta=delta)
    out.update(tradeoff_bounds(vs, vl, ts, tl, delta=delta))
    return {"models_per_world": s, "auc": out["auc"], "eps_max": out["eps_max"], "mu_gdp": out["mu_gdp"],
            **{k: out[k] for k in ESTIMATORS}}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("store", type=Path, help="a finished audit's --out folder")
    p.add_argument("--sizes", type=int, nargs="+", default=[10, 20, 30, 50, 75, 100, 150, 200])
    p.add_argument("--delta", type=float, default=None,
                   help="delta for the bounds (default: the audit's own)")
    p.add_argument("--json", action="store_true")
    args = p.parse_args()
    store = ResultStore(args.store)
    summary = store.read("summary").iloc[-1]
    shadow = store.read("shadow")
    delta = args.delta if args.delta is not None else float(summary["delta"] or 0.0)
    claim = float(summary["epsilon"])
    rows = [bounds_at(shadow, s, seed=int(summary["seed"]), delta=delta)
            for s in args.sizes if s <= int(summary["shadow_models"])]
    table = pd.DataFrame(rows)
    needed = {k: next((int(r["models_per_world"]) for r in rows if r[k] > claim), None)
              for k in ESTIMATORS}
    if args.json:
        print(json.dumps({"claim": claim, "delta": delta, "rows": rows, "needed": needed}))
        return
    print(f"{summary['impl']} on {summary['dataset']} ({summary['attack']}), claim eps = {claim:g}, "
          f"delta = {delta:g}")
    print(table.to_string(index=False, float_format=lambda x: f"{x:.3f}"))
    print("shadow models per world needed to certify eps_emp > claim:",
          ", ".join(f"{k} {v if v is not None else '> ' + str(max(args.sizes))}"
                    for k, v in needed.items()))


if __name__ == "__main__":
    main()
