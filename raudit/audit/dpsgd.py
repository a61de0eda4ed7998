"""Transcript-level mechanisms without vote histograms: DP-SGD (dpgan) and G-PATE's
Gaussian vote releases, with cheap trials.

DP-SGD (:class:`SubsampledGaussianMechanism`). What a DP-SGD step releases is the
noisy sum of the clipped per-example gradients of a Poisson sample. The worst-case
neighbours (Nasr et al. 2021/2023, the gradient canary): the target's gradient has norm
C (the clip) in a direction no other record's gradient uses, and the attacker knows
everything else. Projected on that direction, step t releases (in units of C)

    x_t = b_t + z N(0, 1),   b_t ~ Bernoulli(q) in world "in", b_t = 0 in world "out",

with z the noise multiplier and q the sampling rate; the other coordinates have the
same distribution in both worlds and carry nothing. The likelihood ratio of a step is
(1 - q) + q exp((x_t - 1/2) / z^2), so the most powerful statistic of the run is the
sum over its T steps of log((1 - q) + q exp((x_t - 1/2) / z^2)), drawn here step by step
(T normals and Bernoullis per trial, in blocks: no critic is trained). That is the
shortcut the summary states: the trial is the mechanism alone, on its worst case, not
a trained critic whose real gradients are smaller, aligned with others' and unknown.

Because every canary can have a coordinate of its own, m canaries of ONE run are m
independent copies of this statistic (Poisson sampling and the noise are independent
per record and per coordinate): a one-run audit costs no privacy per canary
(:meth:`SubsampledGaussianMechanism.per_canary` is the mechanism itself), unlike a
vote histogram, whose queries the canaries have to share.

G-PATE (:class:`GaussianReleases`): its transcript is built from Gaussian releases of
vote histograms (every query's noisy top count, sigma1; the noisy histogram of every
answered query, sigma2); the target's teacher moves one vote on each, so the
likelihood ratio is one Gaussian of mu^2 = sum of (sensitivity / sigma)^2 (exactly
mu-GDP), drawn in one step.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from raudit.errors import ConfigError

__all__ = ["FixedConfidentReleases", "GaussianReleases", "SubsampledGaussianMechanism"]

BLOCK = 2_000_000  # normals drawn at once (memory: 16 MB per array)


@dataclass(frozen=True)
class SubsampledGaussianMechanism:
    """T = ``queries`` DP-SGD steps of noise multiplier ``scale`` (z) and Poisson rate
    ``sampling_rate`` (q): the gradient canary's projection (module docstring)."""

    scale: float
    sampling_rate: float
    queries: int
    noise: str = "gaussian"
    aggregation: str = "dp-sgd"

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and self.scale > 0):
            raise ConfigError(f"the noise multiplier must be > 0, got {self.scale!r}")
        if not 0.0 < self.sampling_rate <= 1.0:
            raise ConfigError(f"the sampling rate must lie in (0, 1], got {self.sampling_rate!r}")
        if self.queries < 1:
            raise ConfigError(f"DP-SGD needs at least one step, got {self.queries!r}")

    def statistic(self, rng: np.random.Generator, n: int, world: int) -> np.ndarray:
        """The log-likelihood ratio (in vs out) of ``n`` runs of world ``world`` (1 = in)."""
        z, q, t = float(self.scale), float(self.sampling_rate), int(self.queries)
        log_out = math.log1p(-q) if q < 1.0 else -math.inf
        out = np.empty(n)
        rows = max(1, BLOCK // t)
        for lo in range(0, n, rows):
            k = min(rows, n - lo)
            x = rng.normal(0.0, z, size=(k, t))
            if world:
                x += rng.random((k, t)) < q
            out[lo:lo + k] = np.logaddexp(log_out, math.log(q) + (x - 0.5) / z**2).sum(axis=1)
        return out

    def per_canary(self, canaries: int) -> "SubsampledGaussianMechanism":
        """Each canary's own gradient coordinate: every canary sees all T steps."""
        return self

    def describe(self) -> str:
        return (f"{self.queries:,} DP-SGD steps (noise multiplier {self.scale:.4g}, Poisson "
                f"rate {self.sampling_rate:.4g}): the canary gradient of norm C alone in its "
                "direction, the noisy sums projected on it, no critic trained")


@dataclass(frozen=True)
class GaussianReleases:
    """Gaussian releases of sensitivity 1 whose mu^2 = sum (1/sigma)^2 adds up to ``mu``^2:
    ``queries`` votes (G-PATE: ``threshold`` checks at sigma1 and ``answered`` noisy
    histograms at sigma2, two coordinates each)."""

    threshold_sigma: float
    threshold_queries: int
    histogram_sigma: float
    histogram_queries: int
    noise: str = "gaussian"
    aggregation: str = "confident-gnmax"

    def __post_init__(self) -> None:
        if not (self.threshold_sigma > 0 and self.histogram_sigma > 0):
            raise ConfigError("sigma1 and sigma2 must be > 0")
        if self.threshold_queries < 1 or self.histogram_queries < 0:
            raise ConfigError("need at least one threshold query and no negative count")

    @property
    def queries(self) -> int:
        return int(self.threshold_queries)

    @property
    def mu(self) -> float:
        return math.sqrt(self.threshold_queries / self.threshold_sigma**2
                         + 2 * self.histogram_queries / self.histogram_sigma**2)

    @property
    def scale(self) -> float:  # the one Gaussian of sensitivity 1 these releases amount to
        return 1.0 / self.mu

    def statistic(self, rng: np.random.Generator, n: int, world: int) -> np.ndarray:
        mu = self.mu
        return rng.normal(mu * mu * (world - 0.5), mu, size=n)

    def per_canary(self, canaries: int) -> "GaussianReleases":
        raise ConfigError("--one-run at transcript level is built for vote histograms and "
                          "DP-SGD; G-PATE's gradient votes are not split among canaries yet")

    who = "G-PATE's"  # a class attribute, not a field: the manifest's mechanism is unchanged

    def describe(self) -> str:
        return (f"{self.who} Gaussian vote releases: {self.threshold_queries:,} noisy top counts "
                f"(sigma1 {self.threshold_sigma:.4g}) and {self.histogram_queries:,} noisy "
                f"histograms of answered queries (sigma2 {self.histogram_sigma:.4g}), the "
                f"target moving one teacher's vote on each (mu = {self.mu:.4g})")


@dataclass(frozen=True)
class FixedConfidentReleases(GaussianReleases):
    """fixed's ``analysis=data-dependent`` Confident-GNMax: the same releases as G-PATE's
    (noisy top counts at sigma1, noisy two-class histograms of the answered queries at
    sigma2); its answers are their noisy argmax."""

    who = "fixed's Confident-GNMax"

    def per_canary(self, canaries: int) -> "FixedConfidentReleases":
        raise ConfigError("--one-run at transcript level is not built for fixed's "
                          "data-dependent analysis (its answered queries are not split among "
                          "canaries)")
