"""Anytime-valid sequential audits: a test martingale, valid at every look.

Beside the alpha-spending looks of :mod:`raudit.audit.sequential` (valid over a
countable schedule of looks at a price per look), this is an e-process: the audit may
look after every single trial and stop whenever it likes.

Trials arrive one at a time: the target is in or out with probability 1/2, the attack
guesses (its rule may depend on every earlier trial, never on this one's world), and
C_t = 1 when the guess is right. Under an (eps0, delta)-DP claim no guess is right
more often than q0 = (e^eps0 + delta) / (1 + e^eps0) (the kink of the privacy
region, FPR = FNR = (1 - delta) / (1 + e^eps0)), whatever happened before. So

    K_t(eps0) = prod_{s <= t} (1 + lam_s (C_s - q0)),   lam_s in [0, 1) predictable,

is a non-negative supermartingale under the claim, and by Ville's inequality
P[K_t(eps0) >= 1/alpha for some t] <= alpha. The bet lam_s is the same for every
eps0 (it reads only past outcomes), so K_t is decreasing in eps0 and the eps0 rejected
at some look form an interval [0, eps_lo): eps_lo_t, the running largest rejected
eps0, is a lower confidence sequence: P[eps_lo_t > eps for some t] <= alpha, with no
correction for the number of looks or of eps0 values tried.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import optimize

from raudit.errors import ConfigError

if TYPE_CHECKING:
    from raudit.audit.transcript import VoteMechanism

__all__ = ["anytime_transcript", "bets", "eps_lower_at", "eps_lower_sequence", "wealth"]

MAX_BET = 0.9

Floats = NDArray[np.float64]


def bets(correct: ArrayLike) -> Floats:
    """Predictable bets: lam_t = 2 p_{t-1} - 1 clipped to [0, MAX_BET], p_{t-1} the
    smoothed accuracy of the trials before t ((1/2 + hits) / (1 + trials)).

    Outcomes may be fractions in [0, 1] (a black-box pair of one "in" and one "out"
    model scores half a point per right guess, raudit.audit.anytime_game): the wealth
    stays a supermartingale for any outcome in [0, 1] whose mean is at most q0."""
    c = np.asarray(correct, dtype=float)
    if c.ndim != 1 or not np.all((c >= 0) & (c <= 1)):
        raise ConfigError("correct must be a 1-d sequence of outcomes in [0, 1]")
    past = np.concatenate([[0.0], np.cumsum(c)[:-1]])
    p = (0.5 + past) / (1.0 + np.arange(c.size))
    return np.clip(2.0 * p - 1.0, 0.0, MAX_BET)


def wealth(correct: ArrayLike, eps0: float, *, delta: float = 0.0) -> Floats:
    """K_t(eps0) after each trial (log space inside, so long runs do not overflow)."""
    if not 0.0 <= delta < 1.0 or eps0 < 0:
        raise ConfigError(f"need eps0 >= 0 and delta in [0, 1), got {eps0!r}, {delta!r}")
    c = np.asarray(correct, dtype=np.float64)
    q0 = min((math.exp(eps0) + delta) / (1.0 + math.exp(eps0)), 1.0)
    k: Floats = np.exp(np.cumsum(np.log1p(bets(c) * (c - q0))))  # numpy's stubs: Any here
    return k


def eps_lower_sequence(correct: ArrayLike, *, alpha: float = 0.1, delta: float = 0.0,
                       eps_max: float = 20.0) -> Floats:
    """eps_lo_t after each trial: the largest eps0 whose wealth reached 1/alpha by t."""
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    c = np.asarray(correct, dtype=float)
    lam, target = bets(c), math.log(1.0 / alpha)

    def logw(eps0: float, t: int | np.integer) -> float:
        q0 = _q(np.array([eps0]), delta)[0]
        return float(np.sum(np.log1p(lam[: t + 1] * (c[: t + 1] - q0))))

    at_zero = np.cumsum(np.log1p(lam * (c - _q(np.array([0.0]), delta)[0])))
    out = np.zeros(c.size)
    for t in np.flatnonzero(at_zero >= target):  # looks where some eps0 >= 0 is rejected
        if logw(eps_max, t) >= target:
            out[t] = eps_max
        else:
            out[t] = optimize.brentq(lambda e: logw(e, t) - target, 0.0, eps_max, xtol=1e-6)
    return np.maximum.accumulate(out)


def _q(eps0: Floats, delta: float) -> Floats:
    return np.minimum((np.exp(eps0) + delta) / (1.0 + np.exp(eps0)), 1.0)


def eps_lower_at(correct: ArrayLike, looks: Iterable[int], *, alpha: float = 0.1,
                 delta: float = 0.0, eps_max: float = 20.0) -> Floats:
    """eps_lo at the trial counts ``looks`` only (the same confidence sequence read at
    fewer times: still valid at every one of them, and no brentq per trial)."""
    if not 0.0 < alpha < 1.0:
        raise ConfigError(f"alpha must lie in (0, 1), got {alpha!r}")
    c = np.asarray(correct, dtype=float)
    lam, target = bets(c), math.log(1.0 / alpha)
    out = []
    for t in looks:
        cc, ll = c[:t], lam[:t]

        def logw(eps0: float) -> float:
            return float(np.sum(np.log1p(ll * (cc - _q(np.array([eps0]), delta)[0]))))

        if logw(0.0) < target:
            out.append(0.0)
        elif logw(eps_max) >= target:
            out.append(eps_max)
        else:
            out.append(optimize.brentq(lambda e: logw(e) - target, 0.0, eps_max, xtol=1e-6))
    return np.maximum.accumulate(np.array(out, dtype=float))


def anytime_transcript(mech: VoteMechanism, *, trials: int, claimed: float, seed: int,
                       delta: float, alpha: float = 0.1, look_every: int = 100
                       ) -> dict[str, Any]:
    """An anytime-valid transcript audit of ``mech`` (a VoteMechanism): up to ``trials``
    trials, each world with probability 1/2; the guess is "in" when the exact
    log-likelihood ratio is positive (the Bayes rule at prior 1/2: no trials spent on a
    threshold); a look every ``look_every`` trials; stop at the first look whose eps_lo
    exceeds the claim (valid whenever it stops, Ville), else after ``trials``."""
    if trials < look_every:
        raise ConfigError(f"an anytime audit needs at least {look_every} trials, got {trials}")
    rng = np.random.default_rng(seed)
    world = (rng.random(trials) < 0.5).astype(int)
    inn, out = mech.statistic(rng, trials, 1), mech.statistic(rng, trials, 0)
    stat = np.where(world == 1, inn, out)
    correct = ((stat > 0).astype(int) == world).astype(float)
    looks = list(range(look_every, trials + 1, look_every))
    lo = eps_lower_at(correct, looks, alpha=alpha, delta=delta)
    hit = np.flatnonzero(lo > claimed)
    k = int(hit[0]) if hit.size else len(looks) - 1
    reason = (f"eps_lo {lo[k]:.2f} exceeded the claimed {claimed:g} after {looks[k]} trials"
              if hit.size else f"reached the last look ({looks[k]} trials): the claim "
              "was not rejected")
    return {"eps_anytime": float(lo[k]), "looks": k + 1, "trials_used": looks[k],
            "stop_reason": reason, "accuracy": float(correct[:looks[k]].mean())}
