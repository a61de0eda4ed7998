"""Gaussian-mechanism events accounted by dp_accounting (RDP and PLD), never by hand.

:class:`GaussianStep` (DP-SGD / DPGAN steps), the two GNMax steps and label noise
are translated into dp_accounting ``DpEvent``s and composed by its
``RdpAccountant`` or ``PLDAccountant``. M models trained together usually share
their events and differ only in how long each ran, so the state is a count per
distinct mechanism per model; eps(delta) builds one dp_accounting accountant per
distinct history (cached) and composes each mechanism ``count`` times.
"""

from __future__ import annotations

from typing import Any, ClassVar, Union

import dp_accounting
import numpy as np
import numpy.typing as npt
from dp_accounting import pld, rdp

from raudit.accountants.accountant import Accountant, _mask_of
from raudit.accountants.errors import DeltaError
from raudit.events import GaussianStep, GNMaxAnswer, GNMaxThreshold, MechanismKey, NoisyLabels
from raudit.errors import ConfigError

__all__ = ["DpAccountingAccountant", "PldAccountant", "RdpAccountant", "dp_event"]

KeyedEvent = Union[GaussianStep, GNMaxThreshold, GNMaxAnswer, NoisyLabels]
Increment = tuple[MechanismKey, npt.NDArray[np.bool_], int]  # mechanism, models, count
History = tuple[tuple[MechanismKey, int], ...]  # one model's count of each mechanism

NEIGHBOURS = {
    "add-remove": dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace": dp_accounting.NeighboringRelation.REPLACE_ONE,
}


def dp_event(key: MechanismKey) -> dp_accounting.DpEvent:
    """The dp_accounting event of one mechanism key (kind, scale, sampling rate)."""
    kind, scale, rate = key
    if kind == "laplace":
        inner: dp_accounting.DpEvent = dp_accounting.LaplaceDpEvent(scale)
    else:
        inner = dp_accounting.GaussianDpEvent(scale)
    return inner if rate == 1.0 else dp_accounting.PoissonSampledDpEvent(rate, inner)


class DpAccountingAccountant(Accountant):
    """Counts of each mechanism per model; eps from a dp_accounting accountant."""

    events = (GaussianStep, GNMaxThreshold, GNMaxAnswer, NoisyLabels)
    params: ClassVar[tuple[str, ...]] = ()

    def __init__(self, models: int = 1, *, neighbours: str = "add-remove", **params: Any):
        super().__init__(models)
        if neighbours not in NEIGHBOURS:
            raise ConfigError(f"neighbours must be add-remove or replace, got {neighbours!r}")
        unknown = sorted(set(params) - set(self.params))
        if unknown:
            raise ConfigError(f"{type(self).__name__} takes no parameter {', '.join(unknown)} "
                              f"(it takes: {', '.join(self.params) or 'none'})")
        self.neighbours = neighbours
        self._params = params
        self._make()  # validate the parameters now
        self.counts: dict[MechanismKey, npt.NDArray[np.int64]] = {}
        self._cache: dict[tuple[History, float], float] = {}

    def _make(self) -> dp_accounting.PrivacyAccountant:
        raise NotImplementedError

    def _supports(self, event: KeyedEvent) -> bool:
        return bool(self._make().supports(dp_event(event.key())))

    def _unsupported(self, event: Any) -> str:
        if not isinstance(event, self.events):
            return super()._unsupported(event)
        key = event.key()
        return (f"{type(self).__name__} cannot account {type(event).__name__} "
                f"({key[0]} noise, sampling rate {key[2]})")

    def _dry_run(self, event: KeyedEvent) -> Increment:
        return event.key(), _mask_of(event, self.models), int(event.count)

    def _apply(self, increment: Increment) -> None:
        key, mask, count = increment
        counts = self.counts.setdefault(key, np.zeros(self.models, dtype=np.int64))
        counts[mask] += count

    def _eps_of(self, history: History, delta: float) -> float:
        cache_key = (history, delta)
        if cache_key not in self._cache:
            acct = self._make()
            for key, count in history:
                if count:
                    acct.compose(dp_event(key), int(count))
            self._cache[cache_key] = float(acct.get_epsilon(delta))
        return self._cache[cache_key]

    def eps(self, delta: float | npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        deltas = np.asarray(delta, dtype=np.float64)
        if deltas.ndim and deltas.shape != (self.models,):
            raise DeltaError(f"delta must be one number or one per model ({self.models}), "
                             f"got shape {deltas.shape}")
        deltas = np.broadcast_to(deltas, (self.models,))
        if np.any(~((deltas > 0) & (deltas < 1))):
            raise DeltaError(f"delta must lie in (0, 1), got {delta!r}")
        keys = sorted(self.counts)
        out = np.empty(self.models)
        for m in range(self.models):
            history = tuple((k, int(self.counts[k][m])) for k in keys)
            out[m] = self._eps_of(history, float(deltas[m]))
        return out


class RdpAccountant(DpAccountingAccountant):
    """dp_accounting's RdpAccountant (its default orders unless ``orders`` is given)."""

    params = ("orders",)

    def _make(self) -> dp_accounting.PrivacyAccountant:
        orders = self._params.get("orders")
        return rdp.RdpAccountant(orders, NEIGHBOURS[self.neighbours])


class PldAccountant(DpAccountingAccountant):
    """dp_accounting's PLDAccountant (tighter for few, large compositions)."""

    params = ("value_discretization_interval",)

    def _make(self) -> dp_accounting.PrivacyAccountant:
        interval = self._params.get("value_discretization_interval", 1e-4)
        return pld.PLDAccountant(NEIGHBOURS[self.neighbours], interval)

