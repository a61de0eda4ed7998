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

from typing import Callable

import numpy as np
from scipy import optimize, special, stats

from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA
from raudit.registry import Registry

__all__ = [
    "COUNT_BOUNDS",
    "audit_bound",
    "threshold_counts",
    "choose_threshold",
    "eps_bayesian",
    "eps_ceiling",
    "eps_clopper_pearson",
    "eps_jeffreys",
    "evaluate_threshold",
]


# ----------------------------------------------------------------- rate intervals


def _check(counts, delta: float, alpha: float) -> list[np.ndarray]:
    arrs = [np.asarray(c) for c in counts]
    for c in arrs:
        if np.any(c < 0) or np.any(c != np.floor(c)):
            raise ConfigError(f"counts must be integers >= 0, got {counts}")
    if not 0.0 <= delta < 1.0:
        raise ConfigError(f"delta must lie in [0, 1), got {delta!r}")
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    return [c.astype(np.float64) for c in arrs]


def _upper_cp(x, n, tail):
    # Clopper-Pearson upper limit: the (1 - tail) quantile of Beta(x + 1, n - x);
    # 1 when every trial was an error (or there were none).
    safe = np.where(x < n, n - x, 1.0)
    return np.where(x < n, stats.beta.isf(tail, x + 1.0, safe), 1.0)


def _upper_jeffreys(x, n, tail):
    # Jeffreys interval: quantile of the Beta(x + 1/2, n - x + 1/2) posterior, as
    # statsmodels' proportion_confint(method="jeffreys") computes it (no boundary fix).
    safe = np.maximum(n, 1.0)
    return np.where(n > 0, stats.beta.isf(tail, x + 0.5, safe - x + 0.5), 1.0)


def _eps_from_upper(a, b, delta):
    """max{log((1-a-delta)/b), log((1-b-delta)/a), 0}; a term whose numerator is <= 0
    constrains nothing and is dropped."""
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = np.where(1.0 - a - delta > 0, np.log((1.0 - a - delta) / b), -np.inf)
        t2 = np.where(1.0 - b - delta > 0, np.log((1.0 - b - delta) / a), -np.inf)
    return np.maximum(np.maximum(t1, t2), 0.0)


def _eps_interval(upper, tp, fn, tn, fp, delta, alpha):
    tp, fn, tn, fp = _check((tp, fn, tn, fp), delta, alpha)
    # Each rate gets a two-sided interval at level alpha/2, so each tail is alpha/4
    # (2.5% for alpha = 0.1), as privacy-estimates' compute_eps_lo does it.
    tail = alpha / 4.0
    a = upper(fp, fp + tn, tail)
    b = upper(fn, fn + tp, tail)
    return _eps_from_upper(a, b, delta)


def eps_clopper_pearson(tp, fn, tn, fp, *, delta: float = STUDY_DELTA, alpha: float = 0.1) -> float:
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


def eps_jeffreys(tp, fn, tn, fp, *, delta: float = STUDY_DELTA, alpha: float = 0.1) -> float:
    """Epsilon lower bound from Jeffreys upper limits on FPR and FNR.

    Returns eps_lo such that eps_lo <= eps with confidence APPROXIMATELY
    100(1 - alpha/2)%: Jeffreys intervals have close to nominal average coverage but,
    unlike Clopper-Pearson, no guarantee (Brown, Cai & DasGupta 2001). Larger than
    the CP bound for the same counts (400/400, no errors: 5.068).
    """
    out = _eps_interval(_upper_jeffreys, tp, fn, tn, fp, delta, alpha)
    return float(out) if out.ndim == 0 else out


# --------------------------------------------------------------- joint-Beta Bayes


def _gauss_legendre(nodes: int, panels: int):
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


def _mass_in_region(x, w, ay, by, eps, delta, derivative=False):
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

    def pdf(v):
        v = np.clip(v, 1e-300, 1.0 - 1e-16)
        return np.exp(logc + special.xlogy(ay - 1.0, v) + special.xlog1py(by - 1.0, -v))

    m_lo &= lo < 1.0
    d = np.zeros_like(x)
    d[m_hi] += pdf(hi[m_hi]) * dhi[m_hi]
    d[m_lo] -= pdf(lo[m_lo]) * dlo[m_lo]
    return mass, float(w @ d)


def _eps_needed(x, y, delta):
    """The smallest eps >= 0 whose region contains (FPR, FNR) = (x, y)."""
    eps = np.zeros_like(x)
    with np.errstate(divide="ignore"):
        pairs = ((1.0 - delta - x, y), (1.0 - delta - y, x), (x - delta, 1.0 - y), (y - delta, 1.0 - x))
        for num, den in pairs:
            # a constraint with a non-positive numerator holds for every eps >= 0
            eps = np.maximum(eps, np.where(num > 0, np.log(np.maximum(num, 1e-300) / den), 0.0))
    return eps


def eps_bayesian(
    tp,
    fn,
    tn,
    fp,
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
    tp, fn, tn, fp = (float(c) for c in _check((tp, fn, tn, fp), delta, alpha))
    level = alpha / 2.0
    ax, bx, ay, by = 0.5 + fp, 0.5 + tn, 0.5 + fn, 0.5 + tp
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
    lo = min(float(_eps_interval(_upper_jeffreys, tp, fn, tn, fp, delta, alpha)), _EPS_CAP)
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

    def g(eps: float, derivative: bool = False):
        out = _mass_in_region(xf, _FINE[1], ay, by, eps, delta, derivative)
        return (out[0] - level, out[1]) if derivative else out - level

    for _ in range(8):
        val, slope = g(root, derivative=True)
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


#: The single-threshold count bounds f(tp, fn, tn, fp, delta, alpha) a threshold may be
#: chosen to maximise (choose_threshold's ``estimator``). What an audit reports is
#: raudit.audit.estimators.ESTIMATORS, whose cp/jeffreys/bayes entries call these.
COUNT_BOUNDS: Registry[Callable[..., float]] = Registry("count estimator")
COUNT_BOUNDS.register("cp", eps_clopper_pearson)
COUNT_BOUNDS.register("jeffreys", eps_jeffreys)
COUNT_BOUNDS.register("bayes", eps_bayesian)


def _estimator(name_or_fn) -> Callable[..., float]:
    if callable(name_or_fn):
        return name_or_fn
    return COUNT_BOUNDS.get(name_or_fn)


def eps_ceiling(
    n_pos: int, n_neg: int, *, delta: float = STUDY_DELTA, alpha: float = 0.1, method: str = "cp"
) -> float:
    """The largest eps an estimator can certify with n_pos + n_neg trials: zero errors.

    For CP with n trials per class and one-sided tail beta = alpha/4:
    eps_max = log((beta^(1/n) - delta) / (1 - beta^(1/n))) ~ ln n - ln ln(1/beta);
    n = 100, 400, 1,000, 10,000, 100,000 -> 3.28, 4.68, 5.60, 7.91, 10.21.
    """
    return float(_estimator(method)(n_pos, 0, n_neg, 0, delta=delta, alpha=alpha))


# -------------------------------------------------------------------- thresholds

_DIRECTIONS = ("scores", "inverted")


def _prepare(scores, labels):
    scores = np.asarray(scores, dtype=np.float64).ravel()
    labels = np.asarray(labels).ravel()
    if scores.shape != labels.shape or scores.size == 0:
        raise ConfigError(
            "scores and labels must be non-empty and of equal length, "
            f"got {scores.size} and {labels.size}"
        )
    if not np.all(np.isfinite(scores)):
        raise ConfigError("scores must be finite (replace NaN scores before auditing)")
    if not np.all((labels == 0) | (labels == 1)):
        raise ConfigError("labels must be 0/1 (1 = the target was in the training data)")
    return scores, labels.astype(bool)


def _oriented(scores, direction):
    if direction not in _DIRECTIONS:
        raise ConfigError(f"direction must be 'scores' or 'inverted', got {direction!r}")
    return scores if direction == "scores" else 1.0 - scores


def _scan(scores, labels):
    """Counts for every candidate threshold t (the unique scores), predicting s >= t."""
    cand = np.unique(scores)
    pos, neg = np.sort(scores[labels]), np.sort(scores[~labels])
    tp = pos.size - np.searchsorted(pos, cand, side="left")
    fp = neg.size - np.searchsorted(neg, cand, side="left")
    return cand, tp, pos.size - tp, neg.size - fp, fp


def choose_threshold(val_scores, val_labels, *, delta: float = STUDY_DELTA, alpha: float = 0.1, estimator="cp"):
    """The (threshold, direction) maximising ``estimator`` on the validation counts.

    Every unique validation score is a candidate, predicting "in" when score >= t
    (direction "scores") or when 1 - score >= t (direction "inverted"; then t is a
    threshold on 1 - score). Choosing the direction here, on validation, is what
    makes the study's max over both directions on the test set unnecessary (it had
    no multiplicity correction; EVALUATION.md section 4). Ties go to "scores", then
    to the smallest threshold. ``estimator``: "cp", "jeffreys", "bayes" or a callable
    ``f(tp, fn, tn, fp, *, delta, alpha)``.
    """
    scores, labels = _prepare(val_scores, val_labels)
    fn_est = _estimator(estimator)
    best = (-np.inf, None, None)
    for direction in _DIRECTIONS:
        cand, tp, fn, tn, fp = _scan(_oriented(scores, direction), labels)
        if fn_est in (eps_clopper_pearson, eps_jeffreys):  # vectorised
            vals = np.atleast_1d(fn_est(tp, fn, tn, fp, delta=delta, alpha=alpha))
        else:  # evaluate each distinct count tuple once
            table = np.stack([tp, fn, tn, fp], axis=1)
            uniq, inv = np.unique(table, axis=0, return_inverse=True)
            vals = np.array([fn_est(*map(int, row), delta=delta, alpha=alpha) for row in uniq])[inv.ravel()]
        i = int(np.argmax(vals))
        if vals[i] > best[0]:
            best = (float(vals[i]), float(cand[i]), direction)
    return best[1], best[2]


def evaluate_threshold(test_scores, test_labels, threshold: float, direction: str = "scores"):
    """Counts (tp, fn, tn, fp) of predicting "in" when the oriented score >= threshold."""
    scores, labels = _prepare(test_scores, test_labels)
    pred = _oriented(scores, direction) >= threshold
    tp = int(np.sum(pred & labels))
    fp = int(np.sum(pred & ~labels))
    return tp, int(labels.sum()) - tp, int((~labels).sum()) - fp, fp


def audit_bound(
    val_scores,
    val_labels,
    test_scores,
    test_labels,
    *,
    delta: float = STUDY_DELTA,
    alpha: float = 0.1,
    estimator="cp",
) -> dict:
    """Threshold on validation, bound on test: the study's protocol (EVALUATION.md s. 3).

    Returns :func:`threshold_counts`'s keys, eps_cp, eps_jeffreys, eps_bayes and
    saturated (eps_cp at the ceiling). An audit reads every registered estimator
    instead (:func:`raudit.audit.analyse.bounds`).
    """
    out = threshold_counts(val_scores, val_labels, test_scores, test_labels, delta=delta,
                           alpha=alpha, estimator=estimator)
    tp, fn, tn, fp = out["tp"], out["fn"], out["tn"], out["fp"]
    eps_cp = eps_clopper_pearson(tp, fn, tn, fp, delta=delta, alpha=alpha)
    out.update(eps_cp=eps_cp, eps_jeffreys=eps_jeffreys(tp, fn, tn, fp, delta=delta, alpha=alpha),
               eps_bayes=eps_bayesian(tp, fn, tn, fp, delta=delta, alpha=alpha),
               saturated=bool(eps_cp >= out["eps_max"] - 1e-9))
    return out


def threshold_counts(val_scores, val_labels, test_scores, test_labels, *,
                     delta: float = STUDY_DELTA, alpha: float = 0.1, estimator="cp") -> dict:
    """The threshold and direction chosen on validation and what they give on test: auc
    (roc_auc_score of the raw test scores; NaN with one class), threshold, direction,
    tp/fn/tn/fp, tpr, fpr and eps_max (the CP ceiling for these test counts)."""
    from sklearn.metrics import roc_auc_score  # slow import, only needed here

    threshold, direction = choose_threshold(
        val_scores, val_labels, delta=delta, alpha=alpha, estimator=estimator
    )
    tp, fn, tn, fp = evaluate_threshold(test_scores, test_labels, threshold, direction)
    scores, labels = _prepare(test_scores, test_labels)
    auc = float(roc_auc_score(labels, scores)) if 0 < labels.sum() < labels.size else float("nan")
    return {
        "auc": auc,
        "threshold": threshold,
        "direction": direction,
        "tp": tp,
        "fn": fn,
        "tn": tn,
        "fp": fp,
        "tpr": tp / (tp + fn) if tp + fn else float("nan"),
        "fpr": fp / (tn + fp) if tn + fp else float("nan"),
        "eps_max": eps_ceiling(tp + fn, tn + fp, delta=delta, alpha=alpha, method="cp"),
    }
