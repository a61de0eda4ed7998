"""Privacy accountants: pure functions over what a generator did.

``pate``: the PATE moments accountant, correct (``fixed``) and faithful variants;
``closed_form``: the data-independent regime (eps_hat as a function of query count);
``accountant``: the registry and a thin stateful accountant for batched training.
"""

from raudit.accountants.accountant import MOMENTS, MomentsAccountant, get
from raudit.accountants.closed_form import (
    eps_data_independent,
    iterations_to_reach,
    queries_to_reach,
)
from raudit.accountants.pate import (
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
    "MOMENTS",
    "MomentsAccountant",
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
