"""The classifier registry: the study's 12 utility classifiers and the attack's forest.

::

    from raudit import classifiers
    clf = classifiers.get("gbm")                 # a Classifier (name, label, build, score)
    s = clf.fit_score(X_train, y_train, X_test, seed=7)   # scores, higher = more positive

Every entry is a :class:`Classifier`: a seeded constructor and the way its score
is read (``predict_proba[:, 1]``, ``decision_function`` for LinearSVC, the raw
prediction for XGBRegressor, as the paper lists it). The hyperparameters are
those of the study (scikit-learn defaults, ``max_iter`` raised where it says so);
only ``random_state`` (the study fixes none) and ``n_jobs=1`` (the engine
parallelises over chunks, not inside one fit) are added. Entries are lazy
``module:attr`` strings so that importing this package does not import
scikit-learn or xgboost.
"""

from __future__ import annotations

from raudit.classifiers.base import Classifier, fit_score, single_class_scores
from raudit.registry import Registry

CLASSIFIERS: Registry[Classifier] = Registry("classifier")

_STUDY = {
    "lr": "LogisticRegression",
    "rf": "RandomForest",
    "gnb": "GaussianNB",
    "bnb": "BernoulliNB",
    "linear-svm": "LinearSVM",
    "dt": "DecisionTree",
    "lda": "LDA",
    "adaboost": "AdaBoost",
    "bagging": "Bagging",
    "gbm": "GBM",
    "mlp": "MLP",
    "xgboost": "XGBoost",
}
for _name, _attr in _STUDY.items():
    CLASSIFIERS.register(_name, f"raudit.classifiers.zoo:{_attr}")
CLASSIFIERS.register("attack-rf", "raudit.classifiers.zoo:AttackForest")

STUDY_12: tuple[str, ...] = tuple(_STUDY)  # the order of the study's table 5
MNIST_2: tuple[str, ...] = ("lr", "rf")  # the study's MNIST variant (its figure 10)


def get(name: str) -> Classifier:
    """The classifier registered as ``name`` (UnknownNameError lists the known ones)."""
    return CLASSIFIERS.get(name)


def names() -> list[str]:
    return CLASSIFIERS.names()


__all__ = ["CLASSIFIERS", "Classifier", "MNIST_2", "STUDY_12", "fit_score", "get", "names",
           "single_class_scores"]
