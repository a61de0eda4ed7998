"""One-run audits at black-box level: m canaries in ONE training run, scored on its
synthetic data (Steinke, Nasr & Jagielski 2023; the bound: :mod:`raudit.audit.one_run`).

The design:

* canaries: the m most outlying training rows (:func:`raudit.attacks.targets.outlier_candidates`,
  the records a generator is likeliest to leak); the other rows are the base, always in;
* each canary is in with probability 1/2 (S_i = +1), drawn from the audit's seed; the
  generator is fitted once on base + the canaries that are in, and samples as many
  rows as it was trained on;
* the score needs no shadow model (there is one run): the distance from the canary to
  its nearest base row minus the distance to its nearest synthetic row, in the
  min-max scale of the training table. A canary the generator reproduces is close to
  a synthetic row; subtracting its distance to the base corrects for canaries that
  sit in dense regions, which any synthetic data comes close to;
* guesses: "in" for the k highest scores and "out" for the k lowest, eps_lo maximised
  over five k at beta / 5 each (:func:`raudit.audit.one_run.best_one_run`).

The guarantee is the theorem's: whatever the scores, under pure eps-DP the correct
guesses are dominated by Binomial(r, e^eps / (1 + e^eps)); for a delta > 0 claim the
bound is an estimate (the delta term is not implemented), labelled so.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.neighbors import NearestNeighbors

from raudit import generators
from raudit.attacks.targets import outlier_candidates
from raudit.audit.one_run import best_one_run
from raudit.errors import ConfigError

__all__ = ["canary_design", "canary_scores", "check_canaries", "one_run_black_box"]


def check_canaries(canaries: int, rows: int) -> None:
    """One line before any work: 2 <= canaries <= training rows."""
    if canaries < 2:
        raise ConfigError(f"--canaries must be at least 2, got {canaries}")
    if canaries > rows:
        raise ConfigError(f"--canaries {canaries} is more than the {rows} training rows: every "
                          "canary is a record of the data")


def canary_design(table: pd.DataFrame, canaries: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """(canary row positions, inclusion +1/-1 per canary)."""
    check_canaries(canaries, len(table))
    rows = np.array(outlier_candidates(table, n=canaries), dtype=np.int64)
    inclusion = np.where(np.random.default_rng(seed).random(canaries) < 0.5, 1, -1)
    return rows, inclusion


def _scaled(table: pd.DataFrame, ref: pd.DataFrame) -> np.ndarray:
    x = table.reindex(columns=ref.columns).to_numpy(dtype=float, na_value=np.nan, copy=True)
    r = ref.to_numpy(dtype=float, na_value=np.nan)
    with np.errstate(all="ignore"):
        lo, hi = np.nanmin(r, axis=0), np.nanmax(r, axis=0)
    span = np.where(hi > lo, hi - lo, 1.0)
    return np.nan_to_num((x - np.nan_to_num(lo)) / span, nan=0.0)


def _nearest(points: np.ndarray, rows: np.ndarray) -> np.ndarray:
    if len(rows) == 0:
        return np.zeros(len(points))
    return NearestNeighbors(n_neighbors=1).fit(rows).kneighbors(points)[0][:, 0]


def canary_scores(table: pd.DataFrame, rows: np.ndarray, synth: pd.DataFrame) -> np.ndarray:
    """Per canary: distance to the nearest base row minus distance to the nearest
    synthetic row (min-max scale of ``table``): high = the synthetic data reproduces it."""
    base = np.setdiff1d(np.arange(len(table)), rows)
    x = _scaled(table, table)
    return _nearest(x[rows], x[base]) - _nearest(x[rows], _scaled(synth, table))


def one_run_black_box(impl: str, options: dict, table: pd.DataFrame, columns, *,
                      canaries: int, epsilon: float, delta: float | None, seed: int,
                      beta: float = 0.05) -> dict:
    """Fit ``impl`` once on base + the canaries that are in; score; Steinke et al.'s bound.

    Returns best_one_run's keys plus ``trained_rows`` and ``synthetic_rows``."""
    rows, inclusion = canary_design(table, canaries, seed)
    keep = np.ones(len(table), dtype=bool)
    keep[rows[inclusion == -1]] = False
    train = table.iloc[np.flatnonzero(keep)].reset_index(drop=True)
    gen = generators.get(impl)(**dict(options))
    gen.fit(train, epsilon=float(epsilon), delta=delta, seed=int(seed), columns=columns)
    synth = gen.sample(len(train), seed=int(seed))
    scores = canary_scores(table, rows, synth)
    return {**best_one_run(scores, inclusion, beta=beta), "trained_rows": int(len(train)),
            "synthetic_rows": int(len(synth))}
