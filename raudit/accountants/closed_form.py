"""Closed forms for the data-independent regime of the PATE moments accountant.

With lam = 1e-3 (or 1e-4), delta = 10^-5 and at most a few thousand teachers, the
min in every accountant variant picks the data-independent term 2 lam^2 l(l+1), so
eps_hat after T queries is a deterministic function of T
(``shared/spec/IMPLEMENTATIONS.md`` section 10):

    eps_hat(T) = min_{l <= L} (2 lam^2 T l(l+1) + log(1/delta)) / l.

The stopping iteration of a port is then a function of (eps, lam, L, delta, queries
per iteration) and of how its loop checks eps_hat; tests use these functions to
assert the iteration counts of each port. For a lam-DP (single-noise threshold)
query the data-independent term is lam^2 l(l+1)/2: pass ``lam / 2``.
"""

from __future__ import annotations

import math
from typing import overload

import numpy as np
from numpy.typing import ArrayLike

from raudit.accountants.pate import eps_from_moments
from raudit.errors import ConfigError

__all__ = ["eps_data_independent", "iterations_to_reach", "queries_to_reach"]


def _check(lam: float, L: int, delta: float) -> None:
    if not np.isfinite(lam) or lam <= 0:
        raise ConfigError(f"lam must be a finite number > 0, got {lam!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ConfigError(f"L (number of moments) must be an integer >= 1, got {L!r}")
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1), got {delta!r}")


def _check_eps(eps: float) -> None:
    if not np.isfinite(eps) or eps <= 0:
        raise ConfigError(f"eps must be a finite number > 0, got {eps!r}")


@overload
def eps_data_independent(queries: int | float, lam: float, L: int, delta: float) -> float: ...
@overload
def eps_data_independent(queries: ArrayLike, lam: float, L: int, delta: float
                         ) -> float | np.ndarray: ...
def eps_data_independent(queries: ArrayLike, lam: float, L: int, delta: float
                         ) -> float | np.ndarray:
    """eps_hat after ``queries`` queries when the data-independent term always wins.

    Vectorised over ``queries``; computed through :func:`eps_from_moments` so it uses
    the same floating-point arithmetic as a charged accountant (up to the order of the
    sums). ``queries = 0`` gives the floor log(1/delta)/L (0.11513 for 10^-5, L = 100).
    """
    _check(lam, L, delta)
    t = np.asarray(queries, dtype=np.float64)
    if np.any(t < 0):
        raise ConfigError("queries must be >= 0")
    l = np.arange(1, L + 1, dtype=np.float64)
    per_query = 2.0 * lam**2 * l * (l + 1.0)
    out = eps_from_moments(t[..., None] * per_query, delta)
    return float(out) if out.ndim == 0 else out


def queries_to_reach(eps: float, lam: float, L: int, delta: float) -> int:
    """The smallest number of queries T >= 0 with ``eps_data_independent(T) >= eps``.

    eps_hat(T) >= eps iff every order satisfies it, i.e.
    T >= max_l (eps l - log(1/delta)) / (2 lam^2 l(l+1)); the ceiling of that is then
    adjusted by a step or two so the answer agrees with the floating-point
    ``eps_data_independent`` exactly.
    """
    _check(lam, L, delta)
    _check_eps(eps)
    l = np.arange(1, L + 1, dtype=np.float64)
    need = np.max((eps * l - math.log(1.0 / delta)) / (2.0 * lam**2 * l * (l + 1.0)))
    t = max(0, math.ceil(need))
    while eps_data_independent(t, lam, L, delta) < eps:
        t += 1
    while t > 0 and eps_data_independent(t - 1, lam, L, delta) >= eps:
        t -= 1
    return t


def iterations_to_reach(
    eps: float,
    lam: float,
    L: int,
    delta: float,
    queries_per_iteration: int,
    check: str = "after",
    max_iter: int | None = None,
) -> int:
    """Training iterations run by a port whose accountant stays data-independent.

    ``check="after"`` (paper, updated, synthcity, borealis): eps_hat starts at 0, the
    loop runs ``while eps_hat < eps`` and eps_hat is recomputed at the END of each
    iteration, so it runs the first i >= 1 with eps_hat(i * qpi) >= eps (it overshoots:
    the last iteration is paid for beyond eps).

    ``check="top"`` (smartnoise): at the top of iteration i it computes
    e_i = eps_hat((i - 1) * qpi) and breaks if e_i > eps (strictly), raising "epsilon too
    small" if that happens at i = 1; otherwise it trains, and the ``while eps < epsilon``
    test uses that same e_i. So with j the first i with e_i >= eps it trains j - 1
    iterations if e_j > eps and j if e_j == eps. Except for the error and the equality
    edge case this equals the "after" count: it overshoots the same way.

    ``max_iter`` caps the count (the study's 10,000 / 1,000 / 100).
    """
    _check(lam, L, delta)
    _check_eps(eps)
    qpi = queries_per_iteration
    if isinstance(qpi, bool) or int(qpi) != qpi or qpi < 1:
        raise ConfigError(f"queries_per_iteration must be an integer >= 1, got {queries_per_iteration!r}")
    qpi = int(qpi)
    t_star = queries_to_reach(eps, lam, L, delta)
    n_after = -(-t_star // qpi)  # ceil: first i with i*qpi >= T*
    if check == "after":
        n = max(1, n_after)
    elif check == "top":
        j = n_after + 1  # first i with (i - 1)*qpi >= T*, i.e. e_i >= eps
        e_j = eps_data_independent((j - 1) * qpi, lam, L, delta)
        n = j - 1 if e_j > eps else j
        if n == 0:
            floor = eps_data_independent(0, lam, L, delta)
            raise ConfigError(
                f"eps={eps} is below the accountant's floor log(1/delta)/L = {floor:.5f}: "
                "a top-checked loop (smartnoise) refuses to train ('epsilon too small'); "
                "increase eps or L, or raise delta"
            )
    else:
        raise ConfigError(f"check must be 'after' or 'top', got {check!r}")
    if max_iter is not None:
        if int(max_iter) != max_iter or max_iter < 0:
            raise ConfigError(f"max_iter must be an integer >= 0, got {max_iter!r}")
        n = min(n, int(max_iter))
    return int(n)
