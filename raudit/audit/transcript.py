"""The transcript threat model for PATE noisy votes, with cheap trials.

At the ``transcript`` level the attacker sees everything the DP mechanism releases
during training: for PATE-GAN, the noisy vote histogram of every query (the labels the
student reads are its post-processing). The worst-case neighbours: the target alone
changes one teacher's vote on EVERY query, so in world "in" each query's histogram
is shifted by the sensitivity vector s (argmax: (-1, +1); threshold: +1 on n1)
against world "out". With the noise known, the most powerful test is the likelihood
ratio (Neyman-Pearson), and its statistic is a sum over the released coordinates.

Cheap trials. A trial needs the mechanism, not a trained GAN: the base vote counts
cancel from the likelihood ratio (the noise is additive and the same in both
worlds), so each trial draws the statistic from its exact distribution:

* Gaussian noise sigma: each of the c = 2Q (or Q) coordinates contributes
  (x - 1/2)/sigma^2, so the sum is one Gaussian, N(c (w - 1/2)/sigma^2, c/sigma^2)
  in world w, exactly (mu = sqrt(c)/sigma): drawn in one step;
* Laplace noise b, unit shift: each coordinate contributes (|x| - |x - 1|)/b, which
  is -1/b for x <= 0, (2x - 1)/b for 0 < x < 1 and 1/b for x >= 1. A trial draws the
  three counts (multinomial over the 2Q coordinates) and the few interior values.

Both are the same distribution as simulating every query, at a cost independent of
Q; the summary says "exact sufficient statistic" so nobody mistakes it for a
training run. The existing estimators (CP, the curve bound, GDP) read the scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import optimize, special

from raudit.errors import ConfigError

__all__ = ["VoteMechanism", "mu_equivalent", "one_run_transcript", "transcript_audit",
           "transcript_scores"]

@dataclass(frozen=True)
class VoteMechanism:
    """Q noisy-vote queries: noise kind and scale (Laplace b or Gaussian sigma)."""

    noise: str
    scale: float
    queries: int
    aggregation: str = "argmax"

    def __post_init__(self) -> None:
        if self.noise not in ("laplace", "gaussian"):
            raise ConfigError(f"noise must be laplace or gaussian, got {self.noise!r}")
        if self.aggregation not in ("argmax", "threshold"):
            raise ConfigError(f"aggregation must be argmax or threshold, got {self.aggregation!r}")
        if not (math.isfinite(self.scale) and self.scale > 0) or self.queries < 1:
            raise ConfigError("scale must be > 0 and queries >= 1")

    @property
    def coords(self) -> int:
        """Released coordinates that the target shifts by 1: 2 per argmax query."""
        return self.queries * (2 if self.aggregation == "argmax" else 1)

    def per_canary(self, canaries: int) -> "VoteMechanism":
        """One canary's share of a one-run audit: its own Q // m queries (a histogram has
        no coordinate per record; :func:`one_run_transcript`)."""
        if canaries > self.queries:
            raise ConfigError(f"--canaries {canaries} is more than the {self.queries} queries "
                              "the mechanism answers: each canary needs queries of its own")
        return VoteMechanism(self.noise, self.scale, self.queries // canaries, self.aggregation)

    def describe(self) -> str:
        return f"{self.queries:,} {self.noise} ({self.aggregation}) votes of scale {self.scale:.4g}"

    def statistic(self, rng: np.random.Generator, n: int, world: int) -> np.ndarray:
        """The log-likelihood ratio (in vs out) of ``n`` runs of world ``world`` (1 = in)."""
        c, s = self.coords, float(self.scale)
        if self.noise == "gaussian":
            # each coordinate: (x - 1/2)/sigma^2 with x ~ N(world, sigma^2)
            mean = c * (world - 0.5) / s**2
            return rng.normal(mean, math.sqrt(c) / s, size=n)
        # x = world + Laplace(b): P(x <= 0), P(0 < x < 1), P(x >= 1)
        cdf = _laplace_cdf(np.array([0.0, 1.0]) - world, s)
        p = np.array([cdf[0], cdf[1] - cdf[0], 1.0 - cdf[1]])
        counts = rng.multinomial(c, p, size=n)
        total = (counts[:, 2] - counts[:, 0]).astype(float)
        mid = counts[:, 1]
        if mid.sum():  # interior values: Laplace(world, b) truncated to (0, 1), by inversion
            u = rng.uniform(cdf[0], cdf[1], size=int(mid.sum()))
            x = world + _laplace_ppf(u, s)
            total += np.bincount(np.repeat(np.arange(n), mid), weights=2.0 * x - 1.0,
                                 minlength=n)
        return total / s


def _laplace_cdf(x, b):
    # each branch clipped to its own side, so the unused one cannot overflow (tiny b)
    return np.where(x < 0, 0.5 * np.exp(np.minimum(x, 0) / b),
                    1.0 - 0.5 * np.exp(-np.maximum(x, 0) / b))


def _laplace_ppf(u, b):
    return np.where(u < 0.5, b * np.log(2.0 * u), -b * np.log(2.0 - 2.0 * u))


def mu_equivalent(eps: float, delta: float) -> float:
    """The mu whose mu-GDP has this eps at delta (the natural scale of Gaussian-like
    compositions: many small Laplace votes are one)."""
    from raudit.audit.fdp import eps_from_mu

    if eps <= 0:
        return 0.0
    return float(optimize.brentq(lambda m: eps_from_mu(m, delta) - eps, 1e-6, 50.0, xtol=1e-10))


def transcript_scores(mech: VoteMechanism, *, trials: int, seed: int, val_share: float = 0.3
                      ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{"val", "test", "statistic"}: (scores, labels) of ``trials`` runs per world of ``mech``.

    ``val_share`` of them choose the threshold; the rest are the test split. Scores are
    the likelihood ratio mapped monotonically into [0, 1] by the normal CDF of its value
    standardised on validation (the curve bound reads a grid there); "statistic" is the raw
    likelihood ratio of all trials (:mod:`raudit.audit.gdp_fit` reads it)."""
    if trials < 20:
        raise ConfigError(f"trials must be >= 20 per world, got {trials!r}")
    rng = np.random.default_rng(seed)
    n_val = int(trials * val_share)
    n_test = trials - n_val
    parts = {}
    for name, n in (("val", n_val), ("test", n_test)):
        out, inn = mech.statistic(rng, n, 0), mech.statistic(rng, n, 1)
        parts[name] = (np.concatenate([out, inn]), np.repeat([0, 1], n))
    ref = parts["val"][0]  # standardise on validation only
    centre, spread = float(np.median(ref)), float(np.std(ref)) or 1.0
    scored = {k: (special.ndtr((v - centre) / spread), y) for k, (v, y) in parts.items()}
    # the raw statistic of every trial, for estimators that choose no threshold
    scored["statistic"] = (np.concatenate([parts["val"][0], parts["test"][0]]),
                           np.concatenate([parts["val"][1], parts["test"][1]]))
    return scored


def transcript_audit(mech: VoteMechanism, *, trials: int, seed: int, delta: float = 1e-5,
                     alpha: float = 0.1, val_share: float = 0.3) -> dict:
    """A transcript-level audit of ``mech`` with ``trials`` runs per world
    (scores: :func:`transcript_scores`): CP, the curve bound, GDP and the GDP fit."""
    from raudit.audit.thresholds import audit_bound
    from raudit.audit.fdp import eps_from_mu, tradeoff_bounds
    from raudit.audit.gdp_fit import mu_fit

    scored = transcript_scores(mech, trials=trials, seed=seed, val_share=val_share)
    r = audit_bound(*scored["val"], *scored["test"], delta=delta, alpha=alpha)
    r.update(tradeoff_bounds(*scored["val"], *scored["test"], delta=delta, alpha=alpha))
    mu = mu_fit(*scored["statistic"], alpha=alpha)
    return {"eps_cp": r["eps_cp"], "eps_curve": r["eps_curve"], "mu_gdp": r["mu_gdp"],
            "eps_gdp": r["eps_gdp"], "eps_max": r["eps_max"], "auc": r["auc"], "mu_fit": mu,
            "eps_fit": eps_from_mu(mu, delta) if delta > 0 else float("nan"),
            "trials_per_world": trials}


def one_run_transcript(mech, *, canaries: int, seed: int, beta: float = 0.05
                       ) -> dict:
    """A one-run audit (:mod:`raudit.audit.one_run`) of ``mech`` at transcript level
    (a VoteMechanism here; DP-SGD in :mod:`raudit.audit.dpsgd` gives every canary a
    coordinate of its own and all the steps).

    A noisy vote histogram has no coordinate per record: canaries that each move one
    teacher's vote on every query only move the histogram's total, and which of them
    were in cannot be told apart. So the run's Q queries are split among the m
    canaries (canary i moves one teacher's vote on its own Q // m queries, included
    with probability 1/2) and each canary is scored by the likelihood ratio of its
    queries. The bound is valid for ``mech`` (each canary's influence is a subset of
    the worst case's) but it measures Q // m queries' privacy, not Q's."""
    from raudit.audit.one_run import best_one_run

    if canaries < 2:
        raise ConfigError(f"--canaries must be at least 2, got {canaries!r}")
    per = mech.per_canary(canaries)  # DP-SGD: each canary has a coordinate, all the steps
    rng = np.random.default_rng(seed)
    inclusion = np.where(rng.random(canaries) < 0.5, 1, -1)
    out, inn = per.statistic(rng, canaries, 0), per.statistic(rng, canaries, 1)
    scores = np.where(inclusion == 1, inn, out)
    return {**best_one_run(scores, inclusion, beta=beta), "queries_per_canary": per.queries}
