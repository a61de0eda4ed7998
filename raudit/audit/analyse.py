"""From the shadow table to the audit's answer: the attack classifier and the eps bounds.

The attack classifier (a seeded RandomForest, :func:`raudit.attacks.fit_attack`)
is fitted on the train split of both worlds, scores the val and test splits, and
:func:`raudit.audit.thresholds.audit_bound` chooses the threshold AND its direction
on validation, then bounds eps on test. Failed or missing shadow models are
left out and counted; with a split or world empty the bounds are NaN.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

import numpy as np
import pandas as pd

from raudit import seeds
from raudit.attacks import fit_attack, score
from raudit.audit.bayes import eps_bayesian
from raudit.audit.thresholds import choose_threshold, evaluate_threshold, threshold_counts
from raudit.audit.estimators import ESTIMATORS, Evidence, best, estimate
from raudit.audit.game import derive_seed
from raudit.results.ids import canonical_json

_NAN_KEYS = ("auc", "threshold", "tpr", "fpr", "eps_cp", "eps_jeffreys", "eps_bayes", "eps_max",
             "eps_curve", "mu_gdp", "eps_gdp")


def ok_rows(shadow: pd.DataFrame, trial_ids: set[str] | None = None) -> pd.DataFrame:
    """Rows with status ok, one per trial, in a canonical order, optionally of given trials.

    The analysis must be a pure function of the SET of trials: the attack's random
    forest depends on the order of its training rows, and the store holds rows in
    the order chunks happened to finish. So rows are sorted by (world, shadow index,
    trial id), and when a trial was written twice (two writers, or a retried chunk
    whose first attempt landed) the copy kept is chosen by content, not by arrival.
    """
    df = shadow[shadow["status"] == "ok"]
    if trial_ids is not None:
        df = df[df["trial_id"].isin(trial_ids)]
    if df.empty:
        return df
    # Content digests only where a trial has several copies (rare), not on every row.
    digest = pd.Series("", index=df.index)
    dup = df["trial_id"].duplicated(keep=False).to_numpy()
    if dup.any() and "features_vec" in df:
        digest[dup] = df.loc[dup, "features_vec"].map(_vec_digest)
    df = df.assign(_digest=digest).sort_values(
        ["world", "shadow_index", "trial_id", "_digest"], kind="mergesort")
    return df.drop_duplicates("trial_id", keep="first").drop(columns="_digest")


def _vec_digest(v) -> str:
    return hashlib.sha1(np.ascontiguousarray(np.asarray(v, dtype=float)).tobytes()).hexdigest()


def matrix(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrix and labels (1 = in) of shadow rows."""
    if df.empty:
        return np.zeros((0, 0)), np.zeros(0, dtype=int)
    X = np.vstack([np.asarray(v, dtype=float) for v in df["features_vec"]])
    return X, (df["world"].to_numpy() == "in").astype(int)


def attack_scores(train: pd.DataFrame, others: Mapping[str, pd.DataFrame], seed: int
                  ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Fit on ``train``; {name: (scores, labels)} for each frame of ``others``."""
    X, y = matrix(train)
    model = fit_attack(X, y, seed)
    out = {}
    for name, df in others.items():
        Xo, yo = matrix(df)
        out[name] = (score(model, Xo) if len(Xo) else np.zeros(0), yo)
    return out


def _two_classes(labels: np.ndarray) -> bool:
    return 0 < int(labels.sum()) < len(labels)


def restrict(df: pd.DataFrame, cols: slice) -> pd.DataFrame:
    """Shadow rows with only the feature columns ``cols`` of every vector (and of every
    extra sample's vector)."""
    out = df.assign(features_vec=[np.asarray(v, dtype=float)[cols] for v in df["features_vec"]])
    if "features_extra" in df:
        out["features_extra"] = [None if e is None else [np.asarray(v, dtype=float)[cols]
                                                         for v in e] for e in df["features_extra"]]
    return out


def choose_view(parts: Mapping[str, pd.DataFrame], views: Mapping[str, slice], seed: int, *,
                delta: float, alpha: float) -> str:
    """The feature view (e.g. the white-box audit's black-box vector, its white-box extras
    or their union) whose attack, fitted on the train split, gives the largest CP bound
    on the VALIDATION split at the threshold chosen there (ties: the larger validation
    AUC, then the first view). The test split is never read, so the bound on it keeps its
    confidence, and an attacker who sees more never reports less than the black-box view
    in expectation: extra features that dilute a small training split are dropped."""
    from raudit.audit.epsilon import eps_clopper_pearson

    best_key, chosen = None, next(iter(views))
    for name, cols in views.items():
        sub = {k: restrict(parts[k], cols) for k in ("train", "val")}
        val = attack_scores(sub["train"], {"val": sub["val"]},
                            derive_seed(seed, seeds.ATTACK) % 2**32)["val"]
        counts = threshold_counts(*val, *val, delta=delta, alpha=alpha)
        cp = eps_clopper_pearson(counts["tp"], counts["fn"], counts["tn"], counts["fp"],
                                 delta=delta, alpha=alpha)
        key = (cp, abs(counts["auc"] - 0.5) if counts["auc"] == counts["auc"] else 0.0)
        if best_key is None or key > best_key:
            best_key, chosen = key, name
    return chosen


def analyse(shadow: pd.DataFrame, *, trial_ids: set[str], seed: int, delta: float | None,
            alpha: float = 0.1, views: Mapping[str, slice] | None = None) -> dict[str, Any]:
    """The bounds of one audit from its shadow rows (``trial_ids``: the audit's trials).

    Returns audit_bound's keys plus models_ok and missing; NaN bounds when a split
    lacks a world (too many failed models). ``views``: named column slices of the feature
    vector; the one chosen on the validation split (:func:`choose_view`) is analysed and
    named in ``feature_view``.
    """
    df = ok_rows(shadow, trial_ids)
    parts = {s: df[df["split"] == s] for s in ("train", "val", "test")}
    out: dict[str, Any] = {"models_ok": int(len(df)), "missing": int(len(trial_ids) - len(df))}
    labels_ok = all(_two_classes(matrix(p)[1]) for p in parts.values())
    if not labels_ok:
        out.update({k: math.nan for k in _NAN_KEYS})
        out.update({"direction": None, "saturated": False, "tp": None, "fn": None,
                    "tn": None, "fp": None})
        return out
    if views:
        view = choose_view(parts, views, seed, delta=delta or 0.0, alpha=alpha)
        parts = {k: restrict(p, views[view]) for k, p in parts.items()}
        out["feature_view"] = view
    scored = attack_scores(parts["train"], {"val": parts["val"], "test": parts["test"]},
                           derive_seed(seed, seeds.ATTACK) % 2**32)
    out.update(bounds(scored["val"], scored["test"], delta=delta or 0.0, alpha=alpha,
                      multi=lambda: multi_sample_bound(parts, seed=seed, delta=delta or 0.0,
                                                       alpha=alpha)))
    return out


def bounds(val, test, *, delta: float, alpha: float, multi=lambda: {}, statistic=None
           ) -> dict[str, Any]:
    """Threshold on validation, counts on test, then every registered estimator
    (:mod:`raudit.audit.estimators`): their summary columns, ``estimates`` (name ->
    eps_lo or None), mu_gdp, saturated and best_estimator. ``multi``: the multi-sample
    bound's keys, computed if an estimator asks. ``statistic``: (raw statistic, labels) of
    every trial where the attack's statistic is known (transcript, active levels)."""
    out = threshold_counts(*val, *test, delta=delta, alpha=alpha)
    ev = Evidence(val, test, (out["tp"], out["fn"], out["tn"], out["fp"]), delta, alpha, multi,
                  statistic)
    values = estimate(ev)
    for name, value in values.items():
        column = ESTIMATORS.get(name).column
        if column is not None and value is not None:
            out[column] = value
    out["mu_gdp"] = ev.tradeoff["mu_gdp"]  # a bound on mu, not an eps estimate
    if ev.mu_fit is not None:
        out["mu_fit"] = ev.mu_fit
    out["saturated"] = bool(out["eps_cp"] >= out["eps_max"] - 1e-9)
    # The assumption-free candidates (CP, curve) hold with >= 1 - alpha/2 each, so the
    # larger holds with >= 1 - alpha: the audit's stated confidence.
    out["best_estimator"] = best(values)
    out.update(ev.multi_sample)
    out["estimates"], out["alpha"] = values, alpha
    return out


def expanded(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Feature matrix and labels with one row per (model, synthetic dataset)."""
    X, y = matrix(df)
    if "features_extra" not in df or df.empty:
        return X, y
    extra_X, extra_y = [X], [y]
    for extras, label in zip(df["features_extra"], y):
        if extras is not None and len(extras):
            extra_X.append(np.vstack([np.asarray(v, dtype=float) for v in extras]))
            extra_y.append(np.full(len(extras), label))
    return np.vstack(extra_X), np.concatenate(extra_y)


def multi_sample_bound(parts: Mapping[str, pd.DataFrame], *, seed: int, delta: float,
                       alpha: float) -> dict[str, Any]:
    """The Bayesian bound on every (model, synthetic dataset) pair of the splits.

    Several synthetic datasets of one model are NOT independent trials (they share
    the model's training randomness), and neither are the attack's errors on them;
    counting each as a trial, as Zanella-Beguelin et al.'s multi-sample estimator
    does with several canaries per training run, assumes they are. The result is an
    estimate under that assumption, reported next to the single-sample bounds and
    never in the verdict. {} when the audit sampled one dataset per model.
    """
    if not any("features_extra" in p and p["features_extra"].notna().any()
               for p in parts.values()):
        return {}  # one dataset per model: nothing to expand
    n = {k: expanded(p) for k, p in parts.items()}
    k_models = sum(len(p) for p in parts.values())
    samples = sum(len(y) for _, y in n.values())
    if k_models == 0 or samples == k_models:
        return {}
    model = fit_attack(*n["train"], derive_seed(seed, seeds.ATTACK) % 2**32)
    (Xv, yv), (Xt, yt) = n["val"], n["test"]
    threshold, direction = choose_threshold(score(model, Xv), yv, delta=delta, alpha=alpha)
    tp, fn, tn, fp = evaluate_threshold(score(model, Xt), yt, threshold, direction)
    return {"samples_per_model": int(round(samples / k_models)),
            "eps_bayes_multi": eps_bayesian(tp, fn, tn, fp, delta=delta, alpha=alpha)}


def summary_row(game_spec: Mapping[str, Any], result: Mapping[str, Any], *, audit_id: str,
                target_label: str, models_per_hour: float | None) -> dict[str, Any]:
    """One row of the ``summary`` table."""
    def f(key):
        v = result.get(key)
        return None if v is None else float(v)

    def i(key):
        v = result.get(key)
        return None if v is None else int(v)

    return {
        "audit_id": audit_id, "impl": game_spec["impl"], "dataset": game_spec["dataset"],
        "attack": game_spec["attack"], "features": game_spec["features"], "target": target_label,
        "shadow_models": int(game_spec["shadow_models"]), "auc": f("auc"),
        "threshold": f("threshold"), "direction": result.get("direction"),
        "tp": i("tp"), "fn": i("fn"), "tn": i("tn"), "fp": i("fp"), "tpr": f("tpr"),
        "fpr": f("fpr"), "eps_max": f("eps_max"), "mu_gdp": f("mu_gdp"),
        # the summary column of every registered estimator that has one (the others are
        # in the estimates table only)
        **{est.column: f(est.column) for _, est in ESTIMATORS.items() if est.column},
        "best_estimator": result.get("best_estimator"),
        "samples_per_model": int(result.get("samples_per_model") or 1),
        "saturated": bool(result.get("saturated", False)), "epsilon": float(game_spec["epsilon"]),
        "delta": None if game_spec["delta"] is None else float(game_spec["delta"]),
        "missing": i("missing"), "models_ok": i("models_ok"), "seed": int(game_spec["seed"]),
        "synthetic_rows": int(game_spec["synthetic_rows"]), "models_per_hour": models_per_hour,
        "created_at": datetime.now(timezone.utc),
        "options_json": canonical_json(game_spec.get("options") or {}),
    }
