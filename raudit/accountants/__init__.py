"""Privacy accountants: events in, eps(delta) out.

The events they consume are :mod:`raudit.events`' privacy events; ``accountant``: the event-typed accountant registry and the PATE
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
    "Accountant",
    "VARIANTS",
    "PateMomentsAccountant",
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
