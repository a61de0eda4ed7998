"""Membership-inference attacks: the threat model's context, feature sets, the shadow
classifier and the attack registry, and target selection.

Everything here is a pure function of DataFrames and arrays; the game that trains
generators and splits shadow models lives in :mod:`raudit.audit`.

The names below are imported on first use (PEP 562): a chunk process that only
extracts features (:mod:`raudit.audit.chunk`) never loads the classifier module and
scikit-learn with it, about a CPU-second of start-up per Ray actor.
"""

from __future__ import annotations

import importlib
from typing import Any

_HOMES = {
    "ATTACKS": "classifier", "Attack": "classifier", "fit_attack": "classifier",
    "get": "classifier", "resolve": "classifier", "score": "classifier",
    "FEATURE_SETS": "features", "AttackContext": "features", "extract": "features",
    "extract_many": "features",
    "outlier_candidates": "targets", "outlier_scores": "targets",
}

__all__ = ["ATTACKS", "Attack", "AttackContext", "FEATURE_SETS", "extract", "extract_many",
           "fit_attack",
           "get", "outlier_candidates", "outlier_scores", "resolve", "score"]


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
