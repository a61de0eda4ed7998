"""Utility rows -> the study's tables: per classifier (its table 5) and per sweep point
(its table 4), with mean +- standard error, SRA, feature-ranking agreement and drops.

Input: the ``utility`` rows of one run (any statuses). Output (JSON-ready)::

    {"real": {"auroc": avg, "auprc": avg, "per_classifier": {name: {"auroc", "auprc"}}},
     "points": [{config_id, label, impl, epsilon, teachers, preset, conditional, status,
                 reason, fits_ok, auroc_B, auprc_B, auroc_C, auprc_C (best-of, averaged),
                 auroc_B_mean, auroc_B_se, ..., sra, sra_mean, feature_agreement,
                 drop_vs_real, drop_vs_reference, iterations, eps_hat, control,
                 single_class_share, fit_means}],
     "per_classifier": [{label, classifier, setting, metric, best, mean, se, n}],
     "learning": [{group, rows: [{epsilon, real_mean, real_se, control_mean, control_se,
                  diff, se, p, fits, ...}], threshold, alpha}],   # only with a control
     "failures": ["WHAT: the error's last line"]}   # fits and Setting A runs that failed

A failure is never a result: a point none of whose fits ran has ``status`` "failed" and the
error's last line as ``reason`` (the stored error keeps the whole traceback), and every
failed trial without an ok row is listed in ``failures``, which the command turns into a
non-zero exit.

``learning`` pairs each point with its coin-flip control (:mod:`raudit.utility.learning`):
one curve per setting of the axes other than eps, with the learning threshold.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from raudit.results.convert import number_or_none
from raudit.utility import learning
from raudit.utility import metrics as mt

SWEPT = ("epsilon", "teachers", "preset", "conditional")


def _na(v):
    """pandas' missing values as None (JSON null); booleans as plain bool."""
    if v is None or v is pd.NA or (isinstance(v, float) and math.isnan(v)):
        return None
    return bool(v) if isinstance(v, (bool,)) or type(v).__name__ == "bool_" else v


def point_labels(points: pd.DataFrame) -> dict[str, str]:
    """A short label per sweep point naming only the axes that vary (eps always)."""
    vary = [c for c in SWEPT[1:] if points[c].astype(str).nunique() > 1]
    out = {}
    for _, p in points.iterrows():
        parts = [f"eps={p['epsilon']:g}"]
        for c in vary:
            v = p[c]
            parts.append({"teachers": f"k={v}", "preset": f"{v}",
                          "conditional": "cond" if v is True else "uncond"}[c])
        if _na(p.get("control")):
            parts.append(str(p["control"]))
        out[p["config_id"]] = " ".join(parts)
    return out


def _group(p) -> str:
    """The point's setting of the swept axes other than eps (one learning curve each)."""
    return " ".join(f"{c}={_na(p[c])}" for c in SWEPT[1:] if _na(p[c]) is not None)


def _real(ok: pd.DataFrame) -> dict[str, Any]:
    a = ok[ok["setting"] == "A"]
    if a.empty:
        return {}
    per = {n: {m: number_or_none(g.loc[g["metric"] == m, "value"].mean()) for m in ("auroc", "auprc")}
           for n, g in a.groupby("classifier")}
    return {"auroc": number_or_none(a.loc[a["metric"] == "auroc", "value"].mean()),
            "auprc": number_or_none(a.loc[a["metric"] == "auprc", "value"].mean()), "per_classifier": per}


def _sra(ok: pd.DataFrame, real: dict, names: list[str]) -> tuple[float | None, float | None]:
    """SRA of A vs C on AUROC: on each classifier's best-of C, and the mean over datasets."""
    if not real:
        return None, None
    a = [real["per_classifier"].get(n, {}).get("auroc") for n in names]
    a = [math.nan if v is None else v for v in a]
    c = ok[(ok["setting"] == "C") & (ok["metric"] == "auroc")]
    if c.empty:
        return None, None
    best = c.groupby("classifier")["value"].max()
    headline = mt.sra(a, [best.get(n, math.nan) for n in names])
    each = [mt.sra(a, g.set_index("classifier")["value"].reindex(names).to_numpy())
            for _, g in c.groupby(["fit_index", "sample_index"])]
    return number_or_none(headline), number_or_none(mt.mean_se(each)[0])


def one_line(error: Any) -> str:
    """A stored error (a chunk's whole traceback) as the one line a user reads: its last
    non-empty line, e.g. ``IndexError: index 0 is out of bounds ...``."""
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    return " ".join(lines[-1].split())[:300] if lines else str(error)


def failures(rows: pd.DataFrame, labels: dict | None = None) -> list[str]:
    """Every failed trial that has no ok row (a rerun that succeeded replaces it), as
    ``WHAT: error line``, one per distinct (what, error)."""
    if "error" not in rows or rows.empty:
        return []
    done = set(rows.loc[rows["status"] == "ok", "trial_id"].dropna())
    bad = rows[(rows["status"] == "failed") & ~rows["trial_id"].isin(done)]
    said = []
    for _, r in bad.iterrows():
        what = ("Setting A (real data)" if r["impl"] == "real" else
                f"{r['impl']} {(labels or {}).get(r.get('config_id'), '')}".strip())
        said.append(f"{what}: {one_line(r['error'])}")
    return list(dict.fromkeys(said))


def analyse(rows: pd.DataFrame, reference: float | None = None) -> dict[str, Any]:
    ok = rows[rows["status"] == "ok"]
    real = _real(ok)
    syn = rows[rows["impl"] != "real"]
    out: dict[str, Any] = {"real": real, "points": [], "per_classifier": [],
                           "failures": failures(rows)}
    if syn.empty:
        out["per_classifier"] = [{"label": "real", "classifier": n, "setting": "A", "metric": m,
                                  "best": v[m], "mean": v[m], "se": None, "n": 1}
                                 for n, v in real.get("per_classifier", {}).items()
                                 for m in ("auroc", "auprc")]
        return out
    if "control" not in syn:
        syn = syn.assign(control=None)
    points = syn.drop_duplicates("config_id")[["config_id", "impl", *SWEPT, "control"]]
    points = points.sort_values(["epsilon", "preset"], kind="stable")
    labels = point_labels(points)
    out["failures"] = failures(rows, labels)
    for _, p in points.iterrows():
        cid = p["config_id"]
        all_p = syn[syn["config_id"] == cid]
        ok_p = all_p[all_p["status"] == "ok"]
        fits_ok = int(ok_p["trial_id"].nunique())
        rec: dict[str, Any] = {"config_id": cid, "label": labels[cid], "impl": p["impl"],
                               "epsilon": number_or_none(p["epsilon"]), "teachers": number_or_none(p["teachers"]),
                               "preset": _na(p["preset"]), "conditional": _na(p["conditional"]),
                               "fits_ok": fits_ok, "control": _na(p["control"]),
                               "group": _group(p), "pair_key": f"{_group(p)} eps={p['epsilon']!r}"}
        if fits_ok == 0:
            bad = all_p[all_p["status"] != "ok"]
            rec["status"] = str(bad["status"].iloc[0]) if len(bad) else "missing"
            rec["reason"] = one_line(bad["error"].iloc[0]) if len(bad) else None
            out["points"].append(rec)
            continue
        rec["status"], rec["reason"] = "ok", None
        names = sorted(ok_p["classifier"].dropna().unique())
        for s in ("B", "C"):
            for m in ("auroc", "auprc"):
                sel = ok_p[(ok_p["setting"] == s) & (ok_p["metric"] == m)]
                if sel.empty:
                    continue
                rec[f"{m}_{s}"] = number_or_none(mt.best_then_average(sel)["best"].iloc[0])
                per_ds = sel.groupby(["fit_index", "sample_index"])["value"].mean()
                rec[f"{m}_{s}_mean"], rec[f"{m}_{s}_se"] = map(number_or_none, mt.mean_se(per_ds))
                for n, g in sel.groupby("classifier"):
                    mean, se = mt.mean_se(g["value"])
                    out["per_classifier"].append({"label": labels[cid], "classifier": n,
                                                  "setting": s, "metric": m,
                                                  "best": number_or_none(g["value"].max()), "mean": number_or_none(mean),
                                                  "se": number_or_none(se), "n": int(g["value"].notna().sum())})
        rec["sra"], rec["sra_mean"] = _sra(ok_p, real, names)
        feats = ok_p[ok_p["setting"] == "features"]["value"]
        rec["feature_agreement"] = number_or_none(feats.mean()) if len(feats) else None
        b = rec.get("auroc_B")
        rec["drop_vs_real"] = number_or_none(mt.drop(b, real["auroc"])) if real and b is not None else None
        rec["drop_vs_reference"] = (number_or_none(mt.drop(b, reference))
                                    if reference is not None and b is not None else None)
        fit_rows = ok_p.drop_duplicates("trial_id")
        rec["iterations"] = number_or_none(fit_rows["iterations"].mean())
        # a fit that took no step is its initialisation: counted, never averaged in silently
        rec["fits_no_step"] = int((fit_rows["iterations"] == 0).sum())
        rec["eps_hat"] = number_or_none(fit_rows["eps_hat"].mean())
        rec["eps_hat_max"] = number_or_none(fit_rows["eps_hat"].max())  # the learning threshold's check
        rec["train_wall_s"] = number_or_none(fit_rows["train_wall_s"].sum())
        rec["single_class_share"] = learning.single_class_share(ok_p)
        rec["fit_means"] = learning.fit_means(ok_p)
        rec["score_wall_s"] = number_or_none(ok_p.drop_duplicates(
            ["trial_id", "sample_index", "setting", "classifier"])["score_wall_s"].sum())
        out["points"].append(rec)
    if any(p.get("control") for p in out["points"]):
        groups = dict.fromkeys(p["group"] for p in out["points"])
        out["learning"] = [{"group": g, **learning.curve_rows(
            [p for p in out["points"] if p["group"] == g])} for g in groups]
    return out
