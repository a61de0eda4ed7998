"""Smooth sensitivity of the data-dependent PATE bounds, and the Gaussian release (GNSS).

Papernot et al. 2018, "Scalable private learning with PATE", section 4 and appendix
B/C: the data-dependent RDP of Confident-GNMax (:mod:`raudit.accountants.gnmax`) is
itself a function of the votes; releasing it (or stopping on it) needs its own privacy.
The paper releases eps_dd(lambda) + SS_beta * N(0, sigma_s^2), where SS_beta is the
beta-smooth sensitivity of eps_dd, SS_beta(x) = max_d exp(-beta d) LS(x, d) with LS(x,
d) the largest local sensitivity over vote histograms at distance <= d (one teacher
changing its vote is distance 1). That release is itself (lambda, eps)-RDP for
1 < lambda < 1 / (2 beta) with (Theorem 23)

    eps_gnss(lambda) = lambda exp(2 beta) / sigma_s^2 + (beta lambda - log(1 - 2 lambda beta) / 2) / (lambda - 1)

Pieces, all pure functions of one order lambda:

* :func:`rdp_gnss` (Theorem 23) and :func:`smooth_sensitivity` (the discounted max);
* the threshold check: its data-dependent RDP depends on the votes only through the
  top count v in {0..k}, so LS at v is the largest step |r(v +- 1) - r(v)|, and
  LS(x, d) the largest over v within d of the actual top (:func:`ls_threshold`);
* GNMax (Algorithms 3-5 of the appendix): the RDP bound beta(q) is non-decreasing in
  the union bound q on [0, q0] (data-dependent) and constant above (data-independent);
  one changed vote moves every gap by at most 2, so a neighbour's q lies in
  [bl(q), bu(q)] with bu/bl the erfc shifts by 1/sigma (:func:`ls_gnmax`); q is
  clamped to q1 = bl(q0) inside [q1, q0] (the plateau where LS is largest), and the
  distance-d bound walks the histogram toward larger or smaller q one vote at a time.

Conditions C5-C6 of the appendix (monotonicity of beta(q) and of beta(bu(q)) - beta(q))
are assumed, as the paper checks them numerically for its settings.
"""

from __future__ import annotations

import functools
import math

import numpy as np
import numpy.typing as npt
from scipy import special

from raudit.accountants.gnmax import logpr_answered, logq_gnmax, rdp_gnmax, rdp_threshold

__all__ = ["rdp_gnss", "beta_gnmax", "smooth_sensitivity", "threshold_rdp_by_top", "ls_threshold",
           "logq0_gnmax", "ls_gnmax_at", "ls_gnmax", "ls_confident_total", "gnss_release"]


def rdp_gnss(beta: float, sigma: float, order: float) -> float:
    """Theorem 23: RDP at ``order`` of releasing f(x) + SS_beta(x) N(0, sigma^2); needs
    1 < order < 1 / (2 beta)."""
    if beta < 0 or sigma <= 0:
        raise ValueError(f"beta must be >= 0 and sigma > 0, got {beta!r}, {sigma!r}")
    if not 1 < order or (beta > 0 and not order < 1 / (2 * beta)):
        raise ValueError(f"order {order!r} outside (1, 1/(2 beta)) = (1, {1 / (2 * beta) if beta else math.inf:g})")
    return (order * math.exp(2 * beta) / sigma ** 2
            + (beta * order - 0.5 * math.log1p(-2 * order * beta)) / (order - 1))


def smooth_sensitivity(ls: npt.ArrayLike, beta: float) -> float:
    """max_d exp(-beta d) LS(d) over the given local sensitivities at distance d = 0, 1, ..."""
    ls = np.asarray(ls, dtype=np.float64)
    return float(np.max(ls * np.exp(-beta * np.arange(ls.size)))) if ls.size else 0.0


# -- the threshold check ---------------------------------------------------------------

def threshold_rdp_by_top(k: int, threshold: float, sigma: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) data-dependent RDP of one threshold check for each top count v = 0..k."""
    hist = np.zeros((k + 1, 1))
    hist[:, 0] = np.arange(k + 1)
    return rdp_threshold(logpr_answered(hist, threshold, sigma), sigma, [order])[:, 0]


def ls_threshold(top: int, k: int, threshold: float, sigma: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) LS(x, d), d = 0..k, of the threshold check's RDP at top count ``top``."""
    r = threshold_rdp_by_top(k, threshold, sigma, order)
    step = np.abs(np.diff(r))  # step[v] = |r(v + 1) - r(v)|
    local = np.zeros(k + 1)  # local sensitivity at each v: the larger neighbouring step
    local[:-1] = step
    local[1:] = np.maximum(local[1:], step)
    v = np.arange(k + 1)
    return np.array([local[np.abs(v - top) <= d].max() for d in range(k + 1)])


# -- GNMax -----------------------------------------------------------------------------

def beta_gnmax(logq: float, sigma: float, order: float) -> float:
    """beta(q) of the smooth-sensitivity analysis at one order: Theorem 6's bound below
    q0, the data-independent order / sigma^2 from q0 on (the reference release's definition,
    so beta is monotone in q; it is never below the accountant's ``rdp_gnmax``)."""
    if logq >= logq0_gnmax(sigma, order):
        return order / sigma ** 2
    return float(rdp_gnmax(np.array([min(logq, 0.0)]), sigma, [order])[0, 0])


def _bu(q: float, sigma: float, m: int) -> float:
    """Largest union bound q of a neighbour (every gap 2 votes smaller)."""
    return min(1.0, float((m - 1) / 2 * special.erfc(special.erfcinv(2 * q / (m - 1)) - 1 / sigma)))


def _bl(q: float, sigma: float, m: int) -> float:
    """Smallest union bound q of a neighbour (every gap 2 votes larger)."""
    return float((m - 1) / 2 * special.erfc(special.erfcinv(2 * q / (m - 1)) + 1 / sigma))


@functools.lru_cache(maxsize=1024)
def logq0_gnmax(sigma: float, order: float) -> float:
    """log q0: above it the data-independent bound is the smaller (beta(q) is flat).

    Searched below the natural upper bound of the reference release, min(-(1 + 1/sigma)^2,
    -((order - 0.99) / sigma)^2, -1/sigma^2), where Theorem 6's conditions hold; a larger
    q where the bound would dip under the data-independent value again is not used."""
    ind = order / sigma ** 2

    def dep_below(lq: float) -> bool:
        return float(rdp_gnmax(np.array([lq]), sigma, [order])[0, 0]) < ind * (1 - 1e-12)
    hi = min(-(1 + 1 / sigma) ** 2, -((order - 0.99) / sigma) ** 2, -1 / sigma ** 2)
    if dep_below(hi):
        return hi
    lo = 2.0 * hi
    while not dep_below(lo):
        lo *= 1.5
        if lo < -1e6:
            return -math.inf  # never data-dependent at this order
    # imported here: scipy.optimize costs every process that loads a PATE generator (a Ray
    # actor's start-up) ~0.5 CPU-s, and only this data-dependent search needs it
    from scipy import optimize

    return float(optimize.bisect(lambda lq: 1.0 if dep_below(lq) else -1.0, lo, hi, xtol=1e-12))


def ls_gnmax_at(logq: float, sigma: float, m: int, order: float) -> float:
    """Algorithm 3: an upper bound on the local sensitivity of beta at a histogram with
    union bound exp(logq), over m classes."""
    lq0 = logq0_gnmax(sigma, order)
    lq1 = math.log(_bl(math.exp(lq0), sigma, m)) if math.isfinite(lq0) else -math.inf
    if lq1 <= logq <= lq0:
        logq = lq1  # the worst point of the plateau
    q = math.exp(logq)
    b = beta_gnmax(logq, sigma, order)
    up = beta_gnmax(math.log(_bu(q, sigma, m)), sigma, order) - b
    bl = _bl(q, sigma, m)
    down = b - (beta_gnmax(math.log(bl), sigma, order) if bl > 0 else 0.0)
    return max(up, down)


def ls_gnmax(counts: npt.ArrayLike, sigma: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) upper bounds on LS(x, d), d = 0..k (k = sum of ``counts``), for GNMax at
    the histogram ``counts`` (Algorithms 4-5: walk toward the plateau one vote at a time,
    then stay on it)."""
    votes = sorted((int(c) for c in np.asarray(counts).ravel()), reverse=True)
    m, k = len(votes), int(sum(votes))
    lq0 = logq0_gnmax(sigma, order)
    lq1 = math.log(_bl(math.exp(lq0), sigma, m)) if math.isfinite(lq0) else -math.inf
    plateau = ls_gnmax_at(lq1, sigma, m, order) if math.isfinite(lq1) else 0.0
    out = np.full(k + 1, plateau)
    logq = float(logq_gnmax(np.array(votes, dtype=float), sigma))
    if lq1 <= logq <= lq0:
        return out
    out[0] = ls_gnmax_at(logq, sigma, m, order)
    d, left = 0, logq > lq0  # left: q too large (flat, data-independent): widen the gap
    while d < k and ((left and logq > lq0 and votes[1] > 0) or (not left and logq < lq1)):
        d += 1
        if left:
            votes[0] += 1
            votes[1] -= 1
            votes[1:] = sorted(votes[1:], reverse=True)
        else:
            votes[0] -= 1
            votes[1] += 1
            votes = sorted(votes, reverse=True)
        logq = float(logq_gnmax(np.array(votes, dtype=float), sigma))
        out[d] = ls_gnmax_at(logq, sigma, m, order)
    return out


def ls_confident_total(counts: npt.ArrayLike, answered: npt.ArrayLike, threshold: float,
                       sigma1: float, sigma2: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) upper bounds on LS(x, d) of the total data-dependent RDP at ``order`` of a
    run of Confident-GNMax queries (``counts`` (Q, C), ``answered`` (Q,)): a dataset at
    distance d moves every query's histogram by at most d votes, so the total moves by at
    most the sum of the per-query bounds (threshold on every query, GNMax on the answered
    ones, the outputs being fixed by the release)."""
    counts = np.asarray(counts)
    k = int(counts[0].sum())
    total = np.zeros(k + 1)
    for c, a in zip(counts, np.asarray(answered, dtype=bool)):
        total += ls_threshold(int(round(c.max())), k, threshold, sigma1, order)
        if a:
            total += ls_gnmax(c, sigma2, order)
    return total


def gnss_release(value: float, ss: float, sigma_s: float, rng: np.random.Generator) -> float:
    """The sanitised release of a data-dependent value: value + ss * N(0, sigma_s^2)."""
    return float(value + ss * sigma_s * rng.standard_normal())
