"""A classifier entry: how to build it (seeded) and how to read its score."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from raudit.errors import ConfigError

SCORE_KINDS = ("proba", "decision", "predict")


@dataclass(frozen=True)
class Classifier:
    """``build(seed)`` returns an unfitted estimator; ``score`` says what ranks the rows:
    ``proba`` = predict_proba[:, class 1], ``decision`` = decision_function,
    ``predict`` = the (regression) prediction itself."""

    name: str
    label: str  # as the study's tables print it
    build: Callable[[int], Any]
    score: str = "proba"

    def __post_init__(self) -> None:
        if self.score not in SCORE_KINDS:
            raise ConfigError(f"classifier {self.name}: score must be one of {SCORE_KINDS}")

    def scores(self, model: Any, X: np.ndarray) -> np.ndarray:
        """The fitted ``model``'s score for each row of ``X`` (higher = class 1)."""
        if self.score == "decision":
            return np.asarray(model.decision_function(X), dtype=float).ravel()
        if self.score == "predict":
            return np.asarray(model.predict(X), dtype=float).ravel()
        proba = model.predict_proba(X)
        return np.asarray(proba[:, list(model.classes_).index(1)], dtype=float)

    def fit_score(self, X_train, y_train, X_test, *, seed: int) -> tuple[np.ndarray, dict]:
        """See :func:`fit_score`."""
        return fit_score(self, X_train, y_train, X_test, seed=seed)


def sk_seed(seed: int) -> int:
    """scikit-learn takes seeds below 2**32."""
    return int(seed) % 2**32


def single_class_scores(n: int) -> np.ndarray:
    """The score of a classifier trained on one class: a constant, so every test row
    ties (AUROC 0.5, AUPRC = the test prevalence)."""
    return np.full(n, 0.5)


def fit_score(clf: Classifier, X_train, y_train, X_test, *, seed: int
              ) -> tuple[np.ndarray, dict[str, Any]]:
    """Fit ``clf`` on (X_train, y_train) and score X_test.

    Returns ``(scores, info)``; ``info["single_class"]`` is True when the training
    labels had one class (no fit: constant scores, see :func:`single_class_scores`),
    ``info["nan_scores"]`` counts non-finite scores, which are replaced by the mean of
    the finite ones (a neutral rank in the middle: they neither help nor hurt the
    ranking of the others), or all by 0.5 when none is finite.
    """
    y = np.asarray(y_train).astype(int).ravel()
    X_test = np.asarray(X_test, dtype=float)
    info: dict[str, Any] = {"single_class": False, "nan_scores": 0}
    if np.unique(y).size < 2:
        info["single_class"] = True
        return single_class_scores(len(X_test)), info
    model = clf.build(sk_seed(seed)).fit(np.asarray(X_train, dtype=float), y)
    s = clf.scores(model, X_test)
    bad = ~np.isfinite(s)
    if bad.any():
        info["nan_scores"] = int(bad.sum())
        s = s.copy()
        s[bad] = float(s[~bad].mean()) if (~bad).any() else 0.5
    return s, info
