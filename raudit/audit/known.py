"""Mechanisms with known privacy curves, simulated directly: ground truth for the estimators.

An estimator's promise ("eps_lo <= eps with confidence 1 - alpha/2") can only be
tested against a mechanism whose eps is known exactly and whose best attack sits
ON the boundary of its privacy region; a mechanism well inside it lets an
optimistic estimator pass. These three do, with the attack's score being the
mechanism's own output (no classifier in between):

* ``randomized-response`` (eps): one bit kept with probability e^eps/(1 + e^eps);
  both thresholds sit on the kink FPR = FNR = 1/(1 + e^eps).
* ``laplace`` (eps): x + Laplace(1/eps), x = 1 in world "in", 0 in "out"; every
  threshold beyond the two means lies on the pure eps-DP boundary.
* ``gaussian`` (mu): x mu + N(0, 1); mu-GDP exactly, its curve the Gaussian one.

Scores are mapped monotonically into [0, 1] (the trade-off bounds read a fixed grid
there); a monotone map changes no attack. ``eps_at(delta)`` is the mechanism's exact
eps at ``delta`` (its hockey-stick divergence), so coverage is judged against the
value the estimators actually bound.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats

from raudit.errors import ConfigError

__all__ = ["KINDS", "KnownMechanism", "max_overshoots"]

KINDS = ("randomized-response", "laplace", "gaussian")


@dataclass(frozen=True)
class KnownMechanism:
    """A mechanism of ``kind`` with parameter ``param`` (eps; mu for ``gaussian``)."""

    kind: str
    param: float

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ConfigError(f"kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        if not (isinstance(self.param, (int, float)) and math.isfinite(self.param)
                and self.param > 0):
            raise ConfigError(f"param must be a finite number > 0, got {self.param!r}")

    @property
    def mu(self) -> float | None:
        """The GDP parameter where the curve is Gaussian (None otherwise)."""
        return float(self.param) if self.kind == "gaussian" else None

    def eps_at(self, delta: float) -> float:
        """The smallest eps with delta(eps) <= ``delta`` (exact, not a bound)."""
        if not 0.0 <= delta < 1.0:
            raise ConfigError(f"delta must lie in [0, 1), got {delta!r}")
        p = float(self.param)
        if self.kind == "randomized-response":
            # delta(e') = (e^eps - e^e') / (1 + e^eps) for e' <= eps
            return max(math.log(max(math.exp(p) - delta * (1.0 + math.exp(p)), 1e-300)), 0.0)
        if self.kind == "laplace":
            # delta(e') = 1 - exp((e' - eps) / 2) for sensitivity 1, scale 1/eps
            return max(p + 2.0 * math.log1p(-delta), 0.0)
        from raudit.audit.fdp import eps_from_mu  # the GDP conversion, tested vs dp_accounting

        return eps_from_mu(p, delta) if delta > 0 else math.inf

    def sample(self, rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores in [0, 1], labels): ``n`` independent runs per world (labels 0 then 1)."""
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ConfigError(f"n must be an integer >= 1, got {n!r}")
        labels = np.repeat([0, 1], n)
        p = float(self.param)
        if self.kind == "randomized-response":
            keep = rng.random(2 * n) < 1.0 / (1.0 + math.exp(-p))
            return np.where(keep, labels, 1 - labels).astype(float), labels
        if self.kind == "laplace":
            y = labels + rng.laplace(scale=1.0 / p, size=2 * n)
            return special.expit((y - 0.5) * p / 2.0), labels
        return special.ndtr(rng.normal(size=2 * n) + p * (labels - 0.5)), labels

    def gaussian_rates(self, thresholds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Exact (FPR, FNR) of predicting "in" when score >= t, for the gaussian kind."""
        if self.kind != "gaussian":
            raise ConfigError("exact rates per threshold are implemented for the gaussian kind")
        with np.errstate(divide="ignore"):
            q = special.ndtri(np.asarray(thresholds, dtype=float))
        mu = float(self.param)
        return special.ndtr(-(q + mu / 2.0)), special.ndtr(q - mu / 2.0)


def max_overshoots(repeats: int, level: float, *, false_alarm: float = 0.01) -> int:
    """The most overshoots an estimator at ``level`` may show in ``repeats`` repeats.

    The exact one-sided binomial acceptance region: the largest k with
    P[Binomial(repeats, level) >= k] > false_alarm, so a correct estimator fails the
    check with probability <= ``false_alarm`` (the tests fix their seeds, so a pass
    is reproducible; the region says what a pass means).
    """
    if repeats < 1 or not 0.0 < level < 1.0 or not 0.0 < false_alarm < 1.0:
        raise ConfigError(f"need repeats >= 1 and level, false_alarm in (0, 1); got "
                          f"{repeats!r}, {level!r}, {false_alarm!r}")
    return int(stats.binom.ppf(1.0 - false_alarm, repeats, level))
