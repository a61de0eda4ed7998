"""The classifier registry: the study's 12, each scoring path, single-class and NaN scores,
and the attack's forest unchanged."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.ensemble import RandomForestClassifier
from sklearn.svm import LinearSVC
from xgboost import XGBRegressor

from raudit import classifiers
from raudit.attacks.classifier import fit_attack
from raudit.classifiers.base import Classifier, fit_score
from raudit.errors import UnknownNameError
from raudit.utility.metrics import auprc, auroc


def _data(n=240, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.uniform(size=(n, d))
    X[:, :2] = X[:, :2] > 0.5  # binary features (BernoulliNB binarises at 0: needs zeros)
    y = (X[:, 0] + 0.5 * X[:, 1] + 0.3 * X[:, 2] + 0.2 * rng.normal(size=n) > 0.8).astype(int)
    return X[:160], y[:160], X[160:], y[160:]


def test_registry_holds_the_study_12_in_table_order():
    assert classifiers.STUDY_12 == ("lr", "rf", "gnb", "bnb", "linear-svm", "dt", "lda",
                                    "adaboost", "bagging", "gbm", "mlp", "xgboost")
    assert classifiers.MNIST_2 == ("lr", "rf")
    assert set(classifiers.STUDY_12) | {"attack-rf"} == set(classifiers.names())
    with pytest.raises(UnknownNameError, match="linear-svm"):
        classifiers.get("svm")


@pytest.mark.parametrize("name", classifiers.STUDY_12)
def test_each_classifier_scores_a_learnable_problem(name):
    Xtr, ytr, Xte, yte = _data()
    s, info = classifiers.get(name).fit_score(Xtr, ytr, Xte, seed=3)
    assert s.shape == (len(Xte),) and np.isfinite(s).all()
    assert info == {"single_class": False, "nan_scores": 0}
    assert auroc(yte, s) > 0.75  # every one of them learns x0 + x1/2 + 0.3 x2 > 0.8
    again, _ = classifiers.get(name).fit_score(Xtr, ytr, Xte, seed=3)
    np.testing.assert_array_equal(s, again)  # seeded


def test_scoring_paths_match_the_spec():
    Xtr, ytr, Xte, _ = _data()
    svm, _ = classifiers.get("linear-svm").fit_score(Xtr, ytr, Xte, seed=5)
    ref = LinearSVC(max_iter=10000, random_state=5).fit(Xtr, ytr).decision_function(Xte)
    np.testing.assert_allclose(svm, ref)
    xgb, _ = classifiers.get("xgboost").fit_score(Xtr, ytr, Xte, seed=5)
    ref = XGBRegressor(random_state=5, n_jobs=1).fit(Xtr, ytr).predict(Xte)
    np.testing.assert_allclose(xgb, ref)
    assert classifiers.get("xgboost").score == "predict"
    rf, _ = classifiers.get("rf").fit_score(Xtr, ytr, Xte, seed=5)
    ref = RandomForestClassifier(random_state=5, n_jobs=1).fit(Xtr, ytr).predict_proba(Xte)[:, 1]
    np.testing.assert_allclose(rf, ref)
    others = set(classifiers.STUDY_12) - {"linear-svm", "xgboost"}
    assert {classifiers.get(n).score for n in others} == {"proba"}
    lr = classifiers.get("lr").build(1)
    assert lr.max_iter == 2000 and classifiers.get("mlp").build(1).max_iter == 1000


def test_single_class_training_labels_score_constant():
    Xtr, _, Xte, yte = _data()
    s, info = classifiers.get("gbm").fit_score(Xtr, np.zeros(len(Xtr)), Xte, seed=0)
    assert info["single_class"] and np.unique(s).size == 1
    assert auroc(yte, s) == 0.5
    assert auprc(yte, s) == pytest.approx(yte.mean())  # the prevalence


class _NanModel:
    classes_ = np.array([0, 1])

    def fit(self, X, y):
        return self

    def predict_proba(self, X):
        p = np.linspace(0.1, 0.9, len(X))
        p[::3] = np.nan
        return np.column_stack([1 - p, p])


def test_nan_scores_are_replaced_by_the_mean_of_the_finite_ones():
    Xtr, ytr, Xte, _ = _data()
    c = Classifier("nan", "NaN", lambda s: _NanModel())
    s, info = fit_score(c, Xtr, ytr, Xte, seed=0)
    p = np.linspace(0.1, 0.9, len(Xte))
    keep = np.ones(len(Xte), bool)
    keep[::3] = False
    assert info["nan_scores"] == (~keep).sum()
    np.testing.assert_allclose(s[keep], p[keep])
    np.testing.assert_allclose(s[~keep], p[keep].mean())


def test_attack_forest_is_the_registered_one_and_unchanged():
    X, y, _, _ = _data()
    model = fit_attack(X, y, seed=11)
    ref = RandomForestClassifier(random_state=11, n_jobs=1).fit(X, y)
    assert model.get_params() == ref.get_params()
    np.testing.assert_array_equal(model.predict_proba(X), ref.predict_proba(X))
