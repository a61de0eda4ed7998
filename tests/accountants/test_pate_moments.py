"""PATE moments accountants: golden values, scalar references, and one test per bug.

The references below are written independently of raudit's vectorised tables: one
query at a time, with ``math`` (faithful variants, so overflow and NaN behave as in
upstream's scalar numpy) or ``mpmath`` at 50 digits (the correct bound).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from raudit.accountants import VARIANTS, create, eps_from_moments, get, moments_fixed, moments_missing_log, moments_paper, moments_synthcity, moments_updated, vote_gap_table
from raudit.events import PateVote
from raudit.accountants.errors import EventShapeError
from raudit.errors import ConfigError, UnknownNameError

mpmath.mp.dps = 50


# ------------------------------------------------------------- scalar references


def _q(lam, gap):
    # numpy scalars, as upstream: x/0.0 is inf (with a warning), not ZeroDivisionError
    return np.float64(2 + lam * gap) / (4 * np.exp(np.float64(lam * gap)))


def _log_arg(q, lam, l):
    with np.errstate(all="ignore"):
        return float((1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** l + q * np.exp(2 * lam * l))


def ref_paper(votes, k, lam, L):
    out = [0.0] * L
    for v in votes:
        q = _q(lam, abs(2 * v - k))
        for l in range(1, L + 1):
            indep = 2 * lam**2 * l * (l + 1)
            t = _log_arg(q, lam, l)
            dep = math.log(t) if t > 0 and math.isfinite(t) else math.inf
            out[l - 1] += min(indep, dep)
    return out


def ref_updated(votes, k, lam, L=20):
    out = [0.0] * L
    for v in votes:
        q = _q(lam, abs(2 * v - k))
        for l in range(L):
            t = _log_arg(q, lam, l + 1)
            inc = math.log(t) if t > 0 else math.nan
            out[l] += inc if math.isnan(inc) else min(2 * lam**2 * (l + 1) * (l + 2), inc)
    return out


def ref_synthcity(votes, k, lam, L=100):
    out = [0.0] * L
    for v in votes:
        q = _q(lam, abs(2 * v - k))
        for lidx in range(L):
            upper = 2 * lam**2 * (lidx + 1) * (lidx + 2)
            with np.errstate(all="ignore"):
                t = (1 - q) * ((1 - q) / (1 - np.exp(2 * lam) * q)) ** (lidx + 1)
                t = float(t + q * np.exp(2 * lam * lidx + 1))
            out[lidx] += math.nan if t <= 0 else max(0.0, min(math.log(t), upper))
    return out


def ref_missing_log(votes, k, lam, L=100):
    out = [0.0] * L
    for v in votes:
        q = _q(lam, abs(2 * v - k))
        for l in range(1, L + 1):
            out[l - 1] += min(_log_arg(q, lam, l), 2 * lam**2 * l * (l + 1))
    return out


def ref_fixed(votes, k, lam, L):
    """PATE (Papernot et al. 2017) logmgf for a (2 lam)-DP noisy argmax, in mpmath."""
    lam = mpmath.mpf(lam)
    eps = 2 * lam
    out = [mpmath.mpf(0)] * L
    for v in votes:
        gap = abs(2 * v - k)
        q = (2 + lam * gap) / (4 * mpmath.exp(lam * gap))
        valid = q < (mpmath.exp(eps) - 1) / (mpmath.exp(2 * eps) - 1)
        for l in range(1, L + 1):
            terms = [eps**2 * l * (l + 1) / 2, eps * l]
            if valid:
                r = (1 - q) / (1 - mpmath.exp(eps) * q)
                terms.append(mpmath.log((1 - q) * r**l + q * mpmath.exp(eps * l)))
            out[l - 1] += min(terms)
    return [float(x) for x in out]


REFERENCES = {
    "paper": ref_paper,
    "updated": ref_updated,
    "synthcity-index-bug": ref_synthcity,
    "missing-log": ref_missing_log,
    "fixed": ref_fixed,
}

CASES = [  # (k, lam, L)
    (5, 1e-3, 100),
    (2, 1e-3, 20),
    (10, 0.05, 30),
    (20, 0.3, 25),
    (40, 1.0, 12),
    (11, 0.4, 20),
    (10, 0.4, 20),  # ties give NaN in `updated`
]


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("k,lam,L", CASES)
def test_matches_scalar_reference(name, k, lam, L):
    rng = np.random.default_rng(abs(hash((name, k, lam, L))) % 2**32)
    votes = rng.integers(0, k + 1, size=(3, 17))
    got = get(name)(votes, k, lam, L)
    assert got.shape == (3, L) and got.dtype == np.float64
    want = np.array([REFERENCES[name](row.tolist(), k, lam, L) for row in votes])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300, equal_nan=True)


# ----------------------------------------------------------------- hand-computed


def test_eps_floor_before_any_query():
    # log(1/delta)/L with delta = 1e-5, L = 100 (spec section 10): 0.11513
    assert eps_from_moments(np.zeros(100), 1e-5) == pytest.approx(math.log(1e5) / 100, rel=1e-15)
    assert eps_from_moments(np.zeros(100), 1e-5) == pytest.approx(0.11513, abs=5e-6)


def test_one_query_small_lambda_is_data_independent():
    # lam = 1e-3: one query adds 2 lam^2 l(l+1): 4e-6 at l = 1, 1.2e-5 at l = 2.
    for name in ("paper", "updated", "synthcity-index-bug", "missing-log", "fixed"):
        a = get(name)(np.array([3]), 5, 1e-3, 20)
        np.testing.assert_allclose(a[:2], [4e-6, 1.2e-5], rtol=1e-12)


def test_fixed_uses_pure_dp_term_for_large_lambda():
    # lam = 1, tie (q = 1/2 is invalid): min(2 l(l+1), 2 l) = 2 l for every l >= 1.
    a = moments_fixed(np.array([5]), 10, 1.0, 6)
    np.testing.assert_allclose(a, 2.0 * np.arange(1, 7), rtol=1e-15)


def test_shapes_and_leading_axes():
    votes = np.random.default_rng(0).integers(0, 6, size=(2, 3, 7))
    a = moments_paper(votes, 5, 1e-2, 9)
    assert a.shape == (2, 3, 9)
    np.testing.assert_allclose(a[1, 2], moments_paper(votes[1, 2], 5, 1e-2, 9))
    assert eps_from_moments(a, 1e-5).shape == (2, 3)
    assert moments_paper(np.zeros((4, 0), dtype=int), 5, 1e-3, 3).tolist() == [[0.0] * 3] * 4


@pytest.mark.parametrize("bad", [np.array([6]), np.array([-1]), np.array([1.5])])
def test_rejects_impossible_votes(bad):
    with pytest.raises(ConfigError):
        moments_paper(bad, 5, 1e-3, 10)


@pytest.mark.parametrize("k,lam,L", [(0, 1e-3, 10), (5, 0.0, 10), (5, -1.0, 10), (5, 1e-3, 0)])
def test_rejects_bad_parameters(k, lam, L):
    with pytest.raises(ConfigError):
        moments_fixed(np.array([1]), k, lam, L)


# ------------------------------------------------------------ one test per bug


def test_updated_nan_when_log_argument_nonpositive():
    # lam = 0.4, tied vote: q = 1/2 and 1 - e^{0.8}/2 < 0, so the ratio is about -4.4
    # and for odd orders (1-q) ratio^l + q e^{0.8 l} < 0: log -> NaN.
    k, lam = 10, 0.4
    q = 0.5
    assert 1 - math.exp(2 * lam) * q < 0 and _log_arg(q, lam, 1) < 0
    a = moments_updated(np.array([[5, 7]]), k, lam)
    assert np.isnan(a[0, 0::2]).all() and np.isfinite(a[0, 1::2]).all()
    eps_hat = eps_from_moments(a, 1e-5)
    assert np.isnan(eps_hat).all()
    assert not (eps_hat[0] < 1.0)  # upstream's `while eps_hat < eps` stops silently
    # the paper variant falls back to the data-independent term; fixed is valid too
    assert np.isfinite(moments_paper(np.array([5, 7]), k, lam, 20)).all()
    assert np.isfinite(moments_fixed(np.array([5, 7]), k, lam, 20)).all()


def test_updated_nan_stays_in_its_own_model():
    acc = create("updated", lam=0.4, orders=20, k=10, models=3)
    acc.compose(PateVote(np.array([[5], [9], [10]]), acc.k))
    eps = acc.eps(1e-5)
    assert np.isnan(eps[0]) and np.isfinite(eps[1:]).all()


def test_synthcity_index_bug_underestimates_eps():
    # exp(2 lam lidx + 1) < exp(2 lam (lidx+1)) iff lam > 1/2: smaller moments, smaller eps.
    votes = np.full((1, 200), 20)  # unanimous, k = 20: q valid, the log term is used
    for lam in (0.6, 0.75, 1.0):
        bug = eps_from_moments(moments_synthcity(votes, 20, lam), 1e-5)
        right = eps_from_moments(moments_fixed(votes, 20, lam, 100), 1e-5)
        assert right == pytest.approx(eps_from_moments(moments_paper(votes, 20, lam, 100), 1e-5))
        assert bug < right - 1e-3


def test_synthcity_index_bug_overestimates_below_half_lambda():
    # For lam < 1/2 the bug inflates the log term (conservative) where it would win...
    votes = np.full((1, 100), 100)
    bug = eps_from_moments(moments_synthcity(votes, 100, 0.1), 1e-5)
    right = eps_from_moments(moments_paper(votes, 100, 0.1, 100), 1e-5)
    assert bug > right + 0.05
    # ...and at the default lam = 1e-3 the clip to 2 lam^2 (l+1)(l+2) hides it entirely.
    votes = np.random.default_rng(1).integers(0, 11, size=(4, 64))
    np.testing.assert_array_equal(moments_synthcity(votes, 10, 1e-3), moments_paper(votes, 10, 1e-3, 100))


def test_missing_log_overestimates_eps_for_large_lambda():
    votes = np.full((1, 100), 100)  # unanimous: q ~ 1e-21, log term ~ 0, t ~ 1
    lam = 0.5
    bug = eps_from_moments(moments_missing_log(votes, 100, lam), 1e-5)
    right = eps_from_moments(moments_fixed(votes, 100, lam, 100), 1e-5)
    assert bug > 2.5 and right < 0.3


def test_missing_log_no_effect_for_small_lambda():
    # t >= 1 > 2 lam^2 L(L+1) = 0.0202 for lam = 1e-3, L = 100: the min never picks t.
    votes = np.random.default_rng(2).integers(0, 1001, size=(3, 50))
    np.testing.assert_array_equal(
        moments_missing_log(votes, 1000, 1e-3), moments_paper(votes, 1000, 1e-3, 100)
    )


def test_paper_ignores_q_validity_condition():
    # lam = 0.4, tie: q = 1/2 >= 1/(e^{0.8}+1) = 0.31, yet at even orders the paper's
    # formula is finite and below 2 lam^2 l(l+1), so the paper uses an invalid bound.
    table = vote_gap_table("paper", 10, 0.4, 4)
    indep = 2 * 0.4**2 * np.arange(1, 5) * np.arange(2, 6)
    assert table[0, 3] < indep[3] - 1.0
    fixed = vote_gap_table("fixed", 10, 0.4, 4)[0]
    np.testing.assert_allclose(fixed, np.minimum(indep, 0.8 * np.arange(1, 5)))


def test_fixed_threshold_is_lam_dp_with_exact_flip_probability():
    # single Lap(1/lam) on n1: lam-DP; q = exp(-lam Delta / 2)/2.
    lam, k, L = 0.5, 30, 8
    got = vote_gap_table("fixed-threshold", k, lam, L)
    l = np.arange(1, L + 1)
    q = 0.5 * math.exp(-lam * 30 / 2)
    dep = np.log((1 - q) * ((1 - q) / (1 - math.exp(lam) * q)) ** l + q * np.exp(lam * l))
    want = np.minimum.reduce([lam**2 * l * (l + 1) / 2, lam * l, dep])
    np.testing.assert_allclose(got[30], want, rtol=1e-12)
    np.testing.assert_allclose(got[0], np.minimum(lam**2 * l * (l + 1) / 2, lam * l))


# ---------------------------------------------------------------- registry/class


def test_registry_names_and_unknown_name():
    assert {"paper", "updated", "synthcity-index-bug", "missing-log", "fixed"} <= set(VARIANTS.names())
    with pytest.raises(UnknownNameError) as err:
        get("nope")
    assert "nope" in str(err.value) and "missing-log" in str(err.value)
    assert isinstance(err.value, KeyError)


def test_accountant_charges_only_active_models():
    rng = np.random.default_rng(3)
    acc = create("fixed", lam=0.05, orders=30, k=7, models=4)
    total = np.zeros((4, 30))
    for step in range(5):
        votes = rng.integers(0, 8, size=(4, 16))
        mask = np.array([True, step % 2 == 0, False, True])
        acc.compose(PateVote(votes, acc.k, mask=mask))
        total[mask] += moments_fixed(votes[mask], 7, 0.05, 30)
    np.testing.assert_allclose(acc.alpha, total, rtol=1e-13)
    assert acc.queries.tolist() == [80, 48, 0, 80]
    np.testing.assert_allclose(acc.eps(1e-5), eps_from_moments(total, 1e-5))
    assert acc.eps(1e-5)[2] == pytest.approx(math.log(1e5) / 30)


def test_accountant_rejects_bad_shapes():
    acc = create("paper", lam=1e-3, orders=10, k=5, models=2)
    with pytest.raises(EventShapeError):
        acc.compose(PateVote(np.zeros((3, 4), dtype=int), 5))
    with pytest.raises(ConfigError):
        PateVote(np.zeros((2, 4), dtype=int), 5, mask=np.array([1, 0]))
    assert not acc.queries.any()  # rejected events changed nothing
    with pytest.raises(ConfigError):
        create("paper", lam=-1.0, orders=10, k=5)
    with pytest.raises(UnknownNameError):
        create("nope", lam=1e-3, orders=10, k=5)
