"""The Confident-GNMax RDP accountant over events (G-PATE's accountant).

``gnmax`` charges each :class:`ConfidentGNMax` event with the data-dependent bound of
:mod:`raudit.accountants.gnmax` (threshold on every query, GNMax on answered ones);
``gnmax-independent`` charges the data-independent curves, an upper bound of the former.
Both also take the vote-free :class:`GNMaxThreshold` / :class:`GNMaxAnswer` events,
which can only be charged data-independently. The state is an (M, L) RDP curve per
model; eps(delta) is min over orders of RDP + log(1/delta)/(alpha - 1).

``eps_if(event, delta)`` is eps after the event WITHOUT charging it: G-PATE computes a
step's votes, then stops before applying a step whose eps would exceed the budget.
"""

from __future__ import annotations

from typing import Union

import numpy as np
import numpy.typing as npt

from raudit.accountants.accountant import Accountant, _mask_of
from raudit.accountants.errors import DeltaError, EventShapeError, UnsupportedEventError
from raudit.events import ConfidentGNMax, GNMaxAnswer, GNMaxThreshold
from raudit.accountants.gnmax import (
    DEFAULT_ORDERS,
    eps_from_rdp,
    rdp_confident_gnmax,
    rdp_gnmax_independent,
    rdp_threshold_independent,
)
from raudit.errors import ConfigError

__all__ = ["ConfidentGNMaxAccountant", "IndependentGNMaxAccountant"]

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]
Bools = npt.NDArray[np.bool_]
GNMaxEvent = Union[ConfidentGNMax, GNMaxThreshold, GNMaxAnswer]
# models charged, the RDP increment (M, L), queries asked, queries answered (per model or all)
Increment = tuple[Bools, Floats, int, Union[Ints, int]]


class ConfidentGNMaxAccountant(Accountant):
    """Running RDP (models, orders) of Confident-GNMax queries."""

    events = (ConfidentGNMax, GNMaxThreshold, GNMaxAnswer)

    def __init__(self, models: int = 1, *, orders: npt.ArrayLike | None = None,
                 data_dependent: bool = True):
        super().__init__(models)
        o = DEFAULT_ORDERS if orders is None else np.asarray(orders, dtype=np.float64)
        if o.ndim != 1 or o.size == 0 or not np.all(o > 1):
            raise ConfigError(f"orders must be a non-empty list of numbers > 1, got {orders!r}")
        self.orders = o
        self.data_dependent = bool(data_dependent)
        self.rdp = np.zeros((self.models, o.size))
        self.queries = np.zeros(self.models, dtype=np.int64)
        self.answered = np.zeros(self.models, dtype=np.int64)
        # the last increments computed (see _increment)
        self._memo: tuple[tuple[float, float, float], Bools, Ints, Bools, Floats] | None = None

    @property
    def alpha(self) -> Floats:
        """The RDP curve per model (the name the moments accountants use for their state)."""
        return self.rdp

    def _dry_run(self, event: GNMaxEvent) -> Increment:
        mask = _mask_of(event, self.models)
        if isinstance(event, ConfidentGNMax):
            if event.models != self.models:
                raise EventShapeError(f"the event holds {event.models} models; this accountant "
                                      f"keeps {self.models}")
            inc = np.zeros_like(self.rdp)
            if mask.any():
                inc[mask] = self._increment(event, mask)
            queries = event.counts.shape[1]
            answered = event.answered.sum(axis=1)
        elif isinstance(event, GNMaxThreshold):
            inc = np.outer(mask, event.count * rdp_threshold_independent(event.sigma, self.orders))
            queries, answered = event.count, np.zeros(self.models, dtype=np.int64)
        else:
            inc = np.outer(mask, event.count * rdp_gnmax_independent(event.sigma, self.orders))
            queries, answered = 0, np.full(self.models, event.count)
        if not np.all(np.isfinite(inc)) or np.any(inc < 0):
            raise ConfigError("the RDP increment is not a finite non-negative number")
        return mask, inc, queries, answered

    def _increment(self, event: ConfidentGNMax, mask: Bools) -> Floats:
        """The RDP increments of the masked models' queries.

        G-PATE asks ``eps_if`` of a step's votes, then composes the same votes for the models
        that may take the step (a subset): the rows of the first call are kept and reused
        when the votes, their parameters and the models match (a model's row depends on its
        own queries only, so it is the same number either way).
        """
        key = (event.threshold, event.sigma1, event.sigma2)
        memo = self._memo
        if (memo is not None and memo[0] == key and not np.any(mask & ~memo[1])
                and np.array_equal(memo[2], event.counts) and np.array_equal(memo[3], event.answered)):
            return memo[4][mask[memo[1]]]
        rows = rdp_confident_gnmax(event.counts[mask], event.answered[mask], event.threshold,
                                   event.sigma1, event.sigma2, self.orders,
                                   data_dependent=self.data_dependent)
        self._memo = (key, mask.copy(), np.array(event.counts), np.array(event.answered), rows)
        return rows

    def _apply(self, increment: Increment) -> None:
        mask, inc, queries, answered = increment
        self.rdp += inc
        self.queries[mask] += queries
        self.answered[mask] += np.asarray(answered)[mask] if np.ndim(answered) else answered

    def _eps(self, rdp: Floats, delta: float | Floats) -> Floats:
        if np.ndim(delta) == 0:
            return eps_from_rdp(rdp, self.orders, float(delta))
        delta = np.asarray(delta, dtype=np.float64)
        if delta.shape != (self.models,):
            raise DeltaError(f"delta must be one number or one per model ({self.models}), "
                             f"got shape {delta.shape}")
        return np.array([eps_from_rdp(r, self.orders, float(d)) for r, d in zip(rdp, delta)])

    def eps(self, delta: float | Floats) -> Floats:
        return self._eps(self.rdp, delta)

    def eps_if(self, event: GNMaxEvent, delta: float | Floats) -> Floats:
        """eps per model if ``event`` were charged (the accountant is left unchanged)."""
        if not self.supports(event):
            raise UnsupportedEventError(self._unsupported(event))
        _, inc, _, _ = self._dry_run(event)
        return self._eps(self.rdp + inc, delta)

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(models={self.models}, orders={self.orders.size}, "
                f"data_dependent={self.data_dependent})")


class IndependentGNMaxAccountant(ConfidentGNMaxAccountant):
    """``gnmax-independent``: the same events charged with the data-independent curves."""

    def __init__(self, models: int = 1, *, orders: npt.ArrayLike | None = None):
        super().__init__(models, orders=orders, data_dependent=False)
