"""Target candidates for the average-case audit: the records farthest from the rest.

The study picks its target by "mini-MIAs" over 64 candidates chosen by an
outlier score; this module computes the candidates (the mini-MIA loop, which
trains generators, lives with the audit).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from raudit.errors import ConfigError, DataError


def minmax_scale(table: pd.DataFrame) -> np.ndarray:
    """Scale every column to [0, 1]; constant columns become 0, NaN becomes 0 (the minimum)."""
    x = table.to_numpy(dtype=float, na_value=np.nan, copy=True)
    x[~np.isfinite(x)] = np.nan
    with np.errstate(all="ignore"):
        lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    scaled = (x - np.nan_to_num(lo)) / span
    return np.nan_to_num(scaled, nan=0.0)


def outlier_scores(table: pd.DataFrame, *, k: int = 5) -> np.ndarray:
    """Mean Euclidean distance of each min-max-scaled record to its k nearest neighbours.

    The record itself is not its own neighbour (an exact duplicate is, at distance
    0). With fewer than k other records, all of them are used; a single record
    scores 0.
    """
    if k < 1:
        raise ConfigError(f"k must be >= 1, got {k}")
    non_numeric = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if non_numeric:
        raise DataError(f"non-numeric columns {non_numeric[:5]}; encode them first")
    n = len(table)
    if n < 2:
        return np.zeros(n)
    x = minmax_scale(table)
    k = min(k, n - 1)
    # kneighbors() without X leaves each point out of its own neighbours (and handles
    # more duplicates than k correctly). Every algorithm sklearn picks is exact.
    # imported here: the CLI imports this module to check its input, before Ray's
    # background start, which this import (about 0.8 CPU-s with scipy) would delay
    from sklearn.neighbors import NearestNeighbors

    nn = NearestNeighbors(n_neighbors=k).fit(x)
    dist, _ = nn.kneighbors()
    return dist.mean(axis=1)


def outlier_candidates(table: pd.DataFrame, n: int = 64, k: int = 5) -> list[int]:
    """Row positions of the ``n`` records with the highest outlier score, highest first.

    Scores are rounded to 12 decimals before ranking so that ties that differ only
    by float rounding are ties; ties go to the earlier row.
    """
    if n < 0:
        raise ConfigError(f"n must be >= 0, got {n}")
    scores = np.round(outlier_scores(table, k=k), 12)
    order = np.argsort(-scores, kind="stable")
    return [int(i) for i in order[:n]]
