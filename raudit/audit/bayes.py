"""The joint-Beta Bayesian eps bound: the posterior of (FPR, FNR) given the counts.

Where :mod:`raudit.audit.epsilon` bounds each rate on its own (a union bound over two
intervals), this bound is the eps at which the joint Jeffreys posterior of the two rates
puts alpha/2 of its mass inside the privacy region (Zanella-Beguelin et al. 2023), by
quadrature over the Beta posteriors; a seeded Monte Carlo path checks it. A credible
statement, not a frequentist guarantee.
"""

from __future__ import annotations

from typing import Literal, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from raudit.audit.epsilon import _check, _eps_interval, _upper_jeffreys
from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA

__all__ = ["eps_bayesian"]

Floats = NDArray[np.float64]


def _gauss_legendre(nodes: int, panels: int) -> tuple[Floats, Floats]:
    """Composite Gauss-Legendre rule on [0, 1]: (points, weights)."""
    gx, gw = np.polynomial.legendre.leggauss(nodes)
    edges = np.linspace(0.0, 1.0, panels + 1)
    width = np.diff(edges)[:, None]
    return ((gx + 1.0) / 2.0 * width + edges[:-1, None]).ravel(), (gw / 2.0 * width).ravel()


# Rules on the FPR posterior's quantile scale. The integrand (a Beta CDF difference)
# is bounded, but it steps sharply where the region's boundary turns when the
# posteriors are concentrated; 4,096 nodes keep eps within ~1e-4 of a 65k-node rule
# there (and ~1e-9 for the smooth, small-count cases). The coarse rule only brackets.
_COARSE = _gauss_legendre(16, 32)
_FINE = _gauss_legendre(32, 128)
_EPS_CAP = 100.0


@overload
def _mass_in_region(x: Floats, w: Floats, ay: float, by: float, eps: float, delta: float,
                    derivative: Literal[False] = ...) -> float: ...
@overload
def _mass_in_region(x: Floats, w: Floats, ay: float, by: float, eps: float, delta: float,
                    derivative: Literal[True]) -> tuple[float, float]: ...
def _mass_in_region(x: Floats, w: Floats, ay: float, by: float, eps: float, delta: float,
                    derivative: bool = False) -> float | tuple[float, float]:
    """P[(X, Y) in R_eps] = E_X[F_Y(hi(X)) - F_Y(lo(X))], Y ~ Beta(ay, by), X at quantile
    nodes ``x`` with weights ``w``; with ``derivative`` also its derivative in eps."""
    e = np.exp(eps)
    lo = np.maximum((1.0 - delta - x) / e, 1.0 - delta - e * x)
    hi = np.minimum((e + delta - x) / e, e + delta - e * x)  # the mirror-image boundary
    p = np.ones_like(x)
    m_hi, m_lo = (hi < 1.0) & (hi > 0.0), lo > 0.0
    p[hi <= 0.0] = 0.0
    p[m_hi] = special.betainc(ay, by, hi[m_hi])
    p[m_lo] -= special.betainc(ay, by, np.minimum(lo[m_lo], 1.0))
    mass = float(w @ np.maximum(p, 0.0))
    if not derivative:
        return mass
    # d lo/d eps and d hi/d eps of the active branch, times the Beta density there
    dlo = np.where((1.0 - delta - x) / e >= 1.0 - delta - e * x, -(1.0 - delta - x) / e, -e * x)
    dhi = np.where((e + delta - x) / e <= e + delta - e * x, (x - delta) / e, e * (1.0 - x))
    logc = -special.betaln(ay, by)

    def pdf(v: Floats) -> Floats:
        v = np.clip(v, 1e-300, 1.0 - 1e-16)
        dens: Floats = np.exp(logc + special.xlogy(ay - 1.0, v) + special.xlog1py(by - 1.0, -v))
        return dens  # (scipy has no stubs here)

    m_lo &= lo < 1.0
    d = np.zeros_like(x)
    d[m_hi] += pdf(hi[m_hi]) * dhi[m_hi]
    d[m_lo] -= pdf(lo[m_lo]) * dlo[m_lo]
    return mass, float(w @ d)


def _eps_needed(x: Floats, y: Floats, delta: float) -> Floats:
    """The smallest eps >= 0 whose region contains (FPR, FNR) = (x, y)."""
    eps = np.zeros_like(x)
    with np.errstate(divide="ignore"):
        pairs = ((1.0 - delta - x, y), (1.0 - delta - y, x), (x - delta, 1.0 - y), (y - delta, 1.0 - x))
        for num, den in pairs:
            # a constraint with a non-positive numerator holds for every eps >= 0
            eps = np.maximum(eps, np.where(num > 0, np.log(np.maximum(num, 1e-300) / den), 0.0))
    return eps


def eps_bayesian(
    tp: ArrayLike,
    fn: ArrayLike,
    tn: ArrayLike,
    fp: ArrayLike,
    *,
    delta: float = STUDY_DELTA,
    alpha: float = 0.1,
    method: str = "quadrature",
    samples: int = 1_000_000,
    seed: int = 0,
) -> float:
    """Joint-Beta Bayesian lower bound (Zanella-Beguelin et al., ICML 2023).

    With independent Jeffreys posteriors FNR ~ Beta(1/2 + FN, 1/2 + TP) and
    FPR ~ Beta(1/2 + FP, 1/2 + TN), returns the eps at which the posterior mass inside
    the (eps, delta) privacy region R_eps equals alpha/2: P[eps_true >= eps_lo | data]
    = 1 - alpha/2 (the lower end of the equal-tailed 100(1 - alpha)% credible interval,
    as privacy-estimates' ``eps_lo_hi(alpha)`` computes it). This is a credible
    statement under the prior, not a frequentist guarantee (Nasr et al. 2023 warn it
    need not be a valid lower bound). Since R_0 has no mass, the result is > 0 even
    for a useless attack.

    ``method="quadrature"`` (default, deterministic, ~10-30 ms): 1-D Gauss-Legendre
    over the FPR posterior's quantiles with the FNR Beta CDF inside; brentq in eps on
    a coarse rule, then Newton steps on a fine one (|step| < 1e-7).
    ``method="monte-carlo"``: the alpha/2 quantile of the smallest eps containing
    ``samples`` posterior draws (seeded), as an independent check.
    Zero counts (FP = FN = 0) are fine in both. Goldens: (390,10,395,5) -> 3.758,
    (300,100,380,20) -> 2.361 (EVALUATION.md; the reference integrates with
    epsabs 5e-3 and xtol 1e-2, so they hold to about 2 decimals).
    """
    tpf, fnf, tnf, fpf = (float(c) for c in _check((tp, fn, tn, fp), delta, alpha))
    level = alpha / 2.0
    ax, bx, ay, by = 0.5 + fpf, 0.5 + tnf, 0.5 + fnf, 0.5 + tpf
    if method == "monte-carlo":
        rng = np.random.default_rng(seed)
        x, y = rng.beta(ax, bx, samples), rng.beta(ay, by, samples)
        return float(np.quantile(_eps_needed(x, y, delta), level))
    if method != "quadrature":
        raise ConfigError(f"method must be 'quadrature' or 'monte-carlo', got {method!r}")

    # Stage 1, coarse rule: bracket from the Jeffreys bound (usually within 1), brentq.
    xc = special.betaincinv(ax, bx, _COARSE[0])

    def f(eps: float) -> float:
        return _mass_in_region(xc, _COARSE[1], ay, by, eps, delta) - level

    if f(0.0) >= 0.0:  # R_0 is a band of width 2 delta: only for alpha ~ delta
        return 0.0
    lo = min(float(_eps_interval(_upper_jeffreys, tpf, fnf, tnf, fpf, delta, alpha)), _EPS_CAP)
    step = 0.5
    if lo > 0.0 and f(lo) > 0.0:
        hi = lo
        while True:
            lo = max(hi - step, 0.0)
            if lo == 0.0 or f(lo) <= 0.0:
                break
            hi, step = lo, 2 * step
    else:
        while True:
            hi = min(lo + step, _EPS_CAP)
            if f(hi) >= 0.0:
                break
            if hi == _EPS_CAP:
                return _EPS_CAP  # not reached for any realistic trial count
            lo, step = hi, 2 * step
    root = optimize.brentq(f, lo, hi, xtol=1e-4)
    # Stage 2, fine rule: Newton from the coarse root (the mass is smooth and
    # increasing in eps), two or three steps; bisection-safe fallback if it stalls.
    xf = special.betaincinv(ax, bx, _FINE[0])

    def g(eps: float) -> float:
        return _mass_in_region(xf, _FINE[1], ay, by, eps, delta) - level

    def g_slope(eps: float) -> tuple[float, float]:
        mass, slope = _mass_in_region(xf, _FINE[1], ay, by, eps, delta, derivative=True)
        return mass - level, slope

    for _ in range(8):
        val, slope = g_slope(root)
        if not slope > 0.0:
            break
        new = min(max(root - val / slope, 0.0, root - 0.5), root + 0.5)
        if abs(new - root) < 1e-7:
            return float(new)
        root = new
    lo, hi = max(root - 0.05, 0.0), root + 0.05
    while g(lo) > 0.0:
        if lo == 0.0:
            return 0.0
        lo = max(lo - 1.0, 0.0)
    while g(hi) < 0.0:
        if hi >= _EPS_CAP:
            return _EPS_CAP
        hi = min(hi + 1.0, _EPS_CAP)
    return float(optimize.brentq(g, lo, hi, xtol=1e-7))
