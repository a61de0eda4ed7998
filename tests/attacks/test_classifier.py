"""The shadow classifier and the attack registry."""

from __future__ import annotations

import numpy as np
import pytest

from raudit.attacks import classifier as clf
from raudit.errors import ConfigError, UnknownNameError


def separable(n: int = 100, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    y = np.repeat([0, 1], n)
    X = rng.normal(size=(2 * n, 3)) + 4.0 * y[:, None]
    return X, y


def test_fit_and_score_separate_the_worlds():
    X, y = separable()
    model = clf.fit_attack(X, y, seed=0)
    assert model.n_jobs == 1 and model.random_state == 0 and model.n_estimators == 100
    Xt, yt = separable(seed=1)
    p = clf.score(model, Xt)
    assert p.shape == (len(yt),) and ((p >= 0) & (p <= 1)).all()
    assert p[yt == 1].mean() > 0.9 and p[yt == 0].mean() < 0.1


def test_same_seed_same_scores():
    X, y = separable()
    a = clf.score(clf.fit_attack(X, y, 3), X[:10])
    b = clf.score(clf.fit_attack(X, y, 3), X[:10])
    np.testing.assert_array_equal(a, b)


def test_single_class_models_score_constantly():
    X = np.zeros((5, 2))
    assert (clf.score(clf.fit_attack(X, np.ones(5), 0), X) == 1.0).all()
    assert (clf.score(clf.fit_attack(X, np.zeros(5), 0), X) == 0.0).all()


def test_fit_rejects_bad_input():
    with pytest.raises(ConfigError, match="labels must be 0"):
        clf.fit_attack(np.zeros((2, 1)), np.array([0, 2]), 0)
    with pytest.raises(ConfigError, match="shape"):
        clf.fit_attack(np.zeros((3, 1)), np.array([0, 1]), 0)


def test_attack_registry():
    assert clf.get("groundhog").default_features == "naive"
    assert clf.resolve("groundhog") == (clf.ATTACKS.get("groundhog"), "naive")
    assert clf.resolve("groundhog", "ensemble")[1] == "ensemble"
    assert clf.resolve("querybased")[1] == "querybased"
    with pytest.raises(UnknownNameError, match="unknown attack 'tapas'; known: domias, "
                                               "ensemble, groundhog, querybased"):
        clf.get("tapas")
    with pytest.raises(ConfigError, match="attack 'querybased' takes the feature sets "
                                          "querybased; got 'naive'"):
        clf.resolve("querybased", "naive")
    with pytest.raises(ConfigError, match="naive, hist, corr, ensemble; got 'querybased'"):
        clf.resolve("groundhog", "querybased")


def test_every_allowed_feature_set_is_registered():
    from raudit.attacks.features import FEATURE_SETS
    for _, attack in clf.ATTACKS.items():
        assert attack.default_features in attack.features
        assert set(attack.features) <= set(FEATURE_SETS)
