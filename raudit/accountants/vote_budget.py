"""How many informative vote answers an (eps, delta) budget can buy, exactly (issue 30).

A PATE-style generator passes information from the records to its generator only
through the teachers' released answers. With k teachers and two classes, one record
changes one teacher's vote, so the histogram (n0, n1) moves by (-1, +1): L2
sensitivity sqrt 2. An answer argmax(n + N(0, sigma^2 I)) can follow the teachers only
if sigma is small against the largest possible gap, k (all teachers agree). We call an
answer *informative* when sigma <= k / 2: even then, with unanimous teachers, the answer
is right with probability Phi(k / (sqrt 2 sigma)) = Phi(sqrt 2) = 0.921 only.

Q Gaussian answers of sensitivity D and noise sigma compose *exactly* into one
Gaussian mechanism with mu = sqrt(Q) D / sigma (mu-GDP: Dong, Roth and Su 2019,
"Gaussian differential privacy", Corollary 3.3; the trade-off function of a Gaussian
mechanism is G_mu and G_mu1 (x) G_mu2 = G_sqrt(mu1^2 + mu2^2)). mu-GDP is (eps, delta)-DP
exactly when delta >= Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (their
Corollary 2.13; Balle and Wang 2018's analytic Gaussian mechanism). This is the tight
profile, not an upper bound: no accountant (RDP, PLD, moments) can certify more
data-independent Gaussian answers at that sigma. Hence, for any (eps, delta),

    Q_max(sigma) = floor(mu(eps, delta)^2 sigma^2 / D^2),
    informative answers = Q_max(k / 2) = floor(mu(eps, delta)^2 k^2 / 8).

Scope: answers whose cost is data-independent (GNMax as `fixed` uses it, and any
Gaussian-vote generator); Laplace votes (the paper's) are outside it. The bound is on
releasing the noisy values; an analysis of the released argmax bit alone could certify
somewhat more (not pursued here).

**The data-dependent case** (Confident-GNMax, `fixed -o analysis=data-dependent`). Every
query first pays a threshold check max(n0, n1) + N(0, sigma1^2) >= T, charged at its
data-independent cost whatever the votes: a Gaussian release of L2 sensitivity 1 (one
record moves one teacher, so the top count by at most 1). The checks alone are therefore
bounded like the answers above. The top count lies between ceil(k/2) (an even split) and
k (consensus), a range of floor(k/2); a check is *informative* when, with T at the
midpoint, it tells consensus from an even split as reliably as an informative answer
reads a unanimous vote (Phi(sqrt 2) = 0.921): sigma1 <= floor(k/2) / (2 sqrt 2), hence

    informative checks = floor(mu^2 floor(k/2)^2 / 8)   (about a quarter of the answers).

Beyond that many, the answered set is close to a data-independent coin: the checks cannot
pick the confident queries out, and what the analysis saves must come from the answers'
own data-dependent cost (Theorem 6 of Papernot et al. 2018), small only where the votes
really are near-unanimous. :func:`dd_answers` counts the answers that cost fits in eps at
a given number of dissenting teachers (no checks, no release: an upper bound on what the
analysis can pay for). All functions are pure.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from raudit.accountants.gnmax import DEFAULT_ORDERS, logq_gnmax, rdp_gnmax
from raudit.errors import ConfigError

__all__ = ["CHECK_SENSITIVITY", "dd_answers", "gdp_delta", "gdp_mu", "informative_answers",
           "informative_checks", "max_answers", "VOTE_SENSITIVITY"]

#: L2 sensitivity of a two-class vote histogram under add/remove of one record.
VOTE_SENSITIVITY = math.sqrt(2.0)
#: L2 sensitivity of the top count max(n0, n1) that Confident-GNMax's threshold check releases.
CHECK_SENSITIVITY = 1.0


def _check(epsilon: float, delta: float) -> None:
    if not (epsilon > 0 and math.isfinite(epsilon)):
        raise ConfigError(f"epsilon must be a positive finite number, got {epsilon!r}")
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1), got {delta!r}")


def gdp_delta(epsilon: float, mu: float) -> float:
    """The smallest delta for which mu-GDP is (eps, delta)-DP (also the audits' GDP
    conversion, :mod:`raudit.audit.fdp`):
    Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) (the second term in log space, as
    e^eps overflows for large eps)."""
    if mu <= 0:
        return 0.0
    a = ndtr(-epsilon / mu + mu / 2.0)
    b = math.exp(epsilon + log_ndtr(-epsilon / mu - mu / 2.0))
    return max(0.0, float(a - b))


def gdp_mu(epsilon: float, delta: float) -> float:
    """The largest mu such that mu-GDP is (eps, delta)-DP (gdp_delta is increasing in mu)."""
    _check(epsilon, delta)
    hi = 1.0
    while gdp_delta(epsilon, hi) < delta:  # bracket: delta(mu) -> 1 as mu grows
        hi *= 2.0
    return float(brentq(lambda m: gdp_delta(epsilon, m) - delta, 1e-12, hi, xtol=1e-14, rtol=1e-14))


def max_answers(epsilon: float, delta: float, sigma: float,
                sensitivity: float = VOTE_SENSITIVITY) -> int:
    """The most Gaussian answers of noise ``sigma`` (and L2 ``sensitivity``) that any
    correct data-independent accounting can release within (eps, delta)."""
    if not sigma > 0:
        raise ConfigError(f"sigma must be positive, got {sigma!r}")
    mu = gdp_mu(epsilon, delta)
    # the tiny slack keeps exact products (mu^2 sigma^2 / D^2 an integer) from rounding down
    return int(math.floor(mu * mu * sigma * sigma / (sensitivity * sensitivity) * (1 + 1e-12)))


def _check_teachers(teachers: int) -> None:
    if not (isinstance(teachers, int) and teachers >= 1):
        raise ConfigError(f"teachers must be a positive integer, got {teachers!r}")


def informative_answers(epsilon: float, delta: float, teachers: int) -> int:
    """Answers whose noise is at most half the teacher count: Q_max(sigma = k / 2)."""
    _check_teachers(teachers)
    return max_answers(epsilon, delta, teachers / 2.0)


def informative_checks(epsilon: float, delta: float, teachers: int) -> int:
    """Threshold checks that can tell consensus (top count k) from an even split (ceil(k/2))
    with error at most Phi(-sqrt 2): Q_max(sigma1 = floor(k/2) / (2 sqrt 2), sensitivity 1)
    (module docstring). 0 for k = 1: one teacher's top count never moves."""
    _check_teachers(teachers)
    gap = teachers // 2
    if gap == 0:
        return 0
    return max_answers(epsilon, delta, gap / (2.0 * math.sqrt(2.0)), sensitivity=CHECK_SENSITIVITY)


def dd_answers(epsilon: float, delta: float, teachers: int, dissent: int, sigma2: float,
               orders: ArrayLike | None = None) -> int | None:
    """The most GNMax answers at sigma2, each on a two-class vote with ``dissent`` teachers
    against the rest, whose data-dependent RDP (Theorem 6, :func:`rdp_gnmax`) converts to
    at most (eps, delta): max over orders of floor((eps - log(1/delta)/(order - 1)) / RDP).
    No threshold checks and no smooth-sensitivity release are charged, so the data-dependent
    analysis can pay for no more answers than this. None: unbounded (the votes are so
    confident that the answers' RDP is 0 at an order where the conversion leaves room)."""
    _check(epsilon, delta)
    _check_teachers(teachers)
    if not (isinstance(dissent, int) and 0 <= dissent <= teachers // 2):
        raise ConfigError(f"dissent must be an integer in [0, k // 2], got {dissent!r}")
    if not sigma2 > 0:
        raise ConfigError(f"sigma2 must be positive, got {sigma2!r}")
    o = np.asarray(DEFAULT_ORDERS[1:] if orders is None else orders, dtype=np.float64)
    counts = np.array([teachers - dissent, dissent], dtype=np.float64)
    per = rdp_gnmax(logq_gnmax(counts, sigma2)[None], sigma2, o)[0]
    room = epsilon - math.log(1.0 / delta) / (o - 1.0)
    if np.any((per <= 0) & (room >= 0)):
        return None
    with np.errstate(divide="ignore"):
        n = np.where(room > 0, np.floor(room / per * (1 + 1e-12)), 0.0)
    return int(n.max())
