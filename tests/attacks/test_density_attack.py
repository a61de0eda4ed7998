"""The density-ratio attack (domias) and the ensemble that chooses an attack on
validation (issue 49, item 5). Fixed seeds throughout."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.attacks import AttackContext, extract, resolve
from raudit.attacks import density
from raudit.attacks.classifier import get as get_attack
from sklearn.metrics import roc_auc_score

from raudit.audit.analyse import analyse, attack_scores, restrict


def population(n: int, seed: int) -> pd.DataFrame:
    return pd.DataFrame(np.random.default_rng(seed).normal(size=(n, 2)), columns=["a", "b"])


def test_the_score_ranks_a_planted_member_above_every_non_member():
    """A generator that memorises (its synthetic rows are the training rows plus 0.01
    jitter) trained on 29 population rows and one planted member in a sparse region
    (2.5, -2.5): the member scores above each of 20 population rows it never saw, each
    attacked with the same synthetic table and holdout."""
    train = pd.concat([population(29, 0), pd.DataFrame({"a": [2.5], "b": [-2.5]})],
                      ignore_index=True)
    holdout = population(200, 1)
    rng = np.random.default_rng(2)
    synth = train + rng.normal(scale=0.01, size=train.shape)

    def score_of(target: pd.Series, reference: pd.DataFrame) -> float:
        ctx = AttackContext.build(reference, target, holdout=holdout)
        return float(extract("domias", [synth], ctx)[0, 0])

    member = score_of(train.iloc[-1], train.iloc[:-1])
    others = [score_of(row, train) for _, row in population(20, 3).iterrows()]
    assert member > max(others) + 1.0


def test_the_reference_density_divides_the_synthetic_one():
    """The score is log p_syn - log p_ref: the same synthetic table scores a target in a
    sparse region of the population higher than p_syn alone says."""
    train, holdout = population(30, 0), population(200, 1)
    synth = population(60, 4)
    target = train.iloc[0]
    ctx = AttackContext.build(train.iloc[1:], target, holdout=holdout)
    t = density.standardize(target.to_numpy(dtype=float), ctx.center, ctx.scale)
    syn = density.log_density(density.standardize(synth.to_numpy(), ctx.center, ctx.scale), t)
    ref = density.log_density(density.standardize(ctx.holdout, ctx.center, ctx.scale), t)
    # the KDE's own reading, not raudit's: Scott's bandwidth n^(-1/(d+4)), Gaussian kernel
    z = density.standardize(synth.to_numpy(), ctx.center, ctx.scale)
    h = len(z) ** (-1 / 6)
    direct = np.log(np.mean(np.exp(-((z - t) ** 2).sum(1) / (2 * h * h)))) - np.log(2 * np.pi * h * h)
    assert syn == pytest.approx(direct, rel=1e-9)
    assert extract("domias", [synth], ctx)[0, 0] == pytest.approx(syn - ref, rel=1e-12)
    assert ref != 0.0


def test_the_reference_sample_is_disjoint_from_the_training_data():
    """Holdout rows equal to a training row (or to the target) are dropped: the worst
    case's test split is a copy of its training table, so nothing is kept."""
    train = pd.DataFrame({"A": [0, 0, 0, 0, 1], "B": [0, 0, 0, 0, 1]})
    ctx = AttackContext.build(train.iloc[:4], train.iloc[4], holdout=train.copy())
    assert ctx.holdout.shape == (0, 2)
    assert density.reference_log_density(ctx.holdout, np.zeros(2)) == 0.0
    mixed = pd.concat([train, pd.DataFrame({"A": [2], "B": [3]})], ignore_index=True)
    kept = AttackContext.build(train.iloc[:4], train.iloc[4], holdout=mixed).holdout
    assert kept.tolist() == [[2.0, 3.0]]


def test_the_score_is_deterministic_and_finite_on_empty_or_nan_tables():
    train, holdout = population(30, 0), population(50, 1)
    ctx = AttackContext.build(train.iloc[1:], train.iloc[0], holdout=holdout)
    synth = population(40, 5)
    assert extract("domias", [synth], ctx)[0, 0] == extract("domias", [synth.copy()], ctx)[0, 0]
    empty = pd.DataFrame(columns=["a", "b"])
    nan = pd.DataFrame({"a": [np.nan], "b": [1.0]})
    assert np.isfinite(extract("domias", [empty, nan], ctx)).all()


def test_domias_and_ensemble_are_registered_attacks_with_a_default_dataset():
    assert resolve("domias") == (get_attack("domias"), "domias")
    assert resolve("ensemble") == (get_attack("ensemble"), "stacked")
    assert get_attack("domias").default_dataset == "breast-cancer"


def test_the_ensembles_views_tile_its_feature_vector():
    train = population(30, 0)
    ctx = AttackContext.build(train.iloc[1:], train.iloc[0], holdout=population(50, 1))
    views = get_attack("ensemble").view_slices(ctx)
    width = extract("stacked", [population(40, 2)], ctx).shape[1]
    assert list(views) == ["groundhog", "querybased", "domias", "union"]
    assert views["groundhog"] == slice(0, 10)  # naive: 5 statistics x 2 columns
    assert views["domias"] == slice(width - 1, width)
    assert views["querybased"].stop == width - 1
    assert get_attack("groundhog").view_slices(ctx) is None


def shadow_rows(views: dict[str, slice], width: int, seed: int) -> pd.DataFrame:
    """50 models per world: the domias column tells the worlds apart on the train and
    validation splits only, the first groundhog column on the train and test splits only."""
    rng = np.random.default_rng(seed)
    rows = []
    for world in ("out", "in"):
        for i in range(50):
            split = "train" if i < 20 else "val" if i < 30 else "test"
            x = rng.normal(size=width)
            if world == "in":
                if split in ("train", "val"):
                    x[views["domias"].start] += 4.0
                if split in ("train", "test"):
                    x[views["groundhog"].start] += 4.0
            rows.append({"trial_id": f"{world}{i}", "world": world, "shadow_index": i,
                         "status": "ok", "split": split, "features_vec": list(x)})
    return pd.DataFrame(rows)


def test_the_ensemble_chooses_on_validation_never_on_test():
    """Validation says domias, test says groundhog: a choice that read the test split
    would take groundhog (its test bound is far larger)."""
    train = population(30, 0)
    ctx = AttackContext.build(train.iloc[1:], train.iloc[0], holdout=population(50, 1))
    views = get_attack("ensemble").view_slices(ctx)
    width = extract("stacked", [population(40, 2)], ctx).shape[1]
    df = shadow_rows(views, width, 0)
    out = analyse(df, trial_ids=set(df["trial_id"]), seed=0, delta=1e-5, views=views)
    assert out["feature_view"] == "domias"
    # what a choice that read the test split would see: groundhog separates it, domias not
    parts = {s: df[df["split"] == s] for s in ("train", "test")}
    test_auc = {}
    for view in ("groundhog", "domias"):
        sub = {k: restrict(p, views[view]) for k, p in parts.items()}
        scores, labels = attack_scores(sub["train"], {"test": sub["test"]}, seed=0)["test"]
        test_auc[view] = roc_auc_score(labels, scores)
    assert test_auc["groundhog"] > 0.95 and test_auc["domias"] < 0.7
