"""One-run audits (Steinke, Nasr & Jagielski, NeurIPS 2023): eps from m canaries of ONE run.

m canaries are each included in the training data independently with probability 1/2
(S_i = +1 in, -1 out). After the run the auditor scores every canary and guesses
T_i in {+1, -1} for the r canaries it is most sure about, abstaining on the others;
W = the number of correct guesses. Their Theorem 3.1: if the mechanism is eps-DP (pure),
W is stochastically dominated by Binomial(r, e^eps / (1 + e^eps)), whatever the scores
and however the r canaries were picked (the guesses may depend on everything released).
So v correct guesses reject every eps with

    P[Binomial(r, q(eps)) >= v] <= beta,   q(eps) = e^eps / (1 + e^eps),

and eps_lo, the largest such eps, is a lower bound with confidence 1 - beta.

Assumption, stated: PURE DP. Their theorem for (eps, delta)-DP adds a delta-dependent
term to the tail that is NOT implemented here, so for a delta > 0 claim eps_lo is an
estimate under that assumption, never a verdict (the Gaussian-like mechanisms of
raudit have delta > 0). Choosing r among several candidates costs a Bonferroni factor
(:func:`best_one_run`). Implemented from the paper's statement; the tests check the
coverage on simulated canaries of known eps.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize, special, stats

from raudit.errors import ConfigError

__all__ = ["best_one_run", "eps_one_run", "guess_counts", "p_value"]


def p_value(r: int, v: int, eps: float) -> float:
    """P[Binomial(r, q(eps)) >= v]: the chance of v or more correct guesses under eps-DP."""
    if not 0 <= v <= r:
        raise ConfigError(f"need 0 <= correct guesses <= guesses, got v={v}, r={r}")
    return float(stats.binom.sf(v - 1, r, special.expit(eps)))


def eps_one_run(r: int, v: int, *, beta: float = 0.05) -> float:
    """The largest eps that v correct of r guesses reject at level ``beta`` (0 if none).

    Returns eps_lo with P[eps_lo > eps] <= beta for any eps-DP mechanism (pure DP).
    """
    if not 0.0 < beta < 1.0:
        raise ConfigError(f"beta must lie in (0, 1), got {beta!r}")
    if r == 0 or p_value(r, v, 0.0) > beta:
        return 0.0
    if p_value(r, v, 50.0) <= beta:  # beyond any eps worth reporting: the cap
        return 50.0
    return float(optimize.brentq(lambda e: p_value(r, v, e) - beta, 0.0, 50.0, xtol=1e-10))


def guess_counts(scores: ArrayLike, inclusion: ArrayLike, k: int) -> tuple[int, int]:
    """(r, v) when guessing "in" for the k highest and "out" for the k lowest scores."""
    sc, s = np.asarray(scores, dtype=float), np.asarray(inclusion)
    if sc.shape != s.shape or not np.all(np.isin(s, (-1, 1))):
        raise ConfigError("inclusion must be +1/-1 per canary, one per score")
    if not 1 <= 2 * k <= sc.size:
        raise ConfigError(f"k must lie in [1, canaries/2], got {k} for {sc.size} canaries")
    order = np.argsort(sc, kind="stable")
    v = int(np.sum(s[order[-k:]] == 1) + np.sum(s[order[:k]] == -1))
    return 2 * k, v


def best_one_run(scores: Sequence[float] | NDArray[Any], inclusion: ArrayLike, *,
                 beta: float = 0.05, ks: Iterable[int] | None = None) -> dict[str, Any]:
    """eps_lo maximised over the guess counts ``ks`` (default: 5 shares of m), each
    tested at beta / len(ks) so the maximum keeps confidence 1 - beta."""
    m = len(scores)
    ks = sorted({max(1, int(m * f / 2)) for f in (0.02, 0.05, 0.1, 0.3, 1.0)}) if ks is None \
        else list(ks)
    best = {"eps_lo": 0.0, "r": 0, "v": 0}
    for k in ks:
        r, v = guess_counts(scores, inclusion, k)
        e = eps_one_run(r, v, beta=beta / len(ks))
        if e > best["eps_lo"]:
            best = {"eps_lo": e, "r": r, "v": v}
    return {**best, "canaries": m, "beta": beta, "assumption": "pure DP (delta = 0)"}
