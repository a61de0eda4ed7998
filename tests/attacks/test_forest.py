"""raudit.attacks.forest builds the same trees as RandomForestClassifier.fit, node for node,
and its probabilities equal predict_proba bit for bit; configurations it does not cover are
fitted by scikit-learn itself."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier

from raudit.attacks.forest import fit_forest, forest_proba

TREE_ARRAYS = ("feature", "threshold", "value", "children_left", "children_right", "impurity",
               "n_node_samples", "weighted_n_node_samples")

# (rows, features, seed, rounded): the selection's 40 x 145, a tall narrow one, a tiny
# one (bootstraps missing a class), and integer features full of ties
CASES = [(40, 145, 1, False), (200, 10, 8, False), (7, 3, 15, False), (60, 50, 22, True)]


def _data(n: int, d: int, seed: int, rounded: bool):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    X = np.round(X) if rounded else X
    y = (rng.random(n) < 0.5).astype(int)
    y[:2] = (0, 1)  # both classes present
    return X, y, rng.normal(size=(33, d))


def _same_trees(a: RandomForestClassifier, b: RandomForestClassifier) -> None:
    assert len(a.estimators_) == len(b.estimators_) == a.n_estimators
    for ta, tb in zip(a.estimators_, b.estimators_):
        assert ta.random_state == tb.random_state
        for name in TREE_ARRAYS:
            assert np.array_equal(getattr(ta.tree_, name), getattr(tb.tree_, name)), name
        assert np.array_equal(ta.classes_, tb.classes_) and ta.n_classes_ == tb.n_classes_


@pytest.mark.parametrize("n,d,seed,rounded", CASES)
def test_the_same_trees_and_probabilities_as_scikit_learn(n, d, seed, rounded):
    X, y, Xt = _data(n, d, seed, rounded)
    stock = RandomForestClassifier(random_state=seed, n_jobs=1).fit(X, y)
    lean = fit_forest(RandomForestClassifier(random_state=seed, n_jobs=1), X, y)
    _same_trees(stock, lean)
    assert np.array_equal(stock.classes_, lean.classes_)
    expected = stock.predict_proba(Xt)
    assert np.array_equal(forest_proba(lean, Xt), expected)
    assert np.array_equal(lean.predict_proba(Xt), expected)  # an ordinary fitted forest
    assert np.array_equal(forest_proba(stock, Xt), expected)


def test_single_class_labels():
    X, _, Xt = _data(12, 4, 3, False)
    for label in (0, 1):
        y = np.full(12, label)
        stock = RandomForestClassifier(random_state=5, n_jobs=1).fit(X, y)
        lean = fit_forest(RandomForestClassifier(random_state=5, n_jobs=1), X, y)
        _same_trees(stock, lean)
        assert np.array_equal(forest_proba(lean, Xt), stock.predict_proba(Xt))


def test_other_configurations_are_fitted_by_scikit_learn(monkeypatch):
    X, y, Xt = _data(30, 6, 4, False)
    calls = []
    real_fit = RandomForestClassifier.fit
    monkeypatch.setattr(RandomForestClassifier, "fit",
                        lambda self, *a, **k: calls.append(1) or real_fit(self, *a, **k))
    for params in ({"max_features": None}, {"class_weight": "balanced"}, {"bootstrap": False},
                   {"random_state": None}, {"max_leaf_nodes": 5}):
        model = fit_forest(RandomForestClassifier(n_jobs=1, **{"random_state": 0, **params}), X, y)
        assert hasattr(model, "estimators_")
    assert len(calls) == 5
    calls.clear()
    fit_forest(RandomForestClassifier(random_state=0, n_jobs=1, n_estimators=7), X, y)
    assert calls == []  # the lean path, with its own tree count
