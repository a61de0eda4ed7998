"""A parametric GDP fit: mu from the whole score distribution, with an exact confidence bound.

:func:`raudit.audit.fdp.mu_gdp` reads ONE threshold, so on n trials per world it loses
about 2 x 1.96 sqrt(p (1 - p) / n) / phi(.) in mu (0.05-0.06 at 7,000 test trials).
Where the attack's statistic is normal with one variance in both worlds -- the
likelihood ratio of a Gaussian mechanism exactly; of a composition of many small
Laplace votes up to the central limit -- the trade-off curve is mu-GDP with
mu = (m_in - m_out) / s, and every trial informs the estimate, not only those near a
threshold.

With n_in, n_out trials and the pooled standard deviation s, the standardised mean
difference d = (mean_in - mean_out) / s makes t = d / sqrt(1/n_in + 1/n_out) a
noncentral Student t with n_in + n_out - 2 degrees of freedom and noncentrality
mu / sqrt(1/n_in + 1/n_out). Inverting it gives mu_lo with P[mu_lo > mu] <= alpha/2
exactly under that assumption (the same confidence as mu_gdp's), so the audit uses ALL
trials: there is no threshold to choose, hence no validation split to spend.

Assumption, stated: ``gaussian-tradeoff`` (normal statistics, equal variances). Its
loss is the Cramer-Rao one of a normal mean difference, about z sqrt(2/n) in mu
(0.023 at n = 10,000 per world and alpha/2 = 0.05): the arithmetic that decides how
tight any audit of a small mu can be (lab/tight-audits.md).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy import optimize, special, stats

from raudit.errors import ConfigError

__all__ = ["mu_fit", "mu_fit_loss"]


def mu_fit(statistic: ArrayLike, labels: ArrayLike, *, alpha: float = 0.1) -> float:
    """mu_lo of the binormal equal-variance fit of ``statistic`` (labels 1 = in, 0 = out),
    with P[mu_lo > mu] <= alpha/2 under that model; 0 when the data show no shift."""
    x, y = np.asarray(statistic, dtype=float), np.asarray(labels)
    if x.shape != y.shape or x.ndim != 1 or not np.isin(y, (0, 1)).all():
        raise ConfigError("mu_fit takes one statistic and one 0/1 label per trial")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    inn, out = x[y == 1], x[y == 0]
    if min(inn.size, out.size) < 2 or not np.isfinite(x).all():
        return 0.0
    df = inn.size + out.size - 2
    pooled = ((inn.size - 1) * inn.var(ddof=1) + (out.size - 1) * out.var(ddof=1)) / df
    scale = math.sqrt(1.0 / inn.size + 1.0 / out.size)
    diff = float(inn.mean() - out.mean())
    if pooled <= 0.0:  # no spread: perfect separation, the bound is the data's ceiling
        return float("inf") if diff > 0 else 0.0
    t = diff / math.sqrt(pooled) / scale
    tail = alpha / 2.0
    if t > 100.0 and df >= 1000:
        # far beyond any mu an audit could confuse with its claim (updated's 4e7 eps):
        # scipy's noncentral t stops converging there, while with >= 1,000 degrees of
        # freedom d is normal to far better than the bound's width: var(d) = scale^2 +
        # d^2 / (2 (n_in + n_out)) (the large-sample variance of a standardised difference)
        d = t * scale
        return float(d + special.ndtri(tail) * math.sqrt(scale**2 + d * d / (2.0 * (df + 2))))
    if stats.nct.sf(t, df, 0.0) > tail:  # not even mu = 0 is rejected
        return 0.0
    # sf(t; nc) grows with nc: the smallest nc with sf = tail bounds mu from below
    hi = max(2.0 * abs(t), 1.0)
    while stats.nct.sf(t, df, hi) < tail:
        hi *= 2.0
    nc = optimize.brentq(lambda c: stats.nct.sf(t, df, c) - tail, 0.0, hi, xtol=1e-10)
    return float(nc * scale)


def mu_fit_loss(trials: int, *, alpha: float = 0.1) -> float:
    """Expected mu - mu_lo of :func:`mu_fit` at small mu with ``trials`` per world: the
    normal quantile at alpha/2 times sqrt(2 / trials)."""
    return float(-special.ndtri(alpha / 2.0) * math.sqrt(2.0 / trials))
