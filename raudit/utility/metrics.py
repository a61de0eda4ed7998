"""Scores to metrics, and the study's aggregations (all pure functions, hand-checkable).

* :func:`auroc` / :func:`auprc`: scikit-learn's, defined when the test labels have
  both classes (NaN otherwise: a synthetic test split of Setting C can be single-class).
* :func:`best_then_average`: per classifier the BEST value over fits x samples, then
  the mean over classifiers (the study's headline, its tables 4 and 5).
* :func:`mean_se`: mean and standard error over the fits x samples (its figure 8).
* :func:`drop`: (reference - ours) / (reference - 0.5), the study's "AUROC drop".
* :func:`sra`: Synthetic Ranking Agreement (PATE-GAN paper, eq. 8).
* :func:`label_correlations` + :func:`sra` give the feature-ranking agreement
  (paper, appendix table 6).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.metrics import average_precision_score, roc_auc_score


def _both_classes(y: np.ndarray) -> bool:
    return np.unique(y).size == 2


def auroc(y_true, scores) -> float:
    y = np.asarray(y_true).astype(int).ravel()
    return float(roc_auc_score(y, scores)) if _both_classes(y) else math.nan


def auprc(y_true, scores) -> float:
    y = np.asarray(y_true).astype(int).ravel()
    return float(average_precision_score(y, scores)) if _both_classes(y) else math.nan


METRICS = {"auroc": auroc, "auprc": auprc}


def best_then_average(df: pd.DataFrame, by: Sequence[str] = ()) -> pd.DataFrame:
    """Rows (classifier, value, + ``by``) -> per ``by`` group: ``best`` (mean over
    classifiers of each classifier's max), ``classifiers`` counted. NaN values are
    ignored by the max; a classifier with none left is dropped."""
    by = list(by)
    per = df.groupby(by + ["classifier"], dropna=False)["value"].max().dropna().reset_index()
    if not by:
        return pd.DataFrame({"best": [per["value"].mean()], "classifiers": [len(per)]})
    out = per.groupby(by, dropna=False)["value"].agg(["mean", "size"]).reset_index()
    return out.rename(columns={"mean": "best", "size": "classifiers"})


def mean_se(values) -> tuple[float, float]:
    """Mean and standard error (sample sd / sqrt n) of the finite values; se NaN if n < 2."""
    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan
    se = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return float(v.mean()), se


def drop(ours: float, reference: float) -> float:
    """The study's AUROC drop vs a reference: (reference - ours) / (reference - 0.5)."""
    if reference == 0.5:
        return math.nan
    return (reference - ours) / (reference - 0.5)


def sra(a, c) -> float:
    """Synthetic Ranking Agreement (PATE-GAN paper, eq. 8):
    1/(L(L-1)) * sum_j sum_{k != j} 1[(A_j - A_k)(C_j - C_k) > 0].

    ``a[i]`` and ``c[i]`` score the same model i in two settings; pairs where either
    is NaN are left out of the count and of L (ties count as disagreement, as the
    strict inequality says)."""
    a, c = np.asarray(a, dtype=float), np.asarray(c, dtype=float)
    if a.shape != c.shape:
        raise ValueError(f"SRA needs paired scores, got {a.shape} and {c.shape}")
    keep = np.isfinite(a) & np.isfinite(c)
    a, c = a[keep], c[keep]
    n = a.size
    if n < 2:
        return math.nan
    agree = ((a[:, None] - a[None, :]) * (c[:, None] - c[None, :])) > 0
    return float(agree.sum() / (n * (n - 1)))  # the diagonal is 0 > 0 = False


def label_correlations(table: pd.DataFrame) -> np.ndarray:
    """|Pearson correlation| of each feature with the label (last column); 0 where a
    column is constant (the correlation is undefined, and such a feature ranks last)."""
    x = table.to_numpy(dtype=float)
    feats, y = x[:, :-1], x[:, -1]
    fc = feats - feats.mean(axis=0)
    yc = y - y.mean()
    denom = np.sqrt((fc ** 2).sum(axis=0) * (yc ** 2).sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.where(denom > 0, (fc * yc[:, None]).sum(axis=0) / denom, 0.0)
    return np.abs(r)
