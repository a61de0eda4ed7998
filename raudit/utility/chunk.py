"""One chunk of the utility benchmark: ``run_chunk(spec) -> rows``, a plain function of a
plain dict, run by :func:`raudit.engine.driver.run_chunks` (on a Ray actor or in-process).

A synthetic chunk fits its M trials of ONE config with one ``fit_many`` call, draws
``samples`` synthetic tables per fit (as many rows as the training set), and on each
table scores every classifier in Setting B (train synthetic, test the real test set)
and C (train / test on an 80/20 stratified split of the synthetic table), plus the
feature-ranking agreement. A real chunk (``"real": True``) scores Setting A once.
Spec::

    {"run_id", "config": {impl, options, dataset, label, bounds, data_digest, epsilon, delta,
                          teachers, preset, conditional},
     "trials": [{"trial_id", "fit_index", "seed"}], "samples": S, "root": seed,
     "classifiers": [...], "settings": ["B", "C"], "device": "cpu"}

A config with a ``"control"`` is the data-free control arm of a sweep point
(:mod:`raudit.utility.controls`): with ``"coin"`` the generator trains with
``control="coin"``; with ``"shuffle"`` each fit trains on the table with its labels
permuted by the fit's own permutation (:func:`raudit.utility.plan.shuffle_seed`). Every row
of a sample carries ``label_share``, the synthetic table's share of label 1 (0 or 1
for a single-class table).

A generator that refuses the config (a ConfigError at fit time, e.g. smartnoise's
"epsilon too small") gives one ``skipped`` row per trial with the reason; any other
exception fails the chunk (the engine retries it, then records ``failed`` rows).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MinMaxScaler
from threadpoolctl import threadpool_limits

from raudit import classifiers as clf
from raudit.audit.chunk import as_float, build_generator, load_train, sample_models
from raudit.errors import ConfigError, clip_error
from raudit.results.ids import canonical_json
from raudit.utility import metrics as mt
from raudit.utility import controls, plan


def xy(table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Features and the 0/1 label (last column); labels rounded and clipped, non-finite
    features set to 0 (a generator may emit them; a classifier cannot take them)."""
    x = np.nan_to_num(table.iloc[:, :-1].to_numpy(dtype=float), nan=0.0, posinf=0.0, neginf=0.0)
    y = np.clip(np.rint(np.nan_to_num(table.iloc[:, -1].to_numpy(dtype=float))), 0, 1).astype(int)
    return x, y


def score_setting(names, train: pd.DataFrame, test: pd.DataFrame, seed_of) -> list[dict]:
    """Every classifier trained on ``train``, tested on ``test``; MinMax scaling fitted on
    the training side only (then applied to the test side). One row per classifier x metric."""
    Xtr, ytr = xy(train)
    Xte, yte = xy(test)
    scaler = MinMaxScaler().fit(Xtr)
    Xtr, Xte = scaler.transform(Xtr), scaler.transform(Xte)
    rows = []
    for name in names:
        t0 = time.perf_counter()
        # One BLAS/OpenMP thread, like torch in the actors: the engine runs one chunk per
        # core, and a multi-threaded MLP or XGBoost would fight the other chunks for cores.
        with threadpool_limits(limits=1):
            s, info = clf.get(name).fit_score(Xtr, ytr, Xte, seed=seed_of(name))
        wall = time.perf_counter() - t0
        for metric, fn in mt.METRICS.items():
            rows.append({"classifier": name, "metric": metric, "value": fn(yte, s),
                         "single_class": info["single_class"], "nan_scores": info["nan_scores"],
                         "train_rows": len(ytr), "test_rows": len(yte),
                         "test_positives": int(yte.sum()), "score_wall_s": wall})
    return rows


def split_c(synth: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Setting C's 80/20 split of a synthetic table: stratified on the label when each
    class has at least 2 rows, else a plain random split (a single-class table too)."""
    y = xy(synth)[1]
    strat = y if np.bincount(y, minlength=2).min() >= 2 else None
    return train_test_split(synth, test_size=0.2, random_state=seed, stratify=strat)


def _base(spec: Mapping[str, Any]) -> dict[str, Any]:
    c = spec["config"]
    return {"run_id": spec["run_id"], "config_id": spec.get("config_id"), "impl": c.get("impl", "real"),
            "dataset": c["dataset"], "epsilon": c.get("epsilon"), "delta": c.get("delta"),
            "teachers": c.get("teachers"), "preset": c.get("preset"),
            "conditional": c.get("conditional"),
            "options_json": canonical_json(c.get("options") or {}),
            "chunk_models": len(spec.get("trials") or [1]), "device": spec.get("device") or "cpu",
            "control": c.get("control")}


def run_real(spec: Mapping[str, Any]) -> list[dict]:
    """Setting A: every classifier on the real training set, tested on the real test set."""
    ds = load_train(spec["config"])
    root = int(spec["root"])
    rows = score_setting(spec["classifiers"], ds.train, ds.test,
                         lambda n: plan.classifier_seed(root, n))
    base = {**_base(spec), "trial_id": spec["trial_id"], "setting": "A", "status": "ok"}
    return [{**base, **r} for r in rows]


def run_chunk(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Fit, sample and score the chunk's trials (see the module docstring)."""
    if spec.get("real"):
        return run_real(spec)
    trials = list(spec["trials"])
    if not trials:
        return []
    c, base, root = spec["config"], _base(spec), int(spec["root"])
    ds = load_train(c)
    t0 = time.perf_counter()
    try:
        gen = build_generator(c, spec.get("device"))
        # the control arm: same generator, same seeds; votes replaced by coins inside the
        # generator, or the labels permuted in the table it is given
        kind = c.get("control")
        extra = {"train_options": {"control": kind}} if kind and kind not in controls.DATA_LEVEL else {}
        tables = ([controls.shuffled_labels(ds.train, plan.shuffle_seed(root, int(t["fit_index"])))
                   for t in trials] if kind == "shuffle" else [ds.train] * len(trials))
        models = gen.fit_many(tables, epsilon=c["epsilon"], delta=c["delta"],
                              seeds=[t["seed"] for t in trials], columns=ds.columns, **extra)
    except ConfigError as exc:  # the generator cannot train this setting: record why
        return [{**base, "trial_id": t["trial_id"], "fit_index": t["fit_index"],
                 "seed": t["seed"], "status": "skipped", "error": str(exc)} for t in trials]
    train_wall = (time.perf_counter() - t0) / len(trials)
    real_corr = mt.label_correlations(ds.train)
    rows = []
    for t, model in zip(trials, models):
        s = model.summary()
        f = int(t["fit_index"])
        fit_base = {**base, "trial_id": t["trial_id"], "fit_index": f, "seed": int(t["seed"]),
                    "iterations": int(s.get("iterations", 0) or 0), "eps_hat": as_float(s.get("eps_hat")),
                    "train_wall_s": train_wall, "status": "ok"}
        ss = [plan.seeds(root, f, j) for j in range(int(spec["samples"]))]
        synths = sample_models([model] * len(ss), len(ds.train), [x["sample_seed"] for x in ss])
        for j, (sd, synth) in enumerate(zip(ss, synths)):
            b = {**fit_base, "sample_index": j, "sample_seed": int(sd["sample_seed"]),
                 "label_share": float(xy(synth)[1].mean()) if len(synth) else None}
            seed_of = (lambda n, j=j: plan.classifier_seed(root, n, f, j))
            if "B" in spec["settings"]:
                rows += [{**b, "setting": "B", **r}
                         for r in score_setting(spec["classifiers"], synth, ds.test, seed_of)]
            if "C" in spec["settings"]:
                tr, te = split_c(synth, sd["split_seed"])
                rows += [{**b, "setting": "C", **r}
                         for r in score_setting(spec["classifiers"], tr, te, seed_of)]
            synth_corr = mt.label_correlations(synth.astype(float))
            rows.append({**b, "setting": "features", "metric": "rank_agreement",
                         "value": mt.sra(real_corr, synth_corr), "train_rows": len(synth)})
    return rows


def failed_rows(spec: Mapping[str, Any], error: str) -> list[dict[str, Any]]:
    """One ``failed`` row per trial of a chunk that failed for good."""
    base = {**_base(spec), "status": "failed", "error": clip_error(error)}
    if spec.get("real"):
        return [{**base, "trial_id": spec["trial_id"], "setting": "A"}]
    return [{**base, "trial_id": t["trial_id"], "fit_index": t["fit_index"], "seed": t["seed"]}
            for t in spec["trials"]]
