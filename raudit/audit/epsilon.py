"""Empirical epsilon lower bounds from a distinguishing game's confusion counts.

A membership attack on an (eps, delta)-DP mechanism has false positive and false
negative rates (FPR, FNR) inside the privacy region
``FPR + e^eps FNR >= 1 - delta`` and ``e^eps FPR + FNR >= 1 - delta`` (Kairouz et al.
2015). Upper confidence bounds a >= FPR and b >= FNR therefore give

    eps >= eps_emp = max{ log((1 - a - delta)/b), log((1 - b - delta)/a), 0 }

(``shared/spec/EVALUATION.md`` section 3). The estimators differ in how a and b (or
the joint posterior of the rates) are obtained. Positives are members ("in"): TP and
FN count the "in" trials, TN and FP the "out" trials.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, overload

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import special

from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA

__all__ = ["eps_clopper_pearson", "eps_jeffreys"]

Floats = NDArray[np.float64]
#: an upper confidence limit on a rate: (errors, trials, tail) -> the limit
Upper = Callable[[Floats, Floats, float], Floats]
#: one count (a scalar call returns a float; arrays of counts, an array of bounds)
Count = int | float | np.integer[Any] | np.floating[Any]


def _check(counts: Iterable[ArrayLike], delta: float, alpha: float) -> list[Floats]:
    arrs = [np.asarray(c) for c in counts]
    for c in arrs:
        if np.any(c < 0) or np.any(c != np.floor(c)):
            raise ConfigError(f"counts must be integers >= 0, got {counts}")
    if not 0.0 <= delta < 1.0:
        raise ConfigError(f"delta must lie in [0, 1), got {delta!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    return [c.astype(np.float64) for c in arrs]


def _beta_isf(tail: float, a: Floats, b: Floats) -> Floats:
    # scipy.stats.beta.isf's own kernel without its argument checks (the same bits for
    # tail in (0, 1) and a, b > 0, which every caller here passes; ~60x faster a call:
    # the audit's curve bound and the calibration tests take thousands)
    out: Floats = special.betainccinv(a, b, tail)  # scipy has no stubs here
    return out


def _upper_cp(x: Floats, n: Floats, tail: float) -> Floats:
    # Clopper-Pearson upper limit: the (1 - tail) quantile of Beta(x + 1, n - x);
    # 1 when every trial was an error (or there were none).
    safe = np.where(x < n, n - x, 1.0)
    return np.where(x < n, _beta_isf(tail, x + 1.0, safe), 1.0)


def _upper_jeffreys(x: Floats, n: Floats, tail: float) -> Floats:
    # Jeffreys interval: quantile of the Beta(x + 1/2, n - x + 1/2) posterior, as
    # statsmodels' proportion_confint(method="jeffreys") computes it (no boundary fix).
    safe = np.maximum(n, 1.0)
    return np.where(n > 0, _beta_isf(tail, x + 0.5, safe - x + 0.5), 1.0)


def _eps_from_upper(a: Floats | np.float64, b: Floats | np.float64, delta: float) -> Floats:
    """max{log((1-a-delta)/b), log((1-b-delta)/a), 0}; a term whose numerator is <= 0
    constrains nothing and is dropped."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(1.0 - a - delta > 0, np.log((1.0 - a - delta) / b), -np.inf)
        t2 = np.where(1.0 - b - delta > 0, np.log((1.0 - b - delta) / a), -np.inf)
    return np.maximum(np.maximum(t1, t2), 0.0)


def _eps_interval(upper: Upper, tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike,
                  delta: float, alpha: float) -> Floats:
    tpf, fnf, tnf, fpf = _check((tp, fn, tn, fp), delta, alpha)
    # Each rate gets a two-sided interval at level alpha/2, so each tail is alpha/4
    # (2.5% for alpha = 0.1), as privacy-estimates' compute_eps_lo does it.
    tail = alpha / 4.0
    a = upper(fpf, fpf + tnf, tail)
    b = upper(fnf, fnf + tpf, tail)
    return _eps_from_upper(a, b, delta)


@overload
def eps_clopper_pearson(tp: Count, fn: Count, tn: Count, fp: Count, *, delta: float = ...,
                        alpha: float = ...) -> float: ...
@overload
def eps_clopper_pearson(tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike, *,
                        delta: float = ..., alpha: float = ...) -> float | Floats: ...
def eps_clopper_pearson(tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike, *,
                        delta: float = STUDY_DELTA, alpha: float = 0.1) -> float | Floats:
    """Epsilon lower bound from Clopper-Pearson upper limits on FPR and FNR.

    Returns eps_lo such that eps_lo <= eps with confidence at least 100(1 - alpha/2)%
    (hence at least 100(1 - alpha)%) for any (eps, delta)-DP mechanism, when the
    trials are independent and the threshold was fixed before seeing them: each upper
    limit fails with probability <= alpha/4 (union bound over the two rates).
    Source: privacy-estimates' ``compute_eps_lo(method="beta")`` as the study calls it
    (alpha = 0.1); goldens in EVALUATION.md section 3 (400/400, no errors: 4.682).
    Vectorised over array counts.
    """
    out = _eps_interval(_upper_cp, tp, fn, tn, fp, delta, alpha)
    return float(out) if out.ndim == 0 else out


@overload
def eps_jeffreys(tp: Count, fn: Count, tn: Count, fp: Count, *, delta: float = ...,
                 alpha: float = ...) -> float: ...
@overload
def eps_jeffreys(tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike, *,
                 delta: float = ..., alpha: float = ...) -> float | Floats: ...
def eps_jeffreys(tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike, *,
                 delta: float = STUDY_DELTA, alpha: float = 0.1) -> float | Floats:
    """Epsilon lower bound from Jeffreys upper limits on FPR and FNR.

    Returns eps_lo such that eps_lo <= eps with confidence APPROXIMATELY
    100(1 - alpha/2)%: Jeffreys intervals have close to nominal average coverage but,
    unlike Clopper-Pearson, no guarantee (Brown, Cai & DasGupta 2001). Larger than
    the CP bound for the same counts (400/400, no errors: 5.068).
    """
    out = _eps_interval(_upper_jeffreys, tp, fn, tn, fp, delta, alpha)
    return float(out) if out.ndim == 0 else out
