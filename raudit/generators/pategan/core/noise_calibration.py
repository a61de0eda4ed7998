"""Noise calibrated before a run starts: the DP bounds histogram's and the training's.

A run that takes DP bounds (:mod:`.dp_bounds`; ``fixed``, ``dpgan``) spends its eps twice:
once on the bounds histogram (one :class:`~raudit.events.GaussianStep`), once on
training. Both noise levels are fixed from the budget and the schema before any record
is read, composed by dp_accounting's RDP accountant (the accountant the generators charge
while training): the bounds alone cost ``bounds_share * eps``, bounds plus training at
most eps. Each level is the smallest noise that meets its target, found by bisection
(eps falls with the noise). The RDP-to-(eps, delta) conversion has a floor no noise goes
under: :class:`NoNoise` names the smallest eps that can be served.
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable

from raudit.accountants import create
from raudit.events import GaussianStep
from raudit.errors import ConfigError


class NoNoise(ConfigError):
    """No noise level brings the run's eps down to the target (the conversion's floor)."""


@functools.lru_cache(maxsize=256)
def bounds_noise(epsilon: float, delta: float, dp_columns: int, bounds_share: float) -> float | None:
    """z of the bounds histogram: it alone costs ``bounds_share * eps`` (None: nothing to bound)."""
    if not dp_columns:
        return None
    return _bisect(lambda z: _eps([GaussianStep(z)], delta), bounds_share * epsilon)


def calibrate(epsilon: float, delta: float, dp_columns: int, bounds_share: float,
              training: Callable[[float], object], before: tuple = ()) -> tuple[float | None, float]:
    """Noise for a whole run, fixed before it starts: (z of the bounds histogram, or None
    when every column has public bounds; the noise parameter of ``training(noise)``, the
    event of all training steps). The bounds alone cost ``bounds_share * eps``; bounds
    plus training cost at most eps, composed by dp_accounting's RDP accountant (the
    accountant the generators charge while training). ``before``: further fixed events
    composed in (``fixed``'s sign query)."""
    try:
        return _calibrate(epsilon, delta, dp_columns, bounds_share, training, before)
    except NoNoise:
        least = smallest_epsilon(epsilon, delta, dp_columns, bounds_share, training, before)
        raise NoNoise(f"epsilon {epsilon:.4g} is too small to calibrate any noise for this run "
                      f"(delta={delta:g}, {dp_columns} columns without public bounds): the "
                      f"smallest it can be calibrated for is {least:.4g}; raise epsilon or "
                      f"delta") from None


def _calibrate(epsilon, delta, dp_columns, bounds_share, training, before=()):
    z_bounds = bounds_noise(epsilon, delta, dp_columns, bounds_share)
    fixed = ([] if z_bounds is None else [GaussianStep(z_bounds)]) + list(before)
    return z_bounds, _bisect(lambda noise: _eps(fixed + [training(noise)], delta), epsilon)


def smallest_epsilon(epsilon: float, delta: float, dp_columns: int, bounds_share: float,
                     training: Callable[[float], object], before: tuple = ()) -> float:
    """The smallest eps (to 0.1 %) above ``epsilon`` that :func:`calibrate` can serve: the
    RDP-to-(eps, delta) conversion has a floor (log(1/delta) / (alpha_max - 1)) that no
    noise goes under. Feasibility grows with eps: doubling, then bisection."""
    def ok(e: float) -> bool:
        try:
            _calibrate(e, delta, dp_columns, bounds_share, training, before)
            return True
        except NoNoise:
            return False
    lo, hi = epsilon, epsilon * 2.0
    while not ok(hi):
        lo, hi = hi, hi * 2.0
    while hi / lo > 1.001:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    return hi


def _eps(events, delta: float) -> float:
    acct = create("rdp")
    for event in events:
        acct.compose(event)
    # dp_accounting logs (absl) when a fractional order fails to converge at a trial noise
    # level and drops that order (a larger, still valid eps): expected while bisecting
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)
    try:
        return float(acct.eps(delta)[0])
    finally:
        absl.setLevel(level)


def _bisect(eps_of, target: float) -> float:
    """The smallest noise (to 1e-4 relative) whose eps is <= target; eps falls with the noise."""
    lo, hi = 1e-3, 1.0
    while eps_of(hi) > target:
        lo, hi = hi, hi * 2.0
        if hi > 1e9:
            raise NoNoise(f"epsilon {target:.4g} is too small to calibrate any noise")
    while hi / lo > 1 + 1e-4:
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if eps_of(mid) <= target else (mid, hi)
    return hi
