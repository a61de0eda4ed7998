"""Trade-off-curve (f-DP) bounds: every threshold of the attack at once, and Gaussian DP.

The CP, Jeffreys and Bayesian estimators of :mod:`raudit.audit.epsilon` read ONE
threshold, chosen on the validation split. An attack's scores give a whole
empirical trade-off curve (FPR, FNR over all thresholds), and a DP claim is a
statement about that whole curve (Dong, Roth & Su 2022). Two readings of it:

* ``eps_curve``: the largest eps that any threshold rules out for an
  (eps, delta)-DP claim, with Clopper-Pearson upper limits per threshold and a
  Bonferroni correction over a grid of thresholds fixed before the scores are
  seen. Valid for ANY mechanism: with probability >= 1 - alpha/2 every band holds
  at once, so no (eps, delta)-DP mechanism gives eps_curve > eps.
* ``mu_gdp``: the largest mu for which the attack rules out mu-Gaussian DP
  (Nasr et al. 2023; one threshold, chosen on validation as for CP): under mu-GDP every test has
  ``Phi^-1(1 - FPR) - Phi^-1(FNR) <= mu``, so upper limits a >= FPR, b >= FNR give
  ``mu >= Phi^-1(1 - a) - Phi^-1(b)``. Valid for any mechanism AS A STATEMENT ABOUT
  GDP. ``eps_gdp`` is the eps at the run's delta of a mu_gdp-GDP mechanism: it
  bounds eps only if the mechanism's trade-off curve is Gaussian-shaped (Gaussian
  noise: DP-SGD, GNMax). It is NOT a valid lower bound for mechanisms with other
  curves: randomized response at eps = 1 has the kink FPR = FNR = 1/(1 + e), which
  is mu = 1.23 GDP and eps 5.58 at delta = 10^-5 (see the tests). PATE with Laplace
  noise is not Gaussian either, so raudit reports eps_gdp next to, never instead
  of, the honest bounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special

from raudit.accountants.vote_budget import gdp_delta  # one definition, below audit
from raudit.audit.epsilon import _check, _eps_from_upper, _upper_cp
from raudit.audit.thresholds import (_DIRECTIONS, _oriented, _prepare, _scan, evaluate_threshold,
                                     picked)
from raudit.errors import ConfigError
from raudit.privacy import STUDY_DELTA

__all__ = ["GRID", "curve_counts", "curve_limits", "eps_curve", "eps_from_mu", "gdp_delta", "mu_from_upper",
           "mu_gdp", "tradeoff_bounds"]

# Thresholds fixed in advance (attack scores are probabilities in [0, 1]; the random
# forest's are multiples of 1/trees, so 0.01 steps see every distinct classifier of
# a 100-tree forest). Fixed, so that the Bonferroni correction counts them honestly.
GRID = np.linspace(0.0, 1.0, 101)

Floats = NDArray[np.float64]


def mu_from_upper(a: ArrayLike, b: ArrayLike) -> Floats:
    """Smallest mu consistent with FPR <= a and FNR <= b under mu-GDP (0 if any)."""
    af, bf = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = -special.ndtri(af) - special.ndtri(bf)
    return np.where(np.isfinite(mu), np.maximum(mu, 0.0), 0.0)


def eps_from_mu(mu: float, delta: float) -> float:
    """The smallest eps >= 0 with delta(eps) <= delta for a mu-GDP mechanism.

    delta(eps) decreases in eps; 0 when delta(0) <= delta already (tiny mu).
    mu = 1, delta = 10^-5 -> 4.377 (dp_accounting's Gaussian PLD agrees; see the tests).
    """
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1) for a GDP conversion, got {delta!r}")
    if mu <= 0.0 or gdp_delta(0.0, mu) <= delta:
        return 0.0
    hi = max(1.0, mu * mu)
    while gdp_delta(hi, mu) > delta:
        hi *= 2.0
        if hi > 1e4:
            return float("inf")
    return float(optimize.brentq(lambda e: gdp_delta(e, mu) - delta, 0.0, hi, xtol=1e-9))


def curve_counts(scores: ArrayLike, labels: ArrayLike, grid: ArrayLike = GRID) -> Floats:
    """(tp, fn, tn, fp) arrays for predicting "in" when score >= t (direction "scores")
    and when 1 - score >= t ("inverted"), for every t of the grid: 2 x len(grid) rows."""
    s, lab = _prepare(scores, labels)
    if s.min() < 0.0 or s.max() > 1.0:
        raise ConfigError("the trade-off bounds take attack scores in [0, 1] (probabilities); "
                          f"got scores in [{s.min():g}, {s.max():g}]")
    rows = []
    for oriented in (s, 1.0 - s):
        pred = oriented[None, :] >= np.asarray(grid, dtype=float)[:, None] - 1e-12
        tp = (pred & lab).sum(axis=1)
        fp = (pred & ~lab).sum(axis=1)
        rows.append(np.stack([tp, lab.sum() - tp, (~lab).sum() - fp, fp], axis=1))
    return np.concatenate(rows).astype(np.float64)


def curve_limits(scores: ArrayLike, labels: ArrayLike, *, alpha: float = 0.1,
                 grid: ArrayLike = GRID) -> tuple[Floats, Floats]:
    """Simultaneous CP upper limits (a on FPR, b on FNR) at every threshold of the grid.

    Each of the T = 2 len(grid) thresholds gets its two limits at tail alpha / (4 T)
    (Bonferroni over the 2T limits), so with probability >= 1 - alpha/2 EVERY limit
    holds at once: a >= FPR(t) and b >= FNR(t) for all t. Arrays of length T, in
    :func:`curve_counts`' order.
    """
    counts = curve_counts(scores, labels, grid)
    tp, fn, tn, fp = _check(counts.T, 0.0, alpha)
    tail = alpha / (4.0 * len(counts))
    return _upper_cp(fp, fp + tn, tail), _upper_cp(fn, fn + tp, tail)


def eps_curve(scores: ArrayLike, labels: ArrayLike, *, delta: float = STUDY_DELTA, alpha: float = 0.1,
              grid: ArrayLike = GRID) -> float:
    """The largest eps any threshold of the grid rules out, from the test split's scores.

    Reads :func:`curve_limits`, whose limits hold together with probability
    >= 1 - alpha/2, the same confidence as :func:`eps_clopper_pearson`'s
    single-threshold bound. The correction costs power on small test sets and
    pays off on large ones, where the best threshold is not the one validation chose.
    """
    _check((0, 0, 0, 0), delta, alpha)
    a, b = curve_limits(scores, labels, alpha=alpha, grid=grid)
    return float(_eps_from_upper(a, b, delta).max())


def tradeoff_bounds(val_scores: ArrayLike, val_labels: ArrayLike, test_scores: ArrayLike,
                    test_labels: ArrayLike, *, delta: float = STUDY_DELTA,
                    alpha: float = 0.1) -> dict[str, Any]:
    """eps_curve (test split, corrected) and the GDP bound (threshold chosen on validation).

    mu_gdp uses the protocol of the CP bound: the threshold and direction that
    maximise the mu bound on validation, then one threshold's counts on test (no
    correction needed). eps_gdp converts it at ``delta`` (NaN for delta = 0: a GDP
    mechanism has delta > 0 at every finite eps).
    """
    threshold, direction = _choose_mu_threshold(val_scores, val_labels, alpha)
    tp, fn, tn, fp = evaluate_threshold(test_scores, test_labels, threshold, direction)
    mu = mu_gdp(tp, fn, tn, fp, alpha=alpha)
    return {
        "eps_curve": eps_curve(test_scores, test_labels, delta=delta, alpha=alpha),
        "mu_gdp": mu,
        "eps_gdp": eps_from_mu(mu, delta) if delta > 0 else float("nan"),
    }


def _choose_mu_threshold(scores: ArrayLike, labels: ArrayLike, alpha: float
                         ) -> tuple[float, str]:
    """choose_threshold's rule (every validation score, both directions, ties to
    "scores" then to the smallest threshold) with the mu bound as the objective,
    vectorised over the candidates."""
    s, lab = _prepare(scores, labels)
    best: tuple[float, float | None, str | None] = (-np.inf, None, None)
    for direction in _DIRECTIONS:
        cand, tp, fn, tn, fp = _scan(_oriented(s, direction), lab)
        tail = alpha / 4.0
        mu = mu_from_upper(_upper_cp(fp.astype(float), (fp + tn).astype(float), tail),
                           _upper_cp(fn.astype(float), (fn + tp).astype(float), tail))
        i = int(np.argmax(mu))
        if mu[i] > best[0]:
            best = (float(mu[i]), float(cand[i]), direction)
    return picked(best, "mu bound")


def mu_gdp(tp: ArrayLike, fn: ArrayLike, tn: ArrayLike, fp: ArrayLike, *,
           alpha: float = 0.1) -> float:
    """mu lower bound from one threshold's counts (CP limits at tail alpha/4, as
    eps_clopper_pearson): mu >= Phi^-1(1 - a) - Phi^-1(b) with confidence 1 - alpha/2."""
    tpf, fnf, tnf, fpf = _check((tp, fn, tn, fp), 0.0, alpha)
    tail = alpha / 4.0
    return float(mu_from_upper(_upper_cp(fpf, fpf + tnf, tail), _upper_cp(fnf, fnf + tpf, tail)))
