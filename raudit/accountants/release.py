"""Releasing the data-dependent eps of two-class Confident-GNMax with smooth sensitivity.

Papernot et al. 2018, section 4: the data-dependent RDP of a run's Confident-GNMax
queries at one Renyi order lambda (chosen before any vote) is a function of the votes;
it is released as rdp_dd + SS_beta * N(0, sigma_s^2) (GNSS, :mod:`.smooth`), which is
itself (lambda, rdp_gnss)-RDP. The released eps at delta is then

    eps = max(rdp_dd + SS_beta sigma_s Z, 0) + rdp_gnss + rdp_other + log(1/delta) / (lambda - 1)

with ``rdp_other`` what the run paid data-independently (``fixed``'s bounds histogram).

The released GNMax part uses :func:`~raudit.accountants.smooth.beta_gnmax` (Theorem 6
below q0, data-independent from q0 on), the function whose local sensitivity Algorithms
3-5 bound; it is never below the accountant's ``rdp_gnmax``. The local sensitivities of
a two-class histogram depend on the top count t only, so they are tabulated once per
(k, noise, order) and a run of Q queries costs two matrix-vector products:
LS_total(d) = sum_t n_thr[t] LS_thr(t, d) + sum_t n_ans[t] LS_gnmax(t, d), each query's
bound moving by at most its own LS when d teachers change (the outputs are fixed).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from raudit.accountants.gnmax import logpr_answered, logq_gnmax, rdp_gnmax, rdp_threshold
from raudit.accountants.smooth import (logq0_gnmax, ls_gnmax_at, rdp_gnss,
                                       smooth_sensitivity, threshold_rdp_by_top, _bl)
from raudit.errors import ConfigError

__all__ = ["GnssPlan", "Release", "ls_threshold_table", "ls_gnmax_two", "rdp_dd_two",
           "ls_total_two", "release_eps"]


@dataclass(frozen=True)
class GnssPlan:
    """The release's parameters, fixed before training: one order, beta, sigma_s."""

    order: float
    beta: float
    sigma_s: float

    def __post_init__(self) -> None:
        if not self.order > 1 or not self.sigma_s > 0 or not 0 < self.beta < 1 / (2 * self.order):
            raise ConfigError(f"GNSS needs order > 1, sigma_s > 0 and 0 < beta < 1/(2 order); got "
                              f"order={self.order!r}, beta={self.beta!r}, sigma_s={self.sigma_s!r}")

    @property
    def rdp(self) -> float:
        """What the release itself costs at ``order`` (Theorem 23)."""
        return rdp_gnss(self.beta, self.sigma_s, self.order)


@dataclass(frozen=True)
class Release:
    """One model's release: ``eps`` is public; the rest is what it was computed from."""

    eps: float
    rdp_dd: float  # the data-dependent RDP of the votes at the order (not released)
    ss: float  # its beta-smooth sensitivity (not released)
    noise: float  # ss * sigma_s * z, the noise added


@functools.lru_cache(maxsize=64)
def ls_threshold_table(k: int, threshold: float, sigma: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1, k + 1): row t is :func:`~raudit.accountants.smooth.ls_threshold` at top t
    (the largest step of the threshold check's RDP within distance d), all rows at once."""
    r = threshold_rdp_by_top(k, threshold, sigma, order)
    step = np.abs(np.diff(r))
    local = np.zeros(k + 1)
    local[:-1] = step
    local[1:] = np.maximum(local[1:], step)
    out = np.empty((k + 1, k + 1))
    out[:, 0] = local
    t = np.arange(k + 1)
    for d in range(1, k + 1):  # the ball grows by t - d and t + d
        lo = np.where(t - d >= 0, local[np.clip(t - d, 0, k)], 0.0)
        hi = np.where(t + d <= k, local[np.clip(t + d, 0, k)], 0.0)
        out[:, d] = np.maximum(out[:, d - 1], np.maximum(lo, hi))
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=64)
def _gnmax_two_points(k: int, sigma: float, order: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """log q and Algorithm 3's LS bound of the histogram (t, k - t), t = 0..k."""
    top = np.arange(k + 1, dtype=np.float64)
    lq = logq_gnmax(np.stack([np.maximum(top, k - top), np.minimum(top, k - top)], axis=1), sigma)
    ls = np.array([ls_gnmax_at(float(x), sigma, 2, order) for x in lq])
    return lq, ls


@functools.lru_cache(maxsize=4096)
def ls_gnmax_two(top: int, k: int, sigma: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) :func:`~raudit.accountants.smooth.ls_gnmax` of the histogram (top, k - top),
    top >= k / 2, from tabulated points (the same walk, one vote at a time)."""
    lq, ls = _gnmax_two_points(k, sigma, order)
    lq0 = logq0_gnmax(sigma, order)
    lq1 = math.log(_bl(math.exp(lq0), sigma, 2)) if math.isfinite(lq0) else -math.inf
    plateau = ls_gnmax_at(lq1, sigma, 2, order) if math.isfinite(lq1) else 0.0
    out = np.full(k + 1, plateau)
    t = int(top)
    if lq1 <= lq[t] <= lq0:
        return out
    out[0] = ls[t]
    d, left = 0, lq[t] > lq0
    while d < k and ((left and lq[t] > lq0 and k - t > 0) or (not left and lq[t] < lq1)):
        d += 1
        t = t + 1 if left else max(t - 1, k - t + 1)  # widen, or narrow the gap by one vote
        out[d] = ls[t]
    return out


def _tops(counts: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
    tops: npt.NDArray[np.int64] = np.round(counts.max(axis=-1)).astype(np.int64)
    return tops


def rdp_dd_two(counts: npt.ArrayLike, answered: npt.ArrayLike, threshold: float, sigma1: float,
               sigma2: float, order: float) -> npt.NDArray[np.float64]:
    """(M,) the released data-dependent RDP at ``order`` of (M, Q, 2) votes: the threshold
    check on every query, beta_gnmax on the answered ones."""
    votes = np.asarray(counts, dtype=np.float64)
    ans = np.asarray(answered, dtype=bool)
    thr = rdp_threshold(logpr_answered(votes, threshold, sigma1), sigma1, [order])[..., 0]
    lq = logq_gnmax(votes, sigma2)
    gn = rdp_gnmax(lq, sigma2, [order])[..., 0]
    gn = np.where(lq >= logq0_gnmax(sigma2, order), order / sigma2 ** 2, gn)
    out: npt.NDArray[np.float64] = thr.sum(axis=1) + (gn * ans).sum(axis=1)
    return out


def ls_total_two(counts: npt.ArrayLike, answered: npt.ArrayLike, k: int, threshold: float,
                 sigma1: float, sigma2: float, order: float) -> npt.NDArray[np.float64]:
    """(k + 1,) LS(x, d) of one model's total: ``counts`` (Q, 2), ``answered`` (Q,)."""
    tops = _tops(np.asarray(counts, dtype=np.float64))
    ans = np.asarray(answered, dtype=bool)
    n_thr = np.bincount(tops, minlength=k + 1)
    total: npt.NDArray[np.float64] = n_thr @ ls_threshold_table(k, float(threshold), float(sigma1),
                                                                float(order))
    for t, n in zip(*np.unique(tops[ans], return_counts=True)):
        total = total + n * ls_gnmax_two(int(t), k, float(sigma2), float(order))
    return total


def release_eps(counts: npt.ArrayLike, answered: npt.ArrayLike, *, k: int, threshold: float,
                sigma1: float, sigma2: float, plan: GnssPlan, delta: float, z: npt.ArrayLike,
                rdp_other: float = 0.0) -> list[Release]:
    """The released eps per model of (M, Q, 2) votes with standard normal draws ``z`` (M,)."""
    votes = np.asarray(counts)
    if votes.ndim != 3 or votes.shape[2] != 2:
        raise ConfigError(f"release_eps takes two-class votes (models, queries, 2), got {votes.shape}")
    if not 0 < delta < 1:
        raise ConfigError(f"delta must lie in (0, 1), got {delta!r}")
    rdp = rdp_dd_two(votes, answered, threshold, sigma1, sigma2, plan.order)
    tail = plan.rdp + float(rdp_other) + math.log(1 / delta) / (plan.order - 1)
    out = []
    for m, zm in enumerate(np.asarray(z, dtype=np.float64)):
        ls = ls_total_two(votes[m], np.asarray(answered)[m], k, threshold, sigma1, sigma2, plan.order)
        ss = smooth_sensitivity(ls, plan.beta)
        noise = ss * plan.sigma_s * float(zm)
        # RDP is never negative: clipping the noisy value at 0 is post-processing of the release
        out.append(Release(float(max(rdp[m] + noise, 0.0) + tail), float(rdp[m]), ss, noise))
    return out

