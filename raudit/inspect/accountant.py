"""The accountant: recompute eps from the emitted votes and compare with the generator's.

The reference is the PATE-GAN paper's moments formula *with* its log and with the
validity condition of PATE's data-dependent bound (Papernot et al. 2017, Theorem 2),
plus PATE's pure-DP term (also valid, so the min stays a bound): raudit's ``fixed``
accountant,

    alpha(l) += min( 2 lam^2 l(l+1),  2 lam l,  log A  [only where q < (e^{2lam}-1)/(e^{4lam}-1)] ),
    A = (1-q)((1-q)/(1-e^{2lam} q))^l + q e^{2 lam l},  q = (2 + lam Delta)/(4 exp(lam Delta)),

charged per emitted vote (Delta = |2 n1 - k|), eps = min_l (alpha(l) + log(1/delta))/l
after each iteration. At lam = 1e-3 the data-independent term always wins, so every
variant agrees there; the runner therefore also runs a short probe at a larger lambda,
where a formula that differs from the paper's shows (the study's figure 4 scale gap).
A cell is violated when the code does not compute the paper's formula (the study's
table 2 compares code with the paper); where the paper's formula itself departs from
the correct accountant the evidence says so separately.
"""

from __future__ import annotations

import numpy as np

from raudit.accountants.gnmax import (DEFAULT_ORDERS, eps_from_rdp, rdp_gnmax_independent,
                                      rdp_threshold_independent)
from raudit.accountants.pate import eps_from_moments, vote_gap_table
from raudit.inspect.cells import Cell, cell
from raudit.inspect.context import Context
from raudit.inspect.partition import NO_EVENTS
from raudit.inspect.trace import Trace

__all__ = ["check_accountant", "check_overshoot", "check_uncharged", "confident_gnmax_reference",
           "correct_table", "recompute"]

#: relative difference of eps below which two accountants agree (float noise of sums)
AGREE = 1e-6


def correct_table(k: int, lam: float, L: int) -> np.ndarray:
    """Per-query moment increment of the correct accountant for every vote gap Delta = 0..k
    (shape (k + 1, L)): raudit's ``fixed`` variant (:mod:`raudit.accountants.pate`)."""
    return vote_gap_table("fixed", k, lam, L)


def recompute(tr: Trace, table: np.ndarray, k: int, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """(eps (T,), moments (T, L)) from the charged votes of ``tr`` with the per-gap
    ``table``, at the T iterations the generator reported an accountant step."""
    its, _ = tr.eps_series()
    by_it: dict[int, np.ndarray] = {}
    for it, n1 in tr.charged_queries():
        gap = np.abs(2 * n1.astype(np.int64) - k)
        by_it[it] = by_it.get(it, 0) + np.bincount(gap.ravel(), minlength=k + 1)
    alpha = np.zeros(table.shape[1])
    moments = np.empty((its.size, table.shape[1]))
    done = -1
    for i, it in enumerate(its):
        for j in sorted(x for x in by_it if done < x <= it):
            used = by_it[j] > 0
            alpha = alpha + by_it[j][used] @ table[used]
        done = it
        moments[i] = alpha
    return eps_from_moments(moments, delta), moments


def _compare(tr: Trace, k: int, lam: float, delta: float):
    """Generator, correct and paper-formula (eps, moments) per reported iteration."""
    _, gen = tr.eps_series()
    gen_m = tr.moments()
    L = gen_m.shape[1]
    ref = recompute(tr, correct_table(k, lam, L), k, delta)
    paper = recompute(tr, vote_gap_table("paper", k, lam, L), k, delta)
    return (gen, gen_m), ref, paper


def _rel(a: np.ndarray, b: np.ndarray) -> float:
    """Largest relative difference; a NaN on one side only counts as infinite."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size == 0:
        return 0.0
    nan = np.isnan(a) != np.isnan(b)
    if nan.any():
        return float("inf")
    ok = ~np.isnan(a)
    return float(np.max(np.abs(a[ok] - b[ok]) / np.maximum(np.abs(b[ok]), 1e-300), initial=0.0))


def _direction(gen: float, ref: float) -> str:
    if np.isnan(gen):
        return "NaN (the accountant's arithmetic broke)"
    if abs(gen - ref) <= AGREE * abs(ref):
        return "equal"
    word = "underestimate" if gen < ref else "overestimate"
    return f"{word} x{gen / ref:.3g} ({gen:.4g} vs correct {ref:.4g})"


def _describe(label: str, tr: Trace, k: int, lam: float, delta: float) -> tuple[bool, str]:
    (gen, gen_m), (ref, ref_m), (paper, paper_m) = _compare(tr, k, lam, delta)
    q = sum(n1.size for _, n1 in tr.charged_queries())
    d_eps, d_mom = _rel(gen, paper), _rel(gen_m, paper_m)
    bad = d_eps > AGREE or d_mom > AGREE
    text = (f"{label} (lambda {lam:g}, {gen.size} iterations, {q} charged queries): final eps_hat "
            f"{gen[-1]:.4g}, {_direction(gen[-1], ref[-1])}; first moment {gen_m[-1, 0]:.4g} vs "
            f"correct {ref_m[-1, 0]:.4g}, last ({gen_m.shape[1]}th) {gen_m[-1, -1]:.4g} vs "
            f"{ref_m[-1, -1]:.4g}; largest difference from the paper's formula: eps {d_eps:.2g}, "
            f"moments {d_mom:.2g}")
    if _rel(paper, ref) > AGREE:
        text += (f" [the paper's formula itself, q-validity unchecked: {_direction(paper[-1], ref[-1])}; "
                 "inherent to PATE-GAN's Algorithm 1, not counted against the code]")
    return bad, text


def check_accountant(ctx: Context) -> Cell:
    """Violated when eps_hat, recomputed from the same votes, does not follow the paper's
    formula (in the run or in the probe); the evidence gives direction and size against
    the correct (q-valid) accountant."""
    tr = ctx.trace
    if tr is None:
        return Cell("moments_accountant", "not_checked", NO_EVENTS)
    if tr.gradient_votes and not tr.votes:
        return _check_confident_gnmax(tr, ctx.delta)
    if not tr.accountant:
        if tr.votes:
            return Cell("moments_accountant", "not_checked", "votes but no AccountantStep events")
        return Cell("moments_accountant", "not_applicable",
                    "no accountant: no AccountantStep events (training runs a fixed number of iterations)")
    if tr.votes and all(v[5] == "gaussian" for v in tr.votes):
        return _check_gaussian(tr, ctx.delta)
    if tr.dp_sgd and not tr.votes:
        return _check_dp_sgd(tr, ctx.delta)
    k = tr.votes[0][7] if tr.votes else ctx.k
    if ctx.lam is None or not k:
        return Cell("moments_accountant", "not_checked", "lambda or k unknown: cannot recompute")
    bad, text = _describe("run", tr, k, ctx.lam, ctx.delta)
    if ctx.accountant_probe is not None and ctx.accountant_probe.accountant:
        pbad, ptext = _describe("probe", ctx.accountant_probe, k, ctx.probe_lam, ctx.probe_delta)
        bad, text = bad or pbad, f"{text}; {ptext}"
    else:
        text += f"; no probe at a larger lambda ({ctx.probe_skipped or 'not run'})"
    return cell("moments_accountant", bad, text, "moments")


def gaussian_reference(answers: int, sigma: float, delta: float) -> float:
    """eps of ``answers`` GNMax answers with noise sigma per vote count: each is a Gaussian
    mechanism of L2 sensitivity sqrt 2 (one record moves one vote), composed in
    dp_accounting's RDP accountant, computed here from the counts alone."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    acct = RdpAccountant()
    if answers:
        acct.compose(dp_accounting.GaussianDpEvent(sigma / np.sqrt(2.0)), int(answers))
    return float(acct.get_epsilon(delta))


def _against(tr: Trace, ref: float, what: str) -> Cell:
    """The generator's final eps_hat against ``ref``, what its recorded ``what`` cost:
    violated only below it (more is conservative: other charges, e.g. DP bounds)."""
    _, gen = tr.eps_series()
    final = float(gen[-1])
    under = bool(np.isnan(final) or final < ref * (1.0 - AGREE))
    ev = f"{what} cost eps {ref:.4g}; the generator reports {final:.4g}: {_direction(final, ref)}"
    if not under and final > ref * (1.0 + 1e-3):
        ev += " (its total also holds other charges, e.g. DP bounds)"
    return cell("moments_accountant", under, ev, "moments")


def confident_gnmax_reference(queries: int, answered: int, sigma1: float, sigma2: float,
                              delta: float) -> float:
    """The data-independent eps of ``queries`` Confident-GNMax threshold checks at sigma1,
    ``answered`` of them answered by GNMax at sigma2 (RDP, raudit's gnmax curves): what
    such a run spends whatever its votes, the bound a released eps may not undercut."""
    rdp = (queries * rdp_threshold_independent(sigma1, DEFAULT_ORDERS)
           + answered * rdp_gnmax_independent(sigma2, DEFAULT_ORDERS))
    return float(eps_from_rdp(rdp, DEFAULT_ORDERS, delta))


def _check_confident_gnmax(tr: Trace, delta: float) -> Cell:
    """G-PATE's aggregations: violated when the released eps_hat lies below the
    data-independent bound of its charged queries (the data-dependent stop, released
    without smooth sensitivity: upstream's accounting, the switch ``accountant=gnmax``)."""
    if not tr.accountant:
        return Cell("moments_accountant", "not_checked", "gradient votes but no accountant steps")
    charged = [v for v in tr.gradient_votes if v[3]]
    q, a = sum(v[1] for v in charged), sum(v[2] for v in charged)
    sigma1, sigma2 = tr.gradient_votes[0][5], tr.gradient_votes[0][6]
    ref = confident_gnmax_reference(q, a, sigma1, sigma2, delta)
    c = _against(tr, ref, f"{len(charged)} charged Confident-GNMax aggregations ({q} threshold "
                 f"checks at sigma1 {sigma1:g}, {a} answers at sigma2 {sigma2:g}; "
                 f"data-independent RDP, delta {delta:g})")
    if c.status == "violated":
        return cell("moments_accountant", True, c.evidence + ": the stop and eps_hat are "
                    "data-dependent RDP released without smooth sensitivity (the published "
                    "G-PATE's accounting), so eps_hat is no DP guarantee", c.plot)
    return c


def _check_gaussian(tr: Trace, delta: float) -> Cell:
    """Gaussian votes: the generator's eps must be at least what its charged answers cost."""
    if not tr.accountant:
        return Cell("moments_accountant", "not_checked", "Gaussian votes but no accountant steps")
    sigma = tr.votes[0][6]
    q = sum(n1.size for _, n1 in tr.charged_queries())
    return _against(tr, gaussian_reference(q, sigma, delta),
                    f"{q} charged GNMax answers at sigma {sigma:.4g} (RDP, delta {delta:g}, "
                    "recomputed from the votes)")


def _check_dp_sgd(tr: Trace, delta: float) -> Cell:
    """DP-SGD: the generator's eps must be at least what its recorded steps cost
    (Poisson-subsampled Gaussian, dp_accounting's RDP, recomputed from the events)."""
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    if not tr.accountant:
        return Cell("moments_accountant", "not_checked", "DP-SGD steps but no accountant steps")
    acct = RdpAccountant()
    for _, steps, z, _, q in tr.dp_sgd:
        acct.compose(dp_accounting.PoissonSampledDpEvent(q, dp_accounting.GaussianDpEvent(z)),
                     steps)
    return _against(tr, float(acct.get_epsilon(delta)),
                    f"{sum(v[1] for v in tr.dp_sgd)} DP-SGD steps (RDP, delta {delta:g}, "
                    "recomputed from the events)")


def check_overshoot(ctx: Context) -> Cell:
    """Violated when the released model's eps_hat is above the eps it was trained for."""
    tr = ctx.trace
    if tr is None:
        return Cell("overshoot", "not_checked", NO_EVENTS)
    its, eps = tr.eps_series()
    if not its.size:
        return Cell("overshoot", "not_applicable", "no accountant steps: no stopping rule")
    final = float(eps[-1])
    over = bool(final > ctx.epsilon)
    ev = f"training ended after {its.size} iterations at eps_hat {final:.4g} (eps {ctx.epsilon:g})"
    if over and its.size > 1:
        ev += f"; eps_hat was {float(eps[-2]):.4g} one iteration earlier: the last iteration ran past eps"
    return cell("overshoot", over, ev, "moments")


def check_uncharged(ctx: Context) -> Cell:
    """Violated when labels from teacher votes were released without charging the accountant."""
    tr = ctx.trace
    if tr is None:
        return Cell("uncharged_queries", "not_checked", NO_EVENTS)
    if not tr.votes:
        return Cell("uncharged_queries", "not_applicable", "no teacher votes")
    free = [v for v in tr.votes if not v[3]]
    q = sum(v[1].size for v in free)
    return cell("uncharged_queries", bool(free), f"{len(free)} of {len(tr.votes)} vote "
                f"aggregations ({q} queries) were answered without charging the accountant")
