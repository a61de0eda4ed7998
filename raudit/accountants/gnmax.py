"""Data-dependent RDP of Confident-GNMax (Papernot et al., ICLR 2018), as pure functions.

One Confident-GNMax query on a vote histogram ``counts`` (C bins, integer votes of k
teachers) is two Gaussian mechanisms:

* the threshold check ``max(counts) + N(0, sigma1^2) >= T`` (L2 sensitivity 1 of the max),
  charged on EVERY query, answered or not;
* GNMax ``argmax(counts + N(0, sigma2^2))`` (L2 sensitivity sqrt 2), charged only when the
  threshold was crossed.

Each has the data-independent RDP ``alpha / (2 sigma1^2)`` (threshold) and
``alpha / sigma2^2`` (GNMax), and the data-dependent bound of the paper's Theorem 6
(``rdp_gnmax``): with q an upper bound on Pr[outcome != the likely outcome],
mu2 = sigma sqrt(log 1/q), mu1 = mu2 + 1, the bound applies to orders alpha < mu1 when
mu2 > 1, q <= exp((mu2 - 1) eps2) / (mu1/(mu1-1) * mu2/(mu2-1))^mu2 and
log(1/q) > eps2 (= mu2 / sigma^2); elsewhere the data-independent value is kept. q is
the union bound of Proposition 7 for GNMax (capped at 1 - 1/C) and min(p, 1 - p) with
p = Pr[answered] for the threshold (max(counts) rounded, as the reference code does).

RDP composes by addition over coordinates, samples and steps; eps(delta) is
``min_alpha RDP(alpha) + log(1/delta) / (alpha - 1)`` (the conversion the reference code
uses). The functions mirror the reference code's formulas (``pate_core.py`` of the
PATE 2018 release, which G-PATE ships) but are vectorised over queries and orders.

Known issue, kept as published: the data-dependent value depends on the votes, so releasing
it (and stopping on it) is not itself private; the paper's remedy, smooth sensitivity of
the bound, is not applied by G-PATE and not here.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.special import log_ndtr

__all__ = ["DEFAULT_ORDERS", "eps_from_rdp", "logpr_answered", "logq_gnmax", "rdp_confident_gnmax",
           "rdp_gnmax", "rdp_gnmax_independent", "rdp_threshold", "rdp_threshold_independent"]

#: G-PATE's default orders: 1.1 then 2, 3, ..., 199.
DEFAULT_ORDERS = np.concatenate([[1.1], np.arange(2, 200, dtype=np.float64)])


def _orders(orders: ArrayLike) -> np.ndarray:
    o = np.atleast_1d(np.asarray(orders, dtype=np.float64))
    if o.ndim != 1 or not np.all(o > 1):
        raise ValueError(f"RDP orders must be a 1-d list of numbers > 1, got {orders!r}")
    return o


def _log1mexp(x: np.ndarray) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, stable at both ends (-inf at x = 0)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        out: np.ndarray = np.where(x < -1.0, np.log1p(-np.exp(np.minimum(x, -1.0))),
                                   np.log(-np.expm1(np.minimum(x, 0.0))))
    return out  # (numpy's ufunc stubs give Any)


def rdp_gnmax_independent(sigma: float, orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of GNMax (sensitivity sqrt 2): alpha / sigma^2."""
    return _orders(orders) / float(sigma) ** 2


def rdp_threshold_independent(sigma: float, orders: ArrayLike) -> np.ndarray:
    """Data-independent RDP of the threshold check (sensitivity 1): alpha / (2 sigma^2)."""
    return _orders(orders) / (2.0 * float(sigma) ** 2)


def logq_gnmax(counts: ArrayLike, sigma: float) -> np.ndarray:
    """Upper bound on log Pr[GNMax's answer != argmax(counts)] (Proposition 7), per query.

    ``counts`` (..., C) -> (...): log sum_{j != j*} Pr[N(0, 2 sigma^2) >= n_j* - n_j],
    capped at log(1 - 1/C). The first maximal bin is j* (np.argmax's tie rule).
    """
    c = np.asarray(counts, dtype=np.float64)
    n_bins = c.shape[-1]
    top = np.argmax(c, axis=-1)
    gaps = np.take_along_axis(c, top[..., None], axis=-1) - c
    # vote gaps are few distinct integers: log_ndtr once per value (the same bits)
    uniq, inv = np.unique(gaps, return_inverse=True)
    terms = log_ndtr(-uniq / (math.sqrt(2.0) * sigma))[inv.reshape(gaps.shape)]
    terms = np.where(np.arange(n_bins) == top[..., None], -np.inf, terms)  # leave j* out
    with np.errstate(divide="ignore"):
        logq = np.logaddexp.reduce(terms, axis=-1)
    out: np.ndarray = np.minimum(logq, math.log(1.0 - 1.0 / n_bins))
    return out  # (numpy's ufunc stubs give Any)


def logpr_answered(counts: ArrayLike, threshold: float, sigma: float) -> np.ndarray:
    """log Pr[round(max(counts)) + N(0, sigma^2) >= threshold], per query (..., C) -> (...)."""
    top = np.round(np.max(np.asarray(counts, dtype=np.float64), axis=-1))
    out: np.ndarray = log_ndtr((top - threshold) / sigma)
    return out  # (scipy has no stubs here)


def rdp_gnmax(logq: ArrayLike, sigma: float, orders: ArrayLike) -> np.ndarray:
    """Theorem 6: RDP of a Gaussian noisy max given log q, per query and order.

    ``logq`` (...) -> (..., L). The data-independent alpha / sigma^2 wherever the
    data-dependent bound's conditions fail (see the module docstring); 0 where q = 0.
    """
    table, inv = _rdp_gnmax_table(logq, sigma, orders)
    out: np.ndarray = table[inv]
    return out  # (numpy's stubs: fancy indexing gives Any)


def _rdp_gnmax_table(logq: ArrayLike, sigma: float, orders: ArrayLike
                     ) -> tuple[np.ndarray, np.ndarray]:
    """:func:`rdp_gnmax` as (U, L) values of the distinct log q and indices (...) into them.

    The bound is elementwise in log q, and a step's thousands of queries hold few distinct
    vote histograms: each distinct value is evaluated once (the same ufuncs on the same
    values, so the same bits); this was ~70 % of a batched G-PATE step.
    """
    o = _orders(orders)
    lq = np.asarray(logq, dtype=np.float64)
    if np.any(lq > 0):
        raise ValueError("log q must be <= 0")
    uniq, inv = np.unique(lq.ravel(), return_inverse=True)
    return _rdp_gnmax(uniq, float(sigma), o), inv.reshape(lq.shape)


def _query_sum(table: np.ndarray, inv: np.ndarray, weight: np.ndarray | None = None) -> np.ndarray:
    """``(table[inv] * weight[..., None]).sum(axis=1)`` for (M, Q) ``inv`` without building the
    (M, Q, L) array: numpy reduces a middle axis by adding its rows in order, q = 0, 1, ...,
    and so does this loop, so the result has the same bits (tests/accountants/test_gnmax.py)."""
    m, q = inv.shape
    if q == 0:
        return np.zeros((m, table.shape[1]))
    cols = np.ascontiguousarray(inv.T)  # one query's indices per row
    w = None if weight is None else np.ascontiguousarray(weight.T)[..., None]
    acc: np.ndarray = table[cols[0]] if w is None else table[cols[0]] * w[0]
    for j in range(1, q):
        acc += table[cols[j]] if w is None else table[cols[j]] * w[j]
    return acc


def _rdp_gnmax(logq: np.ndarray, sigma: float, o: np.ndarray) -> np.ndarray:
    """:func:`rdp_gnmax` on checked float64 ``logq`` and orders ``o``."""
    var = sigma ** 2
    out = np.broadcast_to(o / var, logq.shape + o.shape).copy()
    lq = logq[..., None]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        mu2 = np.sqrt(var * -lq)
        mu1 = mu2 + 1.0
        rdp2, rdp1 = mu2 / var, mu1 / var
        log_a2 = (mu2 - 1.0) * rdp2
        # q must lie where the bound increases in q and A is positive (Theorem 6's conditions)
        cond = (mu2 > 1.0) & (lq <= log_a2 - mu2 * (np.log1p(1.0 / (mu1 - 1.0))
                                                    + np.log1p(1.0 / (mu2 - 1.0)))) & (-lq > rdp2)
        log1q = _log1mexp(lq)
        log_a = (o - 1.0) * (log1q - _log1mexp((lq + rdp2) * (1.0 - 1.0 / mu2)))
        log_b = (o - 1.0) * (rdp1 - lq / (mu1 - 1.0))
        bound = np.logaddexp(log1q + log_a, lq + log_b) / (o - 1.0)
    use = cond & (mu1 > o) & np.isfinite(bound)
    out = np.where(use, np.minimum(out, bound), out)
    return np.where(np.isneginf(lq), 0.0, out)  # a fixed outcome costs nothing


def rdp_threshold(logpr: ArrayLike, sigma: float, orders: ArrayLike) -> np.ndarray:
    """RDP of the threshold check given log Pr[answered]: Theorem 6 with q = min(p, 1 - p)
    and sigma sqrt 2 (sensitivity 1 instead of GNMax's 2 in the squared form)."""
    lp = np.asarray(logpr, dtype=np.float64)
    return rdp_gnmax(np.minimum(lp, _log1mexp(lp)), math.sqrt(2.0) * sigma, orders)


def rdp_confident_gnmax(counts: ArrayLike, answered: ArrayLike, threshold: float, sigma1: float,
                        sigma2: float, orders: ArrayLike, *, data_dependent: bool = True,
                        sensitivity: int = 1) -> np.ndarray:
    """Total RDP of a set of Confident-GNMax queries, summed over the query axes.

    ``counts`` (M, Q, C) vote histograms, ``answered`` (M, Q) whether the threshold was
    crossed -> (M, L). ``data_dependent=False`` charges the data-independent curves
    (threshold on every query, GNMax on answered ones). ``sensitivity``: the teachers whose
    votes one record moves (1 for a partition).

    A record moving s votes moves the top count by s and the histogram by s sqrt 2: both
    Gaussians cost what sigma / s costs one, so the data-independent curves take sigma / s.
    Theorem 6 holds for any mechanism with those curves, so the data-dependent bound keeps
    q (a probability under the noise actually drawn, sigma) and takes sigma / s for the
    curves it is built on.
    """
    c = np.asarray(counts)
    ans = np.asarray(answered, dtype=bool)
    if c.ndim != 3 or ans.shape != c.shape[:2]:
        raise ValueError(f"counts must be (models, queries, bins) and answered (models, queries); "
                         f"got {c.shape} and {ans.shape}")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) \
            or sensitivity < 1:
        raise ValueError(f"sensitivity must be an integer >= 1, got {sensitivity!r}")
    o = _orders(orders)
    n_answered = ans.sum(axis=1)[:, None]
    s1, s2 = sigma1 / sensitivity, sigma2 / sensitivity  # the curves' scales (docstring)
    if not data_dependent:
        flat: np.ndarray = c.shape[1] * rdp_threshold_independent(s1, o)[None, :] \
            + n_answered * rdp_gnmax_independent(s2, o)[None, :]
        return flat
    lp = logpr_answered(c, threshold, sigma1)
    thresh = _query_sum(*_rdp_gnmax_table(np.minimum(lp, _log1mexp(lp)), math.sqrt(2.0) * s1, o))
    gn = _query_sum(*_rdp_gnmax_table(logq_gnmax(c, sigma2), s2, o), ans)
    total: np.ndarray = thresh + gn
    return total


def eps_from_rdp(rdp: ArrayLike, orders: ArrayLike, delta: float) -> np.ndarray:
    """min over orders of rdp + log(1/delta) / (alpha - 1); ``rdp`` (..., L) -> (...)."""
    o = _orders(orders)
    out: np.ndarray = np.min(np.asarray(rdp, dtype=np.float64) + math.log(1.0 / delta) / (o - 1.0),
                             axis=-1)
    return out  # (numpy's stubs give Any)
