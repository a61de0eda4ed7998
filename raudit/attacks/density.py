"""The density-ratio membership score (DOMIAS, van Breugel et al. 2023).

A generator that memorises puts more synthetic mass near its training rows than the
population has there, so the score of the target is

    log p_syn(target) - log p_ref(target)

with p_syn a density fitted on the synthetic rows and p_ref one fitted on a reference
sample of the population that is disjoint from the training data
(``AttackContext.holdout`` of :mod:`raudit.attacks.features`: the dataset's test split
less any row equal to a training row). Both are scikit-learn Gaussian kernel density
estimates on the same standardized columns (the attacker's reference table's mean and
standard deviation), each with Scott's bandwidth rule ``n ** (-1 / (d + 4))`` for its
own row count. A kernel density estimate has no randomness, so the score is a
deterministic function of the synthetic table and the context.

In raudit's game the target is one fixed record, so log p_ref(target) is one number per
audit: it shifts every shadow model's score alike and the attack's ranking of them is
that of p_syn(target). With no reference rows (the worst case, whose test split is a
copy of its training data) the score is log p_syn(target) alone.
"""

from __future__ import annotations

import math

import numpy as np


def standardize(x: np.ndarray, center: np.ndarray, scale: np.ndarray) -> np.ndarray:
    """``(x - center) / scale`` column by column (``scale`` already has no zeros)."""
    return (np.asarray(x, dtype=float) - center) / scale


def log_density(rows: np.ndarray, at: np.ndarray) -> float:
    """log of the Gaussian kernel density of ``rows`` (n, d), Scott's bandwidth, at the
    point ``at`` (d,); rows holding a NaN are left out. NaN when no row is left."""
    from sklearn.neighbors import KernelDensity

    rows = np.asarray(rows, dtype=float)
    rows = rows[np.isfinite(rows).all(axis=1)] if rows.ndim == 2 else np.zeros((0, 0))
    if len(rows) == 0 or not np.isfinite(at).all():
        return math.nan
    kde = KernelDensity(kernel="gaussian", bandwidth="scott").fit(rows)
    return float(kde.score_samples(np.asarray(at, dtype=float)[None, :])[0])


def reference_log_density(holdout: np.ndarray | None, target: np.ndarray) -> float:
    """log p_ref(target) of the standardized ``holdout`` at the standardized ``target``
    (0.0 without reference rows, so the score is log p_syn(target); module docstring)."""
    if holdout is None or len(holdout) == 0:
        return 0.0
    value = log_density(holdout, target)
    return 0.0 if math.isnan(value) else value


def score(synthetic: np.ndarray, target: np.ndarray, log_ref: float) -> float:
    """log p_syn(target) - log p_ref(target), from the standardized synthetic rows (n, d),
    the standardized target and log p_ref(target); NaN when no synthetic row is complete."""
    return log_density(synthetic, target) - log_ref
