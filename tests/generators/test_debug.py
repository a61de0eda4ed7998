"""Calibration generators: identity leaks, independent ignores the data, randomized
response has its stated flip rate and cannot be distinguished beyond its eps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

import raudit.generators as generators
from raudit.attacks import classifier as clf
from raudit.attacks import features as fs
from raudit.data.dataset import ColumnMeta, infer_columns
from raudit.errors import DataError
from raudit.generators.debug import (IdentityGenerator, IndependentGenerator,
                                     RandomizedResponseGenerator)

TABLE = pd.DataFrame({"a": [0, 1, 0, 1, 1, 0], "b": [0.5, 0.1, 0.7, 0.2, 0.9, 0.3],
                      "y": [0, 1, 0, 1, 0, 1]})


@pytest.mark.parametrize("name, cls", [("identity", IdentityGenerator),
                                       ("independent", IndependentGenerator),
                                       ("randomized-response", RandomizedResponseGenerator)])
def test_registered(name, cls):
    assert generators.get(name) is cls and cls.name == name and name in generators.names()


def test_identity_returns_the_table():
    gen = IdentityGenerator().fit(TABLE, epsilon=1.0, seed=0)
    pd.testing.assert_frame_equal(gen.sample(len(TABLE)), TABLE)
    assert gen.summary()["iterations"] == 0 and math.isnan(gen.summary()["eps_hat"])
    more = gen.sample(50, seed=3)
    assert len(more) == 50
    assert set(map(tuple, more.to_numpy())) <= set(map(tuple, TABLE.to_numpy()))
    pd.testing.assert_frame_equal(more, gen.sample(50, seed=3))
    assert not more.equals(gen.sample(50, seed=4))
    assert len(gen.sample(0)) == 0


def test_independent_never_reads_the_records():
    other = TABLE.assign(a=[1, 1, 1, 1, 1, 0], b=[9.0, 8, 7, 6, 5, 4])
    x = IndependentGenerator().fit(TABLE, epsilon=1.0, seed=5).sample(200, seed=1)
    y = IndependentGenerator().fit(other, epsilon=1.0, seed=5).sample(200, seed=1)
    pd.testing.assert_frame_equal(x, y)
    assert list(x.columns) == list(TABLE.columns)
    assert (x.dtypes == TABLE.dtypes).all()
    # No public metadata: uniform on [0, 1], integer columns rounded.
    assert set(x["a"]) == {0, 1} and x["b"].between(0, 1).all() and x["b"].nunique() > 100


def test_independent_uses_public_bounds_only():
    public = (ColumnMeta("a", "integer", 2, 4, "public"),
              ColumnMeta("b", "continuous", -5.0, 5.0, "public"),
              ColumnMeta("y", "categorical", 0, 9, "public", (0.0, 3.0, 9.0)))
    gen = IndependentGenerator().fit(TABLE, epsilon=1.0, seed=0, columns=public)
    s = gen.sample(2000)
    assert set(s["a"]) == {2, 3, 4}
    assert s["b"].between(-5, 5).all() and s["b"].min() < -4 and s["b"].max() > 4
    assert set(s["y"]) == {0, 3, 9}
    # Bounds read off the data are not public: ignored.
    data_meta = infer_columns(TABLE.assign(b=TABLE["b"] * 100))
    s = IndependentGenerator().fit(TABLE, epsilon=1.0, columns=data_meta).sample(500)
    assert s["b"].between(0, 1).all()


def test_randomized_response_flip_rate():
    n = 20_000
    table = pd.DataFrame({"a": np.zeros(n, dtype=int), "y": np.arange(n) % 2})
    gen = RandomizedResponseGenerator().fit(table, epsilon=2.0, seed=0)
    p_keep = math.e / (1 + math.e)  # eps per column = 2 / 2 columns = 1
    assert gen.summary()["p_keep"] == pytest.approx(p_keep)
    assert gen.summary()["eps_hat"] == 2.0 and gen.summary()["iterations"] == 0
    out = gen.sample(n)
    se = math.sqrt(p_keep * (1 - p_keep) / n)
    assert abs(out["a"].mean() - (1 - p_keep)) < 4 * se
    flipped_y = (out["y"] != table["y"]).mean()
    assert abs(flipped_y - (1 - p_keep)) < 4 * se
    assert (out.dtypes == table.dtypes).all()
    # The release is fixed by the fit seed; sampling n rows returns it in order.
    pd.testing.assert_frame_equal(out, gen.sample(n, seed=9))


def test_randomized_response_refuses_non_binary_columns():
    with pytest.raises(DataError, match=r"0/1 columns only; columns \['b'\]"):
        RandomizedResponseGenerator().fit(TABLE, epsilon=1.0)


# -- calibration: a small distinguishing game with the groundhog (naive) attack -------

BASE = pd.DataFrame({"A": [0, 0, 0, 0], "B": [0, 0, 0, 0], "y": [0, 1, 0, 1]})


def game_auc(name: str, world_in: pd.DataFrame, world_out: pd.DataFrame, *,
             epsilon: float = 1.0, models: int = 150, n_synth: int | None = None) -> float:
    """Train `models` generators per world, fit the attack on 2/3, AUC on the rest.

    Each model samples ``n_synth`` rows (default: its training set's size).
    """
    ctx = fs.AttackContext.build(world_out, world_in.iloc[-1])
    cls = generators.get(name)
    X, y = [], []
    for label, world in ((1, world_in), (0, world_out)):
        for m in range(models):
            seed = 1000 * label + m
            synth = cls().fit(world, epsilon=epsilon, seed=seed).sample(n_synth or len(world))
            X.append(fs.naive(synth, ctx))
            y.append(label)
    X, y = np.array(X), np.array(y)
    train = np.r_[0:100, models:models + 100]
    test = np.setdiff1d(np.arange(len(y)), train)
    model = clf.fit_attack(X[train], y[train], seed=0)
    return roc_auc_score(y[test], clf.score(model, X[test]))


TARGET = pd.DataFrame({"A": [1], "B": [1], "y": [1]})
OTHER = pd.DataFrame({"A": [0], "B": [0], "y": [1]})
D_IN = pd.concat([BASE, TARGET], ignore_index=True)
D_ALT = pd.concat([BASE, OTHER], ignore_index=True)  # replace-one neighbour of D_IN


def test_identity_is_fully_distinguishable():
    assert game_auc("identity", D_IN, D_ALT) == 1.0
    assert game_auc("identity", D_IN, BASE) == 1.0


def test_independent_is_indistinguishable():
    assert abs(game_auc("independent", D_IN, D_ALT) - 0.5) < 0.15
    assert abs(game_auc("independent", D_IN, BASE, n_synth=len(D_IN)) - 0.5) < 0.15


def test_synthetic_size_reveals_the_world_in_add_remove_games():
    # A pitfall for the audit, not a bug here: when each model samples as many rows as
    # it was trained on, worlds of 5 and 4 rows give means on different lattices
    # (k/5 vs k/4), so even the data-blind generator is told apart perfectly.
    assert game_auc("independent", D_IN, BASE) > 0.95


def test_randomized_response_stays_within_its_eps():
    # For an eps-DP mechanism every test has TPR <= e^eps FPR (and the mirror bound),
    # which caps the AUC at e^eps / (1 + e^eps) (0.731 at eps = 1). One AUC on 100 + 100
    # test models has a standard error of about 0.04: allow 0.1 on top of the cap.
    eps = 1.0
    cap = math.exp(eps) / (1 + math.exp(eps))
    assert game_auc("randomized-response", D_IN, D_ALT, epsilon=eps) <= cap + 0.1
    # The same worlds are easy to tell apart at a large eps: the game has power.
    assert game_auc("randomized-response", D_IN, D_ALT, epsilon=30.0) > 0.95
