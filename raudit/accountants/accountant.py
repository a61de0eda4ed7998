"""Accountants that consume privacy events, and the registry that names them.

An accountant keeps the privacy loss of M models trained together. Training code
hands it events (:mod:`raudit.events`) through :meth:`Accountant.compose`
and asks :meth:`Accountant.eps` for eps_hat(delta) to decide when to stop; the
training loop never computes eps itself.

``compose`` is all-or-nothing: the increment is computed and validated first (a
dry run), and only then added, so an event that is rejected (wrong type, wrong
shape, a parameter the analysis cannot take) leaves the accountant unchanged.

Registered accountants (``ACCOUNTANTS``, a :class:`raudit.registry.Registry`):

* the PATE moments variants ``paper``, ``updated``, ``synthcity-index-bug``,
  ``missing-log``, ``fixed``, ``fixed-threshold``: :class:`PateMomentsAccountant`
  over the named pure functions of :mod:`raudit.accountants.pate` (``VARIANTS``);
* ``gnmax`` / ``gnmax-independent``: Confident-GNMax queries with their votes
  (G-PATE), data-dependent RDP / its data-independent upper bound
  (:mod:`raudit.accountants.confident`);
* ``rdp`` and ``pld``: Gaussian (and Laplace label-noise) events accounted by
  dp_accounting's RDP and PLD accountants (:mod:`raudit.accountants.gaussian`).

``create(name, models=M, **params)`` builds one; ``accepting(EventType)`` lists the
names that consume an event type.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, ClassVar

import numpy as np

from raudit.accountants.errors import DeltaError, EventShapeError, UnsupportedEventError
from raudit.events import PateVote, UnsupportedEvent
from raudit.accountants.pate import VARIANTS, eps_from_moments
from raudit.errors import ConfigError
from raudit.registry import Registry

__all__ = ["ACCOUNTANTS", "Accountant", "PateMomentsAccountant",
           "accepting", "create", "get"]

MomentsFn = Callable[..., np.ndarray]


def get(name: str) -> MomentsFn:
    """The moments function of PATE variant ``name`` (:data:`~raudit.accountants.pate.VARIANTS`);
    UnknownNameError otherwise."""
    return VARIANTS.get(name).moments


def _check_models(models: Any) -> int:
    if isinstance(models, bool) or not isinstance(models, (int, np.integer)) or models < 1:
        raise ConfigError(f"models must be an integer >= 1, got {models!r}")
    return int(models)


def _mask_of(event: Any, models: int) -> np.ndarray:
    mask: np.ndarray | None = getattr(event, "mask", None)  # an event's optional (models,) mask
    if mask is None:
        return np.ones(models, dtype=bool)
    if mask.shape != (models,):
        raise EventShapeError(f"the event's mask has shape {mask.shape}; this accountant keeps "
                              f"{models} models")
    return mask


class Accountant:
    """Base: ``events`` lists the event types accepted; subclasses split compose in two."""

    events: ClassVar[tuple[type, ...]] = ()

    def __init__(self, models: int = 1):
        self.models = _check_models(models)

    def supports(self, event: Any) -> bool:
        """Whether this accountant can analyse ``event`` (its type and parameters), as
        dp_accounting's ``supports``; whether it fits the state is ``compose``'s check."""
        return isinstance(event, self.events) and self._supports(event)

    def _supports(self, event: Any) -> bool:
        return True

    def compose(self, event: Any) -> None:
        """Charge ``event``; raises an :class:`~raudit.accountants.errors.AccountantError`
        (and changes nothing) if it is rejected: UnsupportedEventError when
        :meth:`supports` is False, EventShapeError when it does not fit."""
        if not self.supports(event):
            raise UnsupportedEventError(self._unsupported(event))
        self._apply(self._dry_run(event))

    def _unsupported(self, event: Any) -> str:
        if isinstance(event, UnsupportedEvent):  # a release no accountant bounds, by name
            return f"{type(self).__name__} cannot account {event.what}"
        kinds = ", ".join(t.__name__ for t in self.events)
        return f"{type(self).__name__} accounts {kinds} events, not {type(event).__name__}"

    def _dry_run(self, event: Any) -> Any:
        raise NotImplementedError

    def _apply(self, increment: Any) -> None:
        raise NotImplementedError

    def eps(self, delta: float | np.ndarray) -> np.ndarray:
        """eps_hat per model, shape (models,); ``delta`` is one value or one per model."""
        raise NotImplementedError


class PateMomentsAccountant(Accountant):
    """Running PATE moments (models, orders) of one named variant.

    It charges the ``lam`` it is configured with, as the implementations do: the
    vote's own noise scale is recorded in the event but not used, so a mechanism
    whose noise does not match its accountant (the paper's ``noise_scale="direct"``)
    is accounted as upstream accounts it. Only Laplace votes of ``k`` teachers are
    accepted. A NaN moment (``updated``) stays NaN, as upstream.
    """

    events = (PateVote,)

    def __init__(self, variant: str, *, lam: float, orders: int, k: int, models: int = 1):
        super().__init__(models)
        self.variant = variant
        self._fn = get(variant)
        self.lam, self.orders, self.k = float(lam), int(orders), int(k)
        # validate the parameters now rather than at the first charge
        self._fn(np.zeros((1, 0), dtype=np.int64), self.k, self.lam, self.orders)
        self.alpha = np.zeros((self.models, self.orders))
        self.queries = np.zeros(self.models, dtype=np.int64)

    def _supports(self, event: PateVote) -> bool:
        return event.noise_kind == "laplace" and event.k == self.k

    def _unsupported(self, event: Any) -> str:
        if isinstance(event, PateVote) and event.noise_kind != "laplace":
            return (f"the PATE moments accountant {self.variant!r} analyses Laplace votes, "
                    f"not {event.noise_kind}; use a Gaussian (GNMax) accountant")
        if isinstance(event, PateVote):
            return f"the vote has k={event.k} teachers; this accountant has k={self.k}"
        return super()._unsupported(event)

    def _dry_run(self, event: PateVote) -> tuple[np.ndarray, np.ndarray | None, int]:
        if event.models != self.models:
            raise EventShapeError(f"the vote holds {event.models} models; this accountant "
                                  f"keeps {self.models}")
        mask = _mask_of(event, self.models)
        inc = self._fn(event.n1[mask], self.k, self.lam, self.orders) if mask.any() else None
        return mask, inc, event.n1.shape[1]

    def _apply(self, increment: tuple[np.ndarray, np.ndarray | None, int]) -> None:
        mask, inc, queries = increment
        if inc is not None:
            self.alpha[mask] += inc
            self.queries[mask] += queries

    def eps(self, delta: float | np.ndarray) -> np.ndarray:
        if np.ndim(delta) == 0:
            return eps_from_moments(self.alpha, float(delta))
        delta = np.asarray(delta, dtype=np.float64)
        if delta.shape != (self.models,):
            raise DeltaError(f"delta must be one number or one per model ({self.models}), "
                             f"got shape {delta.shape}")
        out = np.empty(self.models)
        for d in np.unique(delta):  # few distinct values (neighbouring tables differ by a row)
            out[delta == d] = eps_from_moments(self.alpha[delta == d], float(d))
        return out

    def __repr__(self) -> str:
        return (f"{type(self).__name__}({self.variant!r}, lam={self.lam}, orders={self.orders}, "
                f"k={self.k}, models={self.models})")


ACCOUNTANTS: Registry[Callable[..., Accountant]] = Registry("accountant")
for _name in VARIANTS.names():
    ACCOUNTANTS.register(_name, functools.partial(PateMomentsAccountant, _name))
ACCOUNTANTS.register("rdp", "raudit.accountants.gaussian:RdpAccountant")
ACCOUNTANTS.register("pld", "raudit.accountants.gaussian:PldAccountant")
ACCOUNTANTS.register("gnmax", "raudit.accountants.confident:ConfidentGNMaxAccountant")
ACCOUNTANTS.register("gnmax-independent", "raudit.accountants.confident:IndependentGNMaxAccountant")


def create(name: str, *, models: int = 1, **params: Any) -> Accountant:
    """A fresh accountant ``name`` for ``models`` models (params: lam, orders, k for PATE)."""
    return ACCOUNTANTS.get(name)(models=models, **params)


def accepting(event_type: type) -> list[str]:
    """Names of the registered accountants that consume ``event_type``."""
    out = []
    for name in ACCOUNTANTS.names():
        factory = ACCOUNTANTS.get(name)
        cls = factory.func if isinstance(factory, functools.partial) else factory
        if any(issubclass(event_type, t) for t in getattr(cls, "events", ())):
            out.append(name)
    return out
