"""The Confident-GNMax data-dependent RDP accountant against independently computed values."""

import math

import numpy as np
import pytest
import dp_accounting
from dp_accounting import rdp as dp_rdp

from raudit.accountants import create
from raudit.accountants import gnmax as G
from raudit.events import ConfidentGNMax
from raudit.errors import ConfigError

ORDERS = G.DEFAULT_ORDERS


def phi_sf(x: float) -> float:
    """Pr[N(0, 1) >= x]."""
    return 0.5 * math.erfc(x / math.sqrt(2.0))


def theorem6(logq: float, sigma: float, alpha: float) -> float:
    """Scalar Theorem 6 of Papernot et al. 2018 written from the paper (not from gnmax.py)."""
    q = math.exp(logq)
    mu2 = sigma * math.sqrt(math.log(1.0 / q))
    mu1 = mu2 + 1.0
    eps1, eps2 = mu1 / sigma ** 2, mu2 / sigma ** 2
    ok = (mu2 > 1 and alpha < mu1 and math.log(1 / q) > eps2
          and q <= math.exp((mu2 - 1) * eps2) / ((mu1 / (mu1 - 1)) * (mu2 / (mu2 - 1))) ** mu2)
    indep = alpha / sigma ** 2
    if not ok:
        return indep
    A = (1 - q) / (1 - (math.exp(eps2) * q) ** ((mu2 - 1) / mu2))
    B = math.exp(eps1) / q ** (1 / (mu1 - 1))
    value = math.log((1 - q) * A ** (alpha - 1) + q * B ** (alpha - 1)) / (alpha - 1)
    return min(indep, value)


def test_logq_hand_checked():
    # two bins, gap 2, sigma 1: Pr[N(0, 2) >= 2] = Pr[N(0,1) >= sqrt 2]
    assert G.logq_gnmax(np.array([3, 1]), 1.0) == pytest.approx(math.log(phi_sf(math.sqrt(2))))
    # three bins: union bound over the two others
    want = math.log(phi_sf(2 / (math.sqrt(2) * 3)) + phi_sf(5 / (math.sqrt(2) * 3)))
    assert G.logq_gnmax(np.array([1, 6, 4]), 3.0) == pytest.approx(want)
    # a tie is capped at log(1 - 1/C)
    assert G.logq_gnmax(np.array([5, 5]), 1.0) == pytest.approx(math.log(0.5))


def test_logpr_answered_hand_checked():
    assert G.logpr_answered(np.array([[7, 3]]), 5.0, 2.0)[0] == pytest.approx(math.log(phi_sf(-1.0)))


@pytest.mark.parametrize("counts,sigma", [((100, 0), 10.0), ((60, 5, 0, 0), 8.0), ((3000, 900), 400.0)])
def test_data_dependent_bound_matches_scalar_theorem6(counts, sigma):
    logq = float(G.logq_gnmax(np.array(counts), sigma))
    got = G.rdp_gnmax(logq, sigma, ORDERS)
    want = np.array([theorem6(logq, sigma, a) for a in ORDERS])
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-15)
    assert np.any(got < ORDERS / sigma ** 2)  # the bound is in force somewhere


def test_invalid_conditions_fall_back_to_data_independent():
    # a near tie: q close to 1/2, mu2 small: data-independent everywhere
    logq = float(G.logq_gnmax(np.array([10, 9]), 5.0))
    np.testing.assert_allclose(G.rdp_gnmax(logq, 5.0, ORDERS), ORDERS / 25.0)
    # a fixed outcome (q = 0) costs nothing
    np.testing.assert_array_equal(G.rdp_gnmax(-np.inf, 5.0, ORDERS), 0.0)


def _dp_accounting_rdp(noise_multiplier: float, count: int, orders) -> np.ndarray:
    acct = dp_rdp.RdpAccountant(orders=list(orders))
    acct.compose(dp_accounting.GaussianDpEvent(noise_multiplier), count)
    return np.asarray(acct._rdp)  # the composed curve, per order


def test_data_independent_curves_equal_dp_accounting_gaussian():
    orders = [2.0, 3.0, 10.0, 50.0]
    # threshold: sensitivity 1, sigma1 -> z = sigma1; GNMax: sensitivity sqrt 2 -> z = sigma2 / sqrt 2
    np.testing.assert_allclose(3 * G.rdp_threshold_independent(4.0, orders),
                               _dp_accounting_rdp(4.0, 3, orders), rtol=1e-12)
    np.testing.assert_allclose(2 * G.rdp_gnmax_independent(6.0, orders),
                               _dp_accounting_rdp(6.0 / math.sqrt(2), 2, orders), rtol=1e-12)


def test_data_dependent_never_exceeds_data_independent():
    rng = np.random.default_rng(0)
    for _ in range(50):
        k, bins = int(rng.integers(5, 3000)), int(rng.integers(2, 11))
        counts = rng.multinomial(k, rng.dirichlet(np.full(bins, rng.uniform(0.05, 2))), size=(1, 20))
        answered = rng.random((1, 20)) < 0.7
        s1, s2 = float(rng.uniform(0.5, 0.8 * k)), float(rng.uniform(0.5, 0.5 * k))
        dep = G.rdp_confident_gnmax(counts, answered, 0.5 * k, s1, s2, ORDERS)
        ind = G.rdp_confident_gnmax(counts, answered, 0.5 * k, s1, s2, ORDERS, data_dependent=False)
        assert np.all(dep <= ind * (1 + 1e-12))
        assert np.all(dep >= 0)


def test_threshold_charged_on_every_query_gnmax_only_when_answered():
    counts = np.array([[[20, 1, 0], [11, 10, 0]]])
    none = G.rdp_confident_gnmax(counts, np.array([[False, False]]), 10, 3.0, 2.0, ORDERS)
    one = G.rdp_confident_gnmax(counts, np.array([[True, False]]), 10, 3.0, 2.0, ORDERS)
    thr = sum(G.rdp_threshold(G.logpr_answered(c[None], 10, 3.0), 3.0, ORDERS)[0] for c in counts[0])
    np.testing.assert_allclose(none[0], thr)
    gn = G.rdp_gnmax(G.logq_gnmax(counts[0, 0], 2.0), 2.0, ORDERS)
    np.testing.assert_allclose(one[0], thr + gn)
    ind = G.rdp_confident_gnmax(counts, np.array([[True, False]]), 10, 3.0, 2.0, ORDERS,
                                data_dependent=False)
    np.testing.assert_allclose(ind[0], 2 * ORDERS / 18 + ORDERS / 4)


def test_a_record_moving_s_votes_is_charged_at_sigma_over_s_with_q_at_the_drawn_sigma():
    # issue 47: G-PATE's shared optimiser state makes one record move a slot's s teachers
    counts, ans = np.array([[[300, 0, 0], [160, 140, 0]]]), np.array([[True, True]])
    one = G.rdp_confident_gnmax(counts, ans, 150, 30.0, 20.0, ORDERS)
    two = G.rdp_confident_gnmax(counts, ans, 150, 30.0, 20.0, ORDERS, sensitivity=2)
    ind = G.rdp_confident_gnmax(counts, ans, 150, 30.0, 20.0, ORDERS, data_dependent=False,
                                sensitivity=2)
    np.testing.assert_allclose(ind, 4 * G.rdp_confident_gnmax(
        counts, ans, 150, 30.0, 20.0, ORDERS, data_dependent=False), rtol=1e-12)
    # Theorem 6 written from the paper, its curves at sigma / 2, q under the noise drawn
    lp = G.logpr_answered(counts[0], 150, 30.0)
    lq = G.logq_gnmax(counts[0], 20.0)
    want = [sum(theorem6(min(p, math.log1p(-math.exp(p))), math.sqrt(2.0) * 15.0, a)
                + theorem6(q, 10.0, a) for p, q in zip(lp, lq)) for a in ORDERS[:60]]
    np.testing.assert_allclose(two[0, :60], want, rtol=1e-9)
    assert np.all(two >= one) and np.all(two <= ind * (1 + 1e-12)) and np.any(two < ind)
    with pytest.raises(ValueError, match="sensitivity"):
        G.rdp_confident_gnmax(counts, ans, 150, 30.0, 20.0, ORDERS, sensitivity=0)


def test_eps_conversion_hand_checked():
    rdp = np.array([0.5, 0.2])
    orders = np.array([2.0, 11.0])
    want = min(0.5 + math.log(1e5) / 1, 0.2 + math.log(1e5) / 10)
    assert G.eps_from_rdp(rdp, orders, 1e-5) == pytest.approx(want)


def _event(counts, answered, mask=None):
    return ConfidentGNMax(np.asarray(counts), np.asarray(answered, dtype=bool), 50.0, 20.0, 10.0, mask)


def test_accountant_composes_over_queries_samples_and_steps():
    rng = np.random.default_rng(1)
    counts = rng.multinomial(100, [0.7, 0.2, 0.1], size=(2, 6))
    answered = rng.random((2, 6)) < 0.5
    whole = create("gnmax", models=2)
    whole.compose(_event(counts, answered))
    steps = create("gnmax", models=2)
    before = steps.eps_if(_event(counts[:, :2], answered[:, :2]), 1e-5)
    assert np.all(steps.rdp == 0)  # eps_if does not charge
    steps.compose(_event(counts[:, :2], answered[:, :2]))
    np.testing.assert_allclose(steps.eps(1e-5), before)
    steps.compose(_event(counts[:, 2:], answered[:, 2:]))
    np.testing.assert_allclose(steps.rdp, whole.rdp, rtol=1e-12)
    assert list(steps.queries) == [6, 6] and list(steps.answered) == list(answered.sum(1))
    # a masked model is not charged
    masked = create("gnmax", models=2)
    masked.compose(_event(counts, answered, mask=np.array([True, False])))
    assert np.all(masked.rdp[1] == 0) and np.all(masked.rdp[0] == whole.rdp[0])
    ind = create("gnmax-independent", models=2)
    ind.compose(_event(counts, answered))
    assert np.all(ind.eps(1e-5) >= whole.eps(1e-5))


def test_bad_events_are_rejected_and_change_nothing():
    acct = create("gnmax", models=2)
    with pytest.raises(ConfigError):
        _event(np.zeros((2, 3)), np.zeros((2,)))
    with pytest.raises(ConfigError):
        acct.compose(_event(np.ones((3, 2, 4)), np.ones((3, 2))))
    assert np.all(acct.rdp == 0)


def test_bound_on_distinct_values_is_bit_identical_to_every_query():
    # rdp_gnmax evaluates each distinct log q once and gathers: the same bits as evaluating
    # every query (G-PATE's steps repeat a few vote histograms thousands of times)
    rng = np.random.default_rng(3)
    counts = rng.multinomial(6, rng.dirichlet(np.full(10, 0.3)), size=(6, 300))
    for sigma in (2.0, 10.0):
        logq = G.logq_gnmax(counts, sigma)
        assert np.unique(logq).size < logq.size / 10
        np.testing.assert_array_equal(G.rdp_gnmax(logq, sigma, ORDERS),
                                      G._rdp_gnmax(logq, sigma, ORDERS))
    with_fixed = np.array([[-np.inf, -3.0, -np.inf], [-3.0, -0.5, -40.0]])
    np.testing.assert_array_equal(G.rdp_gnmax(with_fixed, 4.0, ORDERS),
                                  G._rdp_gnmax(with_fixed, 4.0, ORDERS))


@pytest.mark.parametrize("k,models,queries", [(5, 32, 320), (40, 3, 57), (3733, 1, 640)])
def test_summed_confident_gnmax_is_bit_identical_to_the_materialised_sums(k, models, queries):
    # rdp_confident_gnmax sums the per-query curves without building (M, Q, L): the same
    # additions in numpy's order, so the same bits as the plain expression below
    rng = np.random.default_rng(k)
    counts = rng.multinomial(k, rng.dirichlet(np.full(10, 0.2)), size=(models, queries))
    answered = rng.random((models, queries)) < 0.6
    s1, s2, t = 0.75 * k, 0.25 * k, 0.5 * k
    got = G.rdp_confident_gnmax(counts, answered, t, s1, s2, ORDERS)
    thresh = G.rdp_threshold(G.logpr_answered(counts, t, s1), s1, ORDERS).sum(axis=1)
    gn = G.rdp_gnmax(G.logq_gnmax(counts, s2), s2, ORDERS)
    np.testing.assert_array_equal(got, thresh + (gn * answered[..., None]).sum(axis=1))


def test_logq_on_distinct_gaps_is_bit_identical():
    from scipy.special import log_ndtr

    rng = np.random.default_rng(1)
    c = rng.multinomial(50, rng.dirichlet(np.full(10, 0.3)), size=(4, 100)).astype(np.float64)
    top = np.argmax(c, axis=-1)
    terms = log_ndtr(-(np.take_along_axis(c, top[..., None], axis=-1) - c) / (math.sqrt(2.0) * 7.0))
    terms = np.where(np.arange(10) == top[..., None], -np.inf, terms)
    with np.errstate(divide="ignore"):
        want = np.minimum(np.logaddexp.reduce(terms, axis=-1), math.log(0.9))
    np.testing.assert_array_equal(G.logq_gnmax(c, 7.0), want)


def test_compose_after_eps_if_reuses_rows_and_equals_a_fresh_charge():
    rng = np.random.default_rng(5)
    counts = rng.multinomial(100, rng.dirichlet(np.full(4, 0.3)), size=(3, 40))
    answered = rng.random((3, 40)) < 0.5
    a, b = create("gnmax", models=3), create("gnmax", models=3)
    a.eps_if(_event(counts, answered), 1e-5)
    subset = np.array([True, False, True])
    a.compose(_event(counts, answered, subset))  # the rows of eps_if, for a subset
    b.compose(_event(counts, answered, subset))
    np.testing.assert_array_equal(a.rdp, b.rdp)
    counts[0, 0] = np.roll(counts[0, 0], 1)  # votes changed in place: computed afresh
    a.compose(_event(counts, answered))
    b.compose(_event(counts, answered))
    np.testing.assert_array_equal(a.rdp, b.rdp)
    assert a.queries.tolist() == [80, 40, 80]
