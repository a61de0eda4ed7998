"""The pooled target selection computes each table's features once for all candidates
and fits the candidates' forests with scikit-learn's checks paid once and its trees built
directly (raudit.attacks.forest): the same rows, AUCs and chosen target as one extraction
per candidate with every check on and scikit-learn's own fit and predict_proba."""

from __future__ import annotations

import contextlib
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.attacks import classifier, extract
from raudit.audit import selection
from raudit.cli.app import app

ARGS = ["audit", "--backend", "local", "--impl", "identity", "--attack", "groundhog",
        "--features", "ensemble", "--dataset", "breast-cancer", "-S", "5",
        "--target-candidates", "6", "--selection-models", "16", "--json"]


def _audit(out):
    r = CliRunner().invoke(app, [*ARGS, "--out", str(out)])
    assert r.exit_code == 0, r.output
    rows = pd.read_parquet(out / "target-selection" / "shadow").sort_values("trial_id")
    return json.loads(r.stdout), rows.reset_index(drop=True)


def test_shared_selection_equals_one_extraction_per_candidate(tmp_path, monkeypatch):
    new, new_rows = _audit(tmp_path / "new")
    # The path before sharing: every candidate's features from scratch, sklearn's checks on.
    monkeypatch.setattr(selection, "extract_many",
                        lambda name, synths, ctxs: [extract(name, synths, c) for c in ctxs])
    monkeypatch.setattr(classifier, "prechecked", contextlib.nullcontext)
    monkeypatch.setattr(classifier, "fit_forest", lambda model, X, y: model.fit(X, y))
    monkeypatch.setattr(classifier, "forest_proba", lambda model, X: model.predict_proba(X))
    old, old_rows = _audit(tmp_path / "old")
    assert new["target"] == old["target"] and new["target_aucs"] == old["target_aucs"]
    assert len(set(new["target_aucs"].values())) > 1  # the choice is not a tie of equals
    assert list(new_rows["trial_id"]) == list(old_rows["trial_id"])
    for a, b in zip(new_rows["features_vec"], old_rows["features_vec"]):
        assert np.array_equal(np.asarray(a), np.asarray(b))
    for key in ("auc", "eps_cp", "eps_bayes", "threshold"):
        assert new[key] == old[key] or (np.isnan(new[key]) and np.isnan(old[key]))


def test_the_attack_refuses_non_finite_features():
    with pytest.raises(ValueError, match="finite"):
        classifier.fit_attack(np.array([[0.0], [np.nan]]), np.array([0, 1]), 0)


def test_verified_contexts_are_kept_per_target_and_settings():
    from raudit.audit.chunk import attack_context, load_train, verified_context
    from raudit.audit.runner import AuditRequest, prepare

    game, _, _ = prepare(AuditRequest(impl="identity", dataset="breast-cancer", target="auto",
                                      shadow_models=5))
    spec = game.spec()
    train = load_train(spec).train
    a, b = train.index[0], train.index[1]
    ctx = verified_context(train, {**spec, "target": a})
    assert verified_context(train, {**spec, "target": a}) is ctx  # built once
    other = verified_context(train, {**spec, "target": b})
    assert other is not ctx and other.target.equals(train.loc[b])
    fresh = attack_context(train, {**spec, "target": a})
    assert fresh.columns == ctx.columns and fresh.target.equals(ctx.target)
    assert np.array_equal(fresh.lower, ctx.lower) and np.array_equal(fresh.upper, ctx.upper)
    wider = verified_context(train, {**spec, "target": a, "context": {"bins": 7}})
    assert wider is not ctx and wider.bins == 7
