"""Privacy accountants: events in, eps(delta) out.

``events``: the privacy events generators emit (PATE votes, Gaussian steps, GNMax
steps, label noise); ``accountant``: the event-typed accountant registry and the PATE
moments accountant; ``gaussian``: Gaussian events through dp_accounting's RDP and PLD
accountants; ``pate``: the PATE moments variants as pure functions over vote counts
(paper + faithful-buggy + fixed); ``closed_form``: the data-independent regime.
"""

from raudit.accountants.accountant import (
    ACCOUNTANTS,
    Accountant,
    PateMomentsAccountant,
    accepting,
    create,
    get,
)
from raudit.accountants.closed_form import (
    eps_data_independent,
    iterations_to_reach,
    queries_to_reach,
)
from raudit.accountants.events import (
    ConfidentGNMax,
    GaussianStep,
    GNMaxAnswer,
    GNMaxThreshold,
    LabelNoise,
    PateVote,
    PrivacyEvent,
)
from raudit.accountants.pate import (
    VARIANTS,
    eps_from_moments,
    moments_fixed,
    moments_fixed_threshold,
    moments_missing_log,
    moments_paper,
    moments_synthcity,
    moments_updated,
    vote_gap_table,
)

__all__ = [
    "ACCOUNTANTS",
    "ConfidentGNMax",
    "Accountant",
    "GNMaxAnswer",
    "GNMaxThreshold",
    "GaussianStep",
    "LabelNoise",
    "VARIANTS",
    "PateMomentsAccountant",
    "PateVote",
    "PrivacyEvent",
    "accepting",
    "create",
    "eps_data_independent",
    "eps_from_moments",
    "get",
    "iterations_to_reach",
    "moments_fixed",
    "moments_fixed_threshold",
    "moments_missing_log",
    "moments_paper",
    "moments_synthcity",
    "moments_updated",
    "queries_to_reach",
    "vote_gap_table",
]
