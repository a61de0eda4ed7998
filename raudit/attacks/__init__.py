"""Membership-inference attacks: the threat model's context, feature sets, the shadow
classifier and the attack registry, and target selection.

Everything here is a pure function of DataFrames and arrays; the game that trains
generators and splits shadow models lives in :mod:`raudit.audit`.
"""

from raudit.attacks.classifier import ATTACKS, Attack, fit_attack, get, resolve, score
from raudit.attacks.features import FEATURE_SETS, AttackContext, extract, extract_many
from raudit.attacks.targets import outlier_candidates, outlier_scores

__all__ = ["ATTACKS", "Attack", "AttackContext", "FEATURE_SETS", "extract", "extract_many",
           "fit_attack",
           "get", "outlier_candidates", "outlier_scores", "resolve", "score"]
