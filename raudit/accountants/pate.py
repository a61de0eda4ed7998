"""PATE moments accountants as pure functions over teacher vote counts.

A *query* is one generated sample labelled by ``k`` teachers; ``n1`` teachers vote
"real" and ``Delta = |n0 - n1| = |2*n1 - k|``. Every function takes ``n1`` of shape
``(..., Q)`` (e.g. ``(models, batch)``) and returns the moment increments of those Q
queries summed over the last axis, shape ``(..., L)``, float64; index ``l - 1`` holds
the log-moment of order ``l`` (``l = 1..L``).

The per-query increment depends on the query only through ``Delta``, an integer in
``[0, k]``, so each variant builds a ``(k + 1, L)`` table once and the queries are
counted per ``Delta`` (a bincount and one matrix product instead of Q*L
transcendental calls; 1,000 models x 320 queries x 100 orders is then cheap). The
tables' formulas are :mod:`raudit.accountants.pate_tables`.

Variants (see ``shared/spec/IMPLEMENTATIONS.md`` sections 0, 2, 3, 5, 6, 7):

- ``paper``: Algorithm 1 of PATE-GAN (Jordon et al., ICLR 2019), q-validity unchecked.
- ``updated``: the 2021 release; identical formula, NaN when the log argument is <= 0.
- ``synthcity-index-bug``: ``exp(2 lam lidx + 1)`` for ``exp(2 lam (lidx + 1))``,
  clipped to ``[0, 2 lam^2 (lidx+1)(lidx+2)]``.
- ``missing-log``: borealis / smartnoise, ``min(t, 2 lam^2 l(l+1))`` without the log.
- ``fixed``: PATE's own bound (Papernot et al., ICLR 2017, Theorems 2-3 and its
  released ``logmgf_exact``), with the validity condition enforced.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from raudit.accountants import pate_tables as pt
from raudit.errors import ConfigError
from raudit.registry import Registry

__all__ = [
    "VARIANTS",
    "Variant",
    "eps_from_moments",
    "moments_fixed",
    "moments_fixed_threshold",
    "moments_missing_log",
    "moments_paper",
    "moments_synthcity",
    "moments_updated",
    "vote_gap_table",
]


# --------------------------------------------------------------------------- helpers


def _check(k: int, lam: float, L: int) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ConfigError(f"k (number of teachers) must be an integer >= 1, got {k!r}")
    if not np.isfinite(lam) or lam <= 0:
        raise ConfigError(f"lam (PATE noise parameter) must be a finite number > 0, got {lam!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ConfigError(f"L (number of moments) must be an integer >= 1, got {L!r}")


def _aggregate(n1: ArrayLike, k: int, table: np.ndarray) -> np.ndarray:
    """Sum ``table[Delta]`` over the last axis of ``n1``; NaN/inf rows only count where used."""
    votes = np.asarray(n1)
    if votes.ndim == 0:
        raise ConfigError("n1 must have a query axis: shape (..., Q), got a scalar")
    if votes.size and not np.issubdtype(votes.dtype, np.integer):
        if not np.all(votes == np.rint(votes)):
            raise ConfigError("n1 (teachers voting 'real') must hold integer counts")
    n = votes.astype(np.int64)
    if n.size and (n.min() < 0 or n.max() > k):
        raise ConfigError(f"n1 must lie in [0, k={k}], got values in [{n.min()}, {n.max()}]")
    lead, n_q = n.shape[:-1], n.shape[-1]
    rows = int(np.prod(lead, dtype=np.int64))
    gap = np.abs(2 * n - k).reshape(rows, n_q)
    flat = (np.arange(rows)[:, None] * (k + 1) + gap).ravel()
    counts = np.bincount(flat, minlength=rows * (k + 1)).reshape(rows, k + 1).astype(np.float64)
    finite = np.isfinite(table)
    out = counts @ np.where(finite, table, 0.0)
    # 0 * NaN would poison models that never cast such a vote, so non-finite entries
    # are added only to the rows that used them (NaN/inf then propagate as upstream).
    for d in np.flatnonzero(~finite.all(axis=1)):
        used = counts[:, d] > 0
        out[used] += np.where(finite[d], 0.0, table[d])
    return out.reshape(lead + (table.shape[1],))


@functools.lru_cache(maxsize=64)
def _table(variant: str, k: int, lam: float, L: int) -> np.ndarray:
    # training charges the same (variant, k, lam, L) thousands of times: build once
    table = VARIANTS.get(variant).table(k, lam, L)
    table.setflags(write=False)
    return table


def vote_gap_table(variant: str, k: int, lam: float, L: int) -> np.ndarray:
    """Per-query increment of ``variant`` for every vote gap: shape ``(k + 1, L)``.

    Row ``Delta`` holds the increment of one query whose votes differ by ``Delta``
    (rows of the wrong parity for ``k`` are never used). Cached and read-only.
    """
    VARIANTS.get(variant)  # UnknownNameError listing the variants
    _check(k, lam, L)
    return _table(variant, int(k), float(lam), int(L))


# ------------------------------------------------------------------- public moments


def moments_paper(n1: ArrayLike, k: int, lam: float, L: int) -> np.ndarray:
    """PATE-GAN Algorithm 1: ``alpha(l) += min(2 lam^2 l(l+1), log(...))`` per query.

    q = (2 + lam Delta)/(4 exp(lam Delta)). The validity condition on q is not checked
    (as in the paper). Where the log argument is <= 0 or not finite the formula is
    undefined and the data-independent term is used (see
    :func:`raudit.accountants.pate_tables.table_paper`).
    """
    _check(k, lam, L)
    return _aggregate(n1, k, _table("paper", int(k), float(lam), int(L)))


def moments_updated(n1: ArrayLike, k: int, lam: float, L: int = 20) -> np.ndarray:
    """The ``updated`` release (2021): the paper's formula with L = 20, no rescue.

    When ``1 - q e^{2 lam} < 0`` the log argument can be negative for odd orders and
    the increment is NaN (e.g. lam = 0.4 with a tied vote). The NaN is reproduced:
    it propagates into alpha and eps, and upstream's ``while eps_hat < eps`` then stops
    silently because ``nan < eps`` is False.
    """
    _check(k, lam, L)
    return _aggregate(n1, k, _table("updated", int(k), float(lam), int(L)))


def moments_synthcity(n1: ArrayLike, k: int, lam: float, L: int = 100) -> np.ndarray:
    """synthcity's accountant: ``clip(log(t0 + q exp(2 lam lidx + 1)), 0, upper)``.

    The index bug multiplies ``q e^{2 lam lidx}`` by ``e`` instead of ``e^{2 lam}``:
    smaller when lam > 1/2 (eps underestimated), larger when lam < 1/2 (then the clip
    to the data-independent ``upper`` usually hides it).
    """
    _check(k, lam, L)
    return _aggregate(n1, k, _table("synthcity-index-bug", int(k), float(lam), int(L)))


def moments_missing_log(n1: ArrayLike, k: int, lam: float, L: int = 100) -> np.ndarray:
    """borealis / smartnoise: ``alpha_l += min(t, 2 lam^2 l(l+1))``, t the log's argument.

    t >= 1 whenever e^{2 lam} q < 1, so with 2 lam^2 L(L+1) < 1 (lam = 1e-3, L = 100)
    the data-independent term always wins and the bug has no effect; for larger lam,
    t > log t and eps is overestimated.
    """
    _check(k, lam, L)
    return _aggregate(n1, k, _table("missing-log", int(k), float(lam), int(L)))


def moments_fixed(n1: ArrayLike, k: int, lam: float, L: int, *, mechanism: str = "argmax") -> np.ndarray:
    """PATE's data-dependent bound, used correctly (raudit's ``fixed`` PATE-GAN).

    ``mechanism="argmax"`` (the analysed mechanism): each of the two vote counts gets
    its own Lap(1/lam) noise and the noisy argmax is released; the query is
    (2 lam)-DP and, per query,

        alpha(l) += min( 2 lam^2 l(l+1),  2 lam l,  log((1-q)((1-q)/(1-e^{2lam}q))^l + q e^{2 lam l}) )

    with q = (2 + lam Delta)/(4 exp(lam Delta)), the log term used only when
    q < (e^{2lam} - 1)/(e^{4lam} - 1). Sources: Papernot et al. 2017 (PATE), Theorem 2
    (log term and its condition), Theorem 3 (q for noisy argmax) and the min with the
    data-independent terms as in its released ``logmgf_exact`` (priv_eps = 2 lam).
    Note: the third term is 2 lam l (pure (2 lam)-DP), not lam l.

    ``mechanism="threshold"``: one Lap(1/lam) on n1 compared with k/2 (what the ports
    do); lam-DP, q = exp(-lam Delta / 2)/2, the same bound with 2 lam replaced by lam.
    """
    _check(k, lam, L)
    names = {"argmax": "fixed", "threshold": "fixed-threshold"}
    if mechanism not in names:
        raise ConfigError(f"mechanism must be 'argmax' or 'threshold', got {mechanism!r}")
    return _aggregate(n1, k, _table(names[mechanism], int(k), float(lam), int(L)))


def moments_fixed_threshold(n1: ArrayLike, k: int, lam: float, L: int) -> np.ndarray:
    """``moments_fixed(..., mechanism="threshold")`` under its own registry name."""
    return moments_fixed(n1, k, lam, L, mechanism="threshold")


def eps_from_moments(alpha: ArrayLike, delta: float) -> np.ndarray:
    """eps_hat = min_l (alpha_l + log(1/delta)) / l over the last axis (l = 1..L).

    Moments accountant conversion (Abadi et al. 2016, Theorem 2.2; PATE-GAN Algorithm 1).
    ``updated`` writes it 0-based as (alpha[l] + log(1/delta))/(l + 1): the same thing.
    NaN propagates (``np.min``), as in ``updated``/``synthcity``, whose loops
    ``while eps_hat < eps`` then end silently because ``nan < eps`` is False.
    """
    if not 0.0 < delta < 1.0:
        raise ConfigError(f"delta must lie in (0, 1), got {delta!r}")
    a = np.asarray(alpha, dtype=np.float64)
    l = np.arange(1, a.shape[-1] + 1, dtype=np.float64)
    out: np.ndarray = np.min((a + np.log(1.0 / delta)) / l, axis=-1)
    return out  # (numpy's stubs give Any)


@dataclass(frozen=True)
class Variant:
    """One PATE moments variant: its per-query increment for every vote gap, and its
    moments function over vote counts (both pure)."""

    table: Callable[[int, float, int], np.ndarray]
    moments: Callable[..., np.ndarray]


#: The PATE moments variants, by the names ports, accountants and the CLI use (one
#: place: the accountant registry and the ports' ``accountant`` option read it).
VARIANTS: Registry[Variant] = Registry("accountant")
for _name, _tab, _mom in (
    ("paper", pt.table_paper, moments_paper),
    ("updated", pt.table_updated, moments_updated),
    ("synthcity-index-bug", pt.table_synthcity, moments_synthcity),
    ("missing-log", pt.table_missing_log, moments_missing_log),
    ("fixed", pt.table_fixed, moments_fixed),
    ("fixed-threshold", pt.table_fixed_threshold, moments_fixed_threshold),
):
    VARIANTS.register(_name, Variant(_tab, _mom))
