"""Choosing a membership threshold on validation and bounding eps on test.

The study's protocol (EVALUATION.md section 3): every validation score is a candidate
threshold in both directions, the one maximising a count bound is kept, and the test
split's counts at that threshold give the reported bounds. :data:`COUNT_BOUNDS` names the
count bounds a threshold may be chosen to maximise; :func:`eps_ceiling` is the most a
bound can certify with a given number of trials.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from raudit.audit.bayes import eps_bayesian
from raudit.audit.epsilon import eps_clopper_pearson, eps_jeffreys
from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA
from raudit.registry import Registry

__all__ = ["COUNT_BOUNDS", "audit_bound", "choose_threshold", "eps_ceiling", "evaluate_threshold",
           "threshold_counts"]

#: The single-threshold count bounds f(tp, fn, tn, fp, delta, alpha) a threshold may be
#: chosen to maximise (choose_threshold's ``estimator``). What an audit reports is
#: raudit.audit.estimators.ESTIMATORS, whose cp/jeffreys/bayes entries call these.
#: f(tp, fn, tn, fp, *, delta, alpha) -> eps
CountBound = Callable[..., float]
COUNT_BOUNDS: Registry[CountBound] = Registry("count estimator")
COUNT_BOUNDS.register("cp", eps_clopper_pearson)
COUNT_BOUNDS.register("jeffreys", eps_jeffreys)
COUNT_BOUNDS.register("bayes", eps_bayesian)


def _estimator(name_or_fn: str | CountBound) -> CountBound:
    if callable(name_or_fn):
        return name_or_fn
    return COUNT_BOUNDS.get(name_or_fn)


def eps_ceiling(
    n_pos: int, n_neg: int, *, delta: float = STUDY_DELTA, alpha: float = 0.1, method: str = "cp"
) -> float:
    """The largest eps an estimator can certify with n_pos + n_neg trials: zero errors.

    For CP with n trials per class and one-sided tail beta = alpha/4:
    eps_max = log((beta^(1/n) - delta) / (1 - beta^(1/n))) ~ ln n - ln ln(1/beta);
    n = 100, 400, 1,000, 10,000, 100,000 -> 3.28, 4.68, 5.60, 7.91, 10.21.
    """
    return float(_estimator(method)(n_pos, 0, n_neg, 0, delta=delta, alpha=alpha))


# -------------------------------------------------------------------- thresholds

_DIRECTIONS = ("scores", "inverted")


def _prepare(scores: ArrayLike, labels: ArrayLike
             ) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    s = np.asarray(scores, dtype=np.float64).ravel()
    lab = np.asarray(labels).ravel()
    if s.shape != lab.shape or s.size == 0:
        raise ConfigError(
            "scores and labels must be non-empty and of equal length, "
            f"got {s.size} and {lab.size}"
        )
    if not np.all(np.isfinite(s)):
        raise ConfigError("scores must be finite (replace NaN scores before auditing)")
    if not np.all((lab == 0) | (lab == 1)):
        raise ConfigError("labels must be 0/1 (1 = the target was in the training data)")
    return s, lab.astype(bool)


def _oriented(scores: NDArray[np.float64], direction: str) -> NDArray[np.float64]:
    if direction not in _DIRECTIONS:
        raise ConfigError(f"direction must be 'scores' or 'inverted', got {direction!r}")
    return scores if direction == "scores" else 1.0 - scores


def _scan(scores: NDArray[np.float64], labels: NDArray[np.bool_]
          ) -> tuple[NDArray[np.float64], NDArray[np.intp], NDArray[np.intp], NDArray[np.intp],
                     NDArray[np.intp]]:
    """Counts for every candidate threshold t (the unique scores), predicting s >= t."""
    cand = np.unique(scores)
    pos, neg = np.sort(scores[labels]), np.sort(scores[~labels])
    tp = pos.size - np.searchsorted(pos, cand, side="left")
    fp = neg.size - np.searchsorted(neg, cand, side="left")
    return cand, tp, pos.size - tp, neg.size - fp, fp


def picked(best: tuple[float, float | None, str | None], bound: str) -> tuple[float, str]:
    """The (threshold, direction) a scan over the candidates kept. A bound that is NaN at
    every candidate keeps none: an error here, where the None used to reach a comparison
    further on as a TypeError."""
    _, threshold, direction = best
    if threshold is None or direction is None:
        raise ConfigError(f"the {bound} is NaN at every candidate threshold")
    return threshold, direction


def choose_threshold(val_scores: ArrayLike, val_labels: ArrayLike, *, delta: float = STUDY_DELTA,
                     alpha: float = 0.1, estimator: str | CountBound = "cp"
                     ) -> tuple[float, str]:
    """The (threshold, direction) maximising ``estimator`` on the validation counts.

    Every unique validation score is a candidate, predicting "in" when score >= t
    (direction "scores") or when 1 - score >= t (direction "inverted"; then t is a
    threshold on 1 - score). Choosing the direction here, on validation, is what
    makes the study's max over both directions on the test set unnecessary (it had
    no multiplicity correction; EVALUATION.md section 4). Ties go to "scores", then
    to the smallest threshold. ``estimator``: "cp", "jeffreys", "bayes" or a callable
    ``f(tp, fn, tn, fp, *, delta, alpha)``.
    """
    scores, labels = _prepare(val_scores, val_labels)
    fn_est = _estimator(estimator)
    best: tuple[float, float | None, str | None] = (-np.inf, None, None)
    for direction in _DIRECTIONS:
        cand, tp, fn, tn, fp = _scan(_oriented(scores, direction), labels)
        if fn_est in (eps_clopper_pearson, eps_jeffreys):  # vectorised
            vals = np.atleast_1d(fn_est(tp, fn, tn, fp, delta=delta, alpha=alpha))
        else:  # evaluate each distinct count tuple once
            table = np.stack([tp, fn, tn, fp], axis=1)
            uniq, inv = np.unique(table, axis=0, return_inverse=True)
            vals = np.array([fn_est(*map(int, row), delta=delta, alpha=alpha) for row in uniq])[inv.ravel()]
        i = int(np.argmax(vals))
        if vals[i] > best[0]:
            best = (float(vals[i]), float(cand[i]), direction)
    return picked(best, "estimator")


def evaluate_threshold(test_scores: ArrayLike, test_labels: ArrayLike, threshold: float,
                       direction: str = "scores") -> tuple[int, int, int, int]:
    """Counts (tp, fn, tn, fp) of predicting "in" when the oriented score >= threshold."""
    scores, labels = _prepare(test_scores, test_labels)
    pred = _oriented(scores, direction) >= threshold
    tp = int(np.sum(pred & labels))
    fp = int(np.sum(pred & ~labels))
    return tp, int(labels.sum()) - tp, int((~labels).sum()) - fp, fp


def audit_bound(
    val_scores: ArrayLike,
    val_labels: ArrayLike,
    test_scores: ArrayLike,
    test_labels: ArrayLike,
    *,
    delta: float = STUDY_DELTA,
    alpha: float = 0.1,
    estimator: str | CountBound = "cp",
) -> dict[str, Any]:
    """Threshold on validation, bound on test: the study's protocol (EVALUATION.md s. 3).

    Returns :func:`threshold_counts`'s keys, eps_cp, eps_jeffreys, eps_bayes and
    saturated (eps_cp at the ceiling). An audit reads every registered estimator
    instead (:func:`raudit.audit.analyse.bounds`).
    """
    out = threshold_counts(val_scores, val_labels, test_scores, test_labels, delta=delta,
                           alpha=alpha, estimator=estimator)
    tp, fn, tn, fp = out["tp"], out["fn"], out["tn"], out["fp"]
    eps_cp = eps_clopper_pearson(tp, fn, tn, fp, delta=delta, alpha=alpha)
    out.update(eps_cp=eps_cp, eps_jeffreys=eps_jeffreys(tp, fn, tn, fp, delta=delta, alpha=alpha),
               eps_bayes=eps_bayesian(tp, fn, tn, fp, delta=delta, alpha=alpha),
               saturated=bool(eps_cp >= out["eps_max"] - 1e-9))
    return out


def threshold_counts(val_scores: ArrayLike, val_labels: ArrayLike, test_scores: ArrayLike,
                     test_labels: ArrayLike, *, delta: float = STUDY_DELTA, alpha: float = 0.1,
                     estimator: str | CountBound = "cp") -> dict[str, Any]:
    """The threshold and direction chosen on validation and what they give on test: auc
    (roc_auc_score of the raw test scores; NaN with one class), threshold, direction,
    tp/fn/tn/fp, tpr, fpr and eps_max (the CP ceiling for these test counts)."""
    from sklearn.metrics import roc_auc_score  # slow import, only needed here

    threshold, direction = choose_threshold(
        val_scores, val_labels, delta=delta, alpha=alpha, estimator=estimator
    )
    tp, fn, tn, fp = evaluate_threshold(test_scores, test_labels, threshold, direction)
    scores, labels = _prepare(test_scores, test_labels)
    auc = float(roc_auc_score(labels, scores)) if 0 < labels.sum() < labels.size else float("nan")
    return {
        "auc": auc,
        "threshold": threshold,
        "direction": direction,
        "tp": tp,
        "fn": fn,
        "tn": tn,
        "fp": fp,
        "tpr": tp / (tp + fn) if tp + fn else float("nan"),
        "fpr": fp / (tn + fp) if tn + fp else float("nan"),
        "eps_max": eps_ceiling(tp + fn, tn + fp, delta=delta, alpha=alpha, method="cp"),
    }
