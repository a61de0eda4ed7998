"""Counting queries for the querybased attack (Houssiau et al. 2022), vectorised.

A query is a conjunction ``col_1 == t_1 and ... and col_k == t_k`` over a subset of
the columns, where ``t`` is the TARGET's record. Its feature is the number of
synthetic rows that satisfy it. How a value "equals" the target's depends on
the column:

* discrete columns (every value integral, or at most ``bins`` distinct values in
  the reference data plus the target): exact match, up to a float tolerance of
  ``1e-6 * max(1, |value|)`` (generators that emit float32 for integer columns
  still match); a value that is no known level matches nothing.
* continuous columns: same bin, with ``bins`` equal-width bins over the range of
  the reference data plus the target; values outside the range fall in the end
  bins.

Each value is first encoded as a small integer code (its level or bin; -1 for NaN
or unknown values), so a query is a comparison of codes. The target's own values
are always levels, so its codes are >= 0 unless it has a NaN, in which case that
column matches the synthetic NaN (and unknown) values. Two modes:

* ``exact-points``: when the product of the columns' numbers of codes is at most
  ``max_points`` (1,024), every point of the grid is one query over ALL columns,
  in C order (the last column varies fastest). For the study's worst case (three
  0/1 columns) these are the 8 points of {0,1}^3 in the order 000, 001, ..., 111.
  These features do not depend on the target beyond the levels it adds.
* ``sampled``: otherwise ``n_queries`` column subsets are drawn once, with a
  numpy Generator seeded by ``seed``, each of a size drawn uniformly from 1..d,
  and matched against the target's values.

The plan is built once per audit (:func:`build_plan`) so that every synthetic
dataset is scored with the same queries.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from raudit.errors import ConfigError

QueryMode = Literal["exact-points", "sampled"]


@dataclass(frozen=True, eq=False)
class QueryPlan:
    """Fixed queries over the columns of the reference table."""

    mode: QueryMode
    levels: tuple[np.ndarray | None, ...]  # per column: sorted levels, or None if binned
    lower: np.ndarray  # (d,) bin range of binned columns
    upper: np.ndarray  # (d,)
    bins: int
    target_codes: np.ndarray  # (d,) the target's code in each column
    mask: np.ndarray  # (Q, d) bool: the columns of each sampled query (empty in exact mode)

    @property
    def sizes(self) -> np.ndarray:
        """Number of codes of each column."""
        return np.array([self.bins if lv is None else len(lv) for lv in self.levels],
                        dtype=np.int64)

    @property
    def n_features(self) -> int:
        return int(np.prod(self.sizes)) if self.mode == "exact-points" else len(self.mask)


def nearest_level(x: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """Index of the level each value equals (within tolerance), -1 if none or NaN."""
    out = np.full(x.shape, -1, dtype=np.int64)
    if len(levels) == 0:
        return out
    right = np.clip(np.searchsorted(levels, x), 0, len(levels) - 1)
    left = np.clip(right - 1, 0, len(levels) - 1)
    with np.errstate(invalid="ignore"):
        pick = np.where(np.abs(levels[left] - x) <= np.abs(levels[right] - x), left, right)
        ok = np.abs(levels[pick] - x) <= 1e-6 * np.maximum(1.0, np.abs(levels[pick]))
    out[ok] = pick[ok]
    return out


def bin_index(x: np.ndarray, lo: float, hi: float, bins: int) -> np.ndarray:
    """Equal-width bin of each value over [lo, hi], clipped into the end bins; -1 for NaN."""
    out = np.full(x.shape, -1, dtype=np.int64)
    finite = np.isfinite(x)
    width = (hi - lo) if hi > lo else 1.0
    idx = np.floor((x[finite] - lo) / width * bins)
    out[finite] = np.clip(idx, 0, bins - 1).astype(np.int64)
    return out


def _is_discrete(values: np.ndarray, bins: int) -> bool:
    return len(values) <= bins or bool(np.all(np.mod(values, 1) == 0))


def build_plan(reference: pd.DataFrame, target: pd.Series, *, bins: int = 5,
               n_queries: int = 256, max_points: int = 1024, seed: int = 0) -> QueryPlan:
    """The queries for ``target`` given the attacker's reference table (see module doc)."""
    if bins < 1 or n_queries < 1 or max_points < 1:
        raise ConfigError(f"bins, n_queries and max_points must be >= 1, got {bins}, "
                          f"{n_queries}, {max_points}")
    ref = reference.to_numpy(dtype=float)  # read-only use
    t = target.reindex(reference.columns).to_numpy(dtype=float)
    d = ref.shape[1]
    levels: list[np.ndarray | None] = []
    lower, upper = np.zeros(d), np.zeros(d)
    for j in range(d):
        col = np.concatenate([ref[:, j], t[j:j + 1]])
        col = col[np.isfinite(col)]
        uniq = np.unique(col)
        if _is_discrete(uniq, bins):
            levels.append(uniq)
        else:
            levels.append(None)
            lower[j], upper[j] = uniq[0], uniq[-1]
    plan = QueryPlan("exact-points", tuple(levels), lower, upper, bins,
                     np.zeros(d, dtype=np.int64), np.zeros((0, d), dtype=bool))
    codes = encode(plan, t[None, :])[0]
    # Python ints: the product of many column sizes overflows int64.
    points = 1
    for s in plan.sizes.tolist():
        points *= max(int(s), 1)
    if d and points <= max_points and np.all(plan.sizes > 0):
        return QueryPlan("exact-points", plan.levels, lower, upper, bins, codes, plan.mask)
    rng = np.random.default_rng(seed)
    mask = np.zeros((n_queries, d), dtype=bool)
    for q in range(n_queries):
        size = rng.integers(1, d + 1) if d else 0
        mask[q, rng.choice(d, size=size, replace=False)] = True
    return QueryPlan("sampled", plan.levels, lower, upper, bins, codes, mask)


def encode(plan: QueryPlan, x: np.ndarray) -> np.ndarray:
    """(n, d) values -> (n, d) int codes (-1: matches no level)."""
    codes = np.empty(x.shape, dtype=np.int64)
    for j, lv in enumerate(plan.levels):
        codes[:, j] = (bin_index(x[:, j], plan.lower[j], plan.upper[j], plan.bins)
                       if lv is None else nearest_level(x[:, j], lv))
    return codes


def count(plan: QueryPlan, x: np.ndarray) -> np.ndarray:
    """Number of rows of ``x`` (n, d) matching each query; float vector of fixed length."""
    if len(x) == 0:
        return np.zeros(plan.n_features)
    codes = encode(plan, x)
    if plan.mode == "exact-points":
        valid = np.all(codes >= 0, axis=1)
        flat = np.ravel_multi_index(codes[valid].T, tuple(plan.sizes.tolist()))
        return np.bincount(flat, minlength=plan.n_features).astype(float)
    # A row satisfies a query iff it mismatches the target in none of its columns.
    mismatch = (codes != plan.target_codes).astype(np.float64)
    misses = mismatch @ plan.mask.T.astype(np.float64)
    return (misses == 0).sum(axis=0).astype(float)
