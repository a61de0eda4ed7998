"""The accountant registry and a thin stateful accountant for batched training.

The math lives in :mod:`raudit.accountants.pate`; this module only names the
variants and keeps per-model running moments for training code, which calls
:meth:`MomentsAccountant.charge` once per student round with the votes it cast.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from raudit.accountants.pate import (
    eps_from_moments,
    moments_fixed,
    moments_fixed_threshold,
    moments_missing_log,
    moments_paper,
    moments_synthcity,
    moments_updated,
)
from raudit.errors import ConfigError, UnknownNameError

__all__ = ["MOMENTS", "MomentsAccountant", "get"]

MomentsFn = Callable[..., np.ndarray]

#: name -> moments function ``f(n1, k, lam, L) -> (..., L)``. Faithful variants keep
#: their upstream bug; ``fixed`` is the correct one.
MOMENTS: dict[str, MomentsFn] = {
    "paper": moments_paper,
    "updated": moments_updated,
    "synthcity-index-bug": moments_synthcity,
    "missing-log": moments_missing_log,
    "fixed": moments_fixed,
    "fixed-threshold": moments_fixed_threshold,
}


def get(name: str) -> MomentsFn:
    """The moments function registered as ``name``; raises UnknownNameError otherwise."""
    try:
        return MOMENTS[name]
    except KeyError:
        raise UnknownNameError("accountant", name, MOMENTS) from None


class MomentsAccountant:
    """Running PATE moments of ``models`` models trained together.

    ``alpha`` has shape (models, orders); ``queries`` counts the charged queries per
    model. A NaN moment (``updated``) stays NaN, as upstream.
    """

    def __init__(self, variant: str, *, lam: float, orders: int, k: int, models: int = 1):
        self.variant = variant
        self._fn = get(variant)
        if isinstance(models, bool) or int(models) != models or models < 1:
            raise ConfigError(f"models must be an integer >= 1, got {models!r}")
        self.lam, self.orders, self.k, self.models = float(lam), int(orders), int(k), int(models)
        # validate the parameters now rather than at the first charge
        self._fn(np.zeros((1, 0), dtype=np.int64), self.k, self.lam, self.orders)
        self.alpha = np.zeros((self.models, self.orders))
        self.queries = np.zeros(self.models, dtype=np.int64)

    def charge(self, n1, mask=None) -> None:
        """Add the moments of the queries ``n1`` (models, B); only rows where ``mask``."""
        n1 = np.asarray(n1)
        if n1.ndim != 2 or n1.shape[0] != self.models:
            raise ConfigError(f"n1 must have shape (models={self.models}, B), got {n1.shape}")
        if mask is None:
            self.alpha += self._fn(n1, self.k, self.lam, self.orders)
            self.queries += n1.shape[1]
            return
        mask = np.asarray(mask)
        if mask.shape != (self.models,) or mask.dtype != bool:
            raise ConfigError(
                f"mask must be a bool array of shape ({self.models},), got {mask.dtype} {mask.shape}"
            )
        if mask.any():
            self.alpha[mask] += self._fn(n1[mask], self.k, self.lam, self.orders)
            self.queries[mask] += n1.shape[1]

    def eps(self, delta: float) -> np.ndarray:
        """eps_hat per model, shape (models,)."""
        return eps_from_moments(self.alpha, delta)

    def __repr__(self) -> str:
        return (
            f"MomentsAccountant({self.variant!r}, lam={self.lam}, orders={self.orders}, "
            f"k={self.k}, models={self.models})"
        )
