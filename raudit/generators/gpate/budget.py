"""What one G-PATE step costs before any vote is cast: can a run take a step at all?

G-PATE stops before a step whose eps would exceed the budget, so at a small eps (or on a
small table, where sigma = 0.75 k and 0.25 k are small) it can end with 0 iterations and
a generator that is its random initialisation. These bounds are functions of the
configuration only (never of the records), so they can be checked and printed before
training:

* ``floor``: a lower bound on the cost of the FIRST step whatever the votes. Every one of
  the step's Q = batch x k_proj queries pays the threshold check, whose data-dependent
  RDP depends on the votes only through t = round(max(counts)), an integer in
  [ceil(k / bins), k]; the pointwise minimum over t of that curve, times Q, under-runs
  any possible step (GNMax answers only add). Below ``floor`` no data can buy a step.
* ``guaranteed``: the data-independent cost of one step with every query answered, an
  upper bound on the data-dependent one (``rdp_gnmax`` never exceeds the
  data-independent curve): from ``guaranteed`` on, the first step is always taken.

Between the two, whether a step is taken depends on the votes (the known, unsanitised
data-dependent release: see :mod:`raudit.accountants.gnmax`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from raudit.accountants.gnmax import (DEFAULT_ORDERS, eps_from_rdp, logpr_answered,
                                      rdp_gnmax_independent, rdp_threshold,
                                      rdp_threshold_independent)


_BLOCK = 4096  # top counts per block of the floor's minimum (memory, not numbers)


@dataclass(frozen=True)
class StepCost:
    """eps of one step: below ``floor`` never affordable, from ``guaranteed`` always."""

    queries: int
    floor: float
    guaranteed: float


def threshold_floor_rdp(k: int, bins: int, threshold: float, sigma1: float, orders,
                        data_dependent: bool = True) -> np.ndarray:
    """Pointwise minimum over the possible top counts t of one threshold check's RDP (L,)."""
    if not data_dependent:
        return rdp_threshold_independent(sigma1, orders)
    tops = np.arange(math.ceil(k / bins), k + 1, dtype=np.float64)
    best = np.full(len(orders), np.inf)
    for start in range(0, tops.size, _BLOCK):  # blocks: k can be large (smallest_teachers)
        block = tops[start:start + _BLOCK]
        hist = np.zeros((block.size, bins))
        hist[:, 0] = block  # only the max matters to the threshold's bound
        curves = rdp_threshold(logpr_answered(hist, threshold, sigma1), sigma1, orders)  # (T, L)
        best = np.minimum(best, curves.min(axis=0))
    return best


def step_cost(*, k: int, queries: int, bins: int, threshold: float, sigma1: float,
              sigma2: float, delta: float, orders=None, data_dependent: bool = True) -> StepCost:
    """The floor and the guaranteed eps of one step of ``queries`` Confident-GNMax queries."""
    o = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=np.float64)
    floor = queries * threshold_floor_rdp(k, bins, threshold, sigma1, o, data_dependent)
    full = queries * (rdp_threshold_independent(sigma1, o) + rdp_gnmax_independent(sigma2, o))
    return StepCost(queries, float(eps_from_rdp(floor, o, delta)),
                    float(eps_from_rdp(full, o, delta)))


def smallest_teachers(epsilon: float, cost_of_k, k_now: int, k_max: int = 10**5) -> int | None:
    """The smallest k >= k_now whose step floor is <= eps, for a configuration whose noise
    scales with k (``cost_of_k(k) -> StepCost``); None if even ``k_max`` is not enough
    (10^5 teachers: tables of over a million rows, where naming a size helps nobody).
    The floor falls as k grows (sigma proportional to k), so doubling then bisection."""
    if cost_of_k(k_now).floor <= epsilon:
        return k_now
    lo, hi = k_now, k_now * 2
    while cost_of_k(hi).floor > epsilon:
        lo, hi = hi, hi * 2
        if hi > k_max:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if cost_of_k(mid).floor <= epsilon else (mid, hi)
    return hi
