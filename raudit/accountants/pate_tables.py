"""The per-query moment increment of each PATE moments variant, for every vote gap.

A query's increment depends on the query only through the vote gap ``Delta = |2 n1 -
k|``, so each variant is a table of shape ``(k + 1, L)``: row ``Delta``, column ``l - 1``
(the log-moment of order ``l``). These are the formulas, each written as its source
writes it (the faithful variants keep upstream's arithmetic, NaN and inf included);
:mod:`raudit.accountants.pate` counts the queries per gap against them, caches the
tables and registers the variants. Split from there: the math apart from the counting.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]


def _gap_lam(k: int, lam: float) -> Floats:
    """``lam * Delta`` for every possible ``Delta = 0..k`` (column vector)."""
    return (lam * np.arange(k + 1, dtype=np.float64))[:, None]


def _q_two_noise(x: Floats) -> Floats:
    # Written as upstream writes it; exp overflows to inf for x > 709, and q = 0 is
    # then the exact limit, so the warning is silenced rather than avoided.
    with np.errstate(over="ignore"):
        return (2.0 + x) / (4.0 * np.exp(x))


def _orders(L: int) -> Floats:
    return np.arange(1, L + 1, dtype=np.float64)[None, :]


def _data_dependent_arg(q: Floats, lam2: float, l: Floats) -> Floats:
    """The argument of the log in PATE's Theorem 2: (1-q)((1-q)/(1-e^{2lam}q))^l + q e^{2lam l}.

    Computed literally (no rescue): the faithful variants must reproduce what the
    upstream arithmetic gives, including inf, negative values and NaN.
    """
    ratio = (1.0 - q) / (1.0 - np.exp(lam2) * q)
    arg: Floats = (1.0 - q) * ratio**l + q * np.exp(lam2 * l)  # ndarray ** ndarray reads as Any
    return arg


def table_paper(k: int, lam: float, L: int) -> Floats:
    x, l = _gap_lam(k, lam), _orders(L)
    q = _q_two_noise(x)
    independent = 2.0 * lam**2 * l * (l + 1.0)
    with np.errstate(all="ignore"):
        arg = _data_dependent_arg(q, 2.0 * lam, l)
        dependent = np.log(arg)
    # When the argument is <= 0 or not finite the formula is undefined (1 - e^{2lam} q
    # <= 0 happens for lam >= log(2)/2). The min of two bounds then reduces to the one
    # that is always valid, the data-independent 2 lam^2 l(l+1) of a (2 lam)-DP query.
    # (+inf would pick it anyway.) The q-validity condition itself is NOT checked: that
    # is the paper's discrepancy, fixed in ``fixed``.
    dependent = np.where(np.isfinite(arg) & (arg > 0), dependent, np.inf)
    return np.minimum(independent, dependent)


def table_updated(k: int, lam: float, L: int) -> Floats:
    d = np.arange(k + 1, dtype=np.float64)[:, None]
    l = _orders(L)  # upstream loops l = 0..19 and uses l+1: the same orders 1..L
    with np.errstate(all="ignore"):
        # upstream computes q in log space: exp(log(2 + lam D) - log 4 - lam D)
        q = np.exp(np.log(2.0 + lam * d) - np.log(4.0) - lam * d)
        temp2: Floats = (1.0 - q) * ((1.0 - q) / (1.0 - q * np.exp(2.0 * lam))) ** l \
            + q * np.exp(2.0 * lam * l)
        # np.min([temp1, log(temp2)]) upstream: NaN (log of a negative) propagates.
        return np.minimum(2.0 * lam**2 * l * (l + 1.0), np.log(temp2))


def table_synthcity(k: int, lam: float, L: int) -> Floats:
    x = _gap_lam(k, lam)
    lidx = _orders(L) - 1.0
    q = _q_two_noise(x)
    upper = 2.0 * lam**2 * (lidx + 1.0) * (lidx + 2.0)
    with np.errstate(all="ignore"):
        t: Floats = (1.0 - q) * ((1.0 - q) / (1.0 - np.exp(2.0 * lam) * q)) ** (lidx + 1.0)
        # the index bug: exp(2 lam lidx + 1) where exp(2 lam (lidx + 1)) was meant
        t = np.log(t + q * np.exp(2.0 * lam * lidx + 1.0))
    return np.clip(t, 0.0, upper)  # np.clip keeps NaN, as upstream


def table_missing_log(k: int, lam: float, L: int) -> Floats:
    x, l = _gap_lam(k, lam), _orders(L)
    q = _q_two_noise(x)
    with np.errstate(all="ignore"):
        t = _data_dependent_arg(q, 2.0 * lam, l)  # the log is missing upstream
    return np.minimum(t, 2.0 * lam**2 * l * (l + 1.0))


def _pate_bound(q: Floats, eps: float, l: Floats) -> Floats:
    """PATE's three-term bound on the log-moment of order l of an eps-DP query.

    min( eps^2 l(l+1)/2,  eps*l,  log((1-q)((1-q)/(1-e^eps q))^l + q e^{eps l}) ),
    the last term only when q < (e^eps - 1)/(e^{2 eps} - 1) (Papernot et al. 2017,
    Theorem 2; the first is Bun & Steinke 2016 for eps-DP, the second is pure DP).
    The log term is evaluated in log space, so it never overflows.
    """
    independent = np.minimum(0.5 * eps**2 * l * (l + 1.0), eps * l)
    valid = q < np.expm1(eps) / np.expm1(2.0 * eps)  # = 1/(e^eps + 1)
    qv = np.where(valid, q, 0.0)  # keep the arithmetic finite where unused
    with np.errstate(divide="ignore"):
        log_ratio = np.log1p(-qv) - np.log1p(-np.exp(eps) * qv)
        dependent = np.logaddexp(np.log1p(-qv) + l * log_ratio, np.log(qv) + eps * l)
    return np.minimum(independent, np.where(valid, dependent, np.inf))


def table_fixed(k: int, lam: float, L: int) -> Floats:
    # Noisy argmax over the two counts, each with Lap(1/lam): a (2 lam)-DP query with
    # q = (2 + lam Delta)/(4 exp(lam Delta)) (Papernot et al. 2017, Theorem 3).
    return _pate_bound(_q_two_noise(_gap_lam(k, lam)), 2.0 * lam, _orders(L))


def table_fixed_threshold(k: int, lam: float, L: int) -> Floats:
    # One Lap(1/lam) on n1, thresholded at k/2 (what every port does): n1 has
    # sensitivity 1, so the query is lam-DP, and the answer differs from the majority
    # with probability exactly P[Lap(1/lam) beyond Delta/2] = exp(-lam Delta/2)/2.
    q = 0.5 * np.exp(-0.5 * _gap_lam(k, lam))
    return _pate_bound(q, lam, _orders(L))
