"""Which record to attack: a given row, the worst case's planted one, or the study's mini-MIAs.

``--target auto`` follows the study's average case: the ``candidates`` records
with the highest outlier score (:func:`raudit.attacks.outlier_candidates`, 64 by
default) each get a small game of ``pairs`` in/out shadow-model pairs (100 by
default) run through the same chunks and engine as the audit; the first half of
the pairs trains the attack classifier, the second half scores it, and the
candidate with the highest AUC is the target (ties: the more outlying one).
The mini-MIAs' rows live in their own store (``OUT/target-selection``), so an
interrupted selection resumes like the audit does.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from raudit.attacks import outlier_candidates
from raudit.audit.analyse import attack_scores, ok_rows
from raudit import seeds
from raudit.audit.game import Game, derive_seed, find_target, trials
from raudit.errors import ConfigError

SELECTION_STREAM = seeds.SELECTION  # the mini-MIAs' seed stream (0 is the game's)


def resolve(requested: str | None, train: pd.DataFrame, notes: dict, dataset: str) -> Any:
    """``"auto"``, or the target row for ``worst-case`` / a row id (ConfigError otherwise).

    The default (None) is the dataset's planted target if it has one, else auto.
    """
    if requested is None:
        requested = "worst-case" if "target_row" in notes else "auto"
    if requested == "auto":
        return "auto"
    if requested == "worst-case":
        if "target_row" not in notes:
            raise ConfigError(f"--target worst-case needs a dataset with a planted target "
                              f"(the `worst-case` dataset); {dataset} has none: use auto or a row id")
        return find_target(train, notes["target_row"], dataset)
    return find_target(train, requested, dataset)


def check_settings(candidates: int, pairs: int) -> None:
    if candidates < 1:
        raise ConfigError(f"--target-candidates must be at least 1, got {candidates}")
    if pairs < 4:
        raise ConfigError(f"--target-pairs must be at least 4 (half train, half test), got {pairs}")


def candidates_of(train: pd.DataFrame, n: int) -> list[Any]:
    """Index labels of the ``n`` most outlying records, most outlying first."""
    return [train.index[i] for i in outlier_candidates(train, n=min(n, len(train)))]


def candidate_game(game: Game, row: Any) -> Game:
    return dataclasses.replace(game, target=row.item() if hasattr(row, "item") else row)


def selection_trials(game: Game, pairs: int) -> dict[str, list[dict]]:
    """The mini-MIA trials of one candidate's game, per world (first half train, rest test)."""
    half = pairs // 2
    return {w: trials(game, world=w, count=pairs, stream=SELECTION_STREAM,
                      split=lambda i: "train" if i < half else "test")
            for w in ("out", "in")}


def candidate_auc(shadow: pd.DataFrame, trial_ids: set[str], seed: int) -> float:
    """The mini-MIA's test AUC from its rows; NaN if a split lacks a world."""
    from sklearn.metrics import roc_auc_score

    df = ok_rows(shadow, trial_ids)
    train, test = df[df["split"] == "train"], df[df["split"] == "test"]
    for part in (train, test):
        if part["world"].nunique() < 2:
            return math.nan
    scores, labels = attack_scores(train, {"test": test}, derive_seed(seed, seeds.AUC) % 2**32)["test"]
    return float(roc_auc_score(labels, scores))


def choose(aucs: Sequence[tuple[Any, float]]) -> tuple[Any, float]:
    """The (row, auc) with the highest AUC; earlier (more outlying) rows win ties."""
    best = None
    for row, auc in aucs:
        if not math.isnan(auc) and (best is None or auc > best[1]):
            best = (row, auc)
    if best is None:
        raise ConfigError("target selection failed: no candidate's mini-MIA produced an AUC "
                          "(every shadow model failed?); give --target ROWID")
    return best
