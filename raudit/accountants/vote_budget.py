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
Gaussian-vote generator). A data-dependent analysis (Confident-GNMax with a
smooth-sensitivity release) charges less for answers where the teachers nearly agree,
so it is outside this bound, and so are Laplace votes (the paper's). All functions
are pure.
"""

from __future__ import annotations

import math

from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr

from raudit.errors import ConfigError

__all__ = ["gdp_delta", "gdp_mu", "informative_answers", "max_answers", "VOTE_SENSITIVITY"]

#: L2 sensitivity of a two-class vote histogram under add/remove of one record.
VOTE_SENSITIVITY = math.sqrt(2.0)


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


def informative_answers(epsilon: float, delta: float, teachers: int) -> int:
    """Answers whose noise is at most half the teacher count: Q_max(sigma = k / 2)."""
    if not (isinstance(teachers, int) and teachers >= 1):
        raise ConfigError(f"teachers must be a positive integer, got {teachers!r}")
    return max_answers(epsilon, delta, teachers / 2.0)
