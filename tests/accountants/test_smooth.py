"""Smooth sensitivity of the data-dependent PATE bounds (Papernot et al. 2018, section 4,
appendix B-C): Theorem 23 and the discounted max against hand-computed values, the local
sensitivity bounds against brute force over every small vote histogram."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from raudit.accountants.gnmax import logq_gnmax
from raudit.accountants.smooth import (beta_gnmax, gnss_release, logq0_gnmax, ls_gnmax, ls_threshold,
                                       rdp_gnss, smooth_sensitivity, threshold_rdp_by_top)


def test_rdp_gnss_matches_theorem_23_by_hand():
    # beta 0.1, sigma 2, order 2: 2 e^0.2 / 4 + (0.2 - ln(0.6) / 2) / 1
    want = 0.5 * math.exp(0.2) + 0.2 - 0.5 * math.log(0.6)
    assert rdp_gnss(0.1, 2.0, 2.0) == pytest.approx(want, abs=1e-12)
    assert want == pytest.approx(1.0661141911, abs=1e-9)
    assert rdp_gnss(0.0, 3.0, 5.0) == pytest.approx(5 / 9, abs=1e-15)  # beta 0: lambda / sigma^2
    for order in (1.0, 5.0, 7.0):  # (1, 1/(2 beta)) = (1, 5)
        with pytest.raises(ValueError, match="outside"):
            rdp_gnss(0.1, 2.0, order)


def test_smooth_sensitivity_is_the_discounted_max():
    assert smooth_sensitivity([1.0, 3.0, 2.0], 0.5) == pytest.approx(3 * math.exp(-0.5))
    assert smooth_sensitivity([1.0, 3.0, 2.0], 5.0) == 1.0  # steep discount: distance 0 wins
    assert smooth_sensitivity([0.5, 0.5, 0.5], 0.0) == 0.5


def _histograms(k: int, m: int):
    for cut in itertools.combinations(range(k + m - 1), m - 1):
        bounds = (-1, *cut, k + m - 1)
        yield tuple(bounds[i + 1] - bounds[i] - 1 for i in range(m))


def _distance(x, y) -> int:
    """Teachers that must change their vote to turn histogram x into y."""
    return sum(max(0, a - b) for a, b in zip(x, y))


def _brute_ls(value, hists, k, m):
    """True LS(y, 0) of ``value`` for every histogram y: the largest change to a neighbour."""
    return {y: max(abs(value(z) - value(y)) for z in hists if _distance(y, z) == 1) for y in hists}


def test_threshold_local_sensitivity_bounds_every_histogram_within_d():
    k, m, t, sigma, order = 6, 3, 3.0, 2.0, 3.0
    r = threshold_rdp_by_top(k, t, sigma, order)
    hists = list(_histograms(k, m))
    true = _brute_ls(lambda y: r[max(y)], hists, k, m)
    for x in hists:
        ls = ls_threshold(max(x), k, t, sigma, order)
        for d in range(k + 1):
            worst = max(true[y] for y in hists if _distance(x, y) <= d)
            assert worst <= ls[d] + 1e-12, (x, d)
    # a hand case: the step list of r around the top count 3 at distance 0
    assert ls_threshold(3, k, t, sigma, order)[0] == pytest.approx(
        max(abs(r[4] - r[3]), abs(r[3] - r[2])))


@pytest.mark.parametrize("sigma,order", [(2.0, 2.0), (1.5, 3.0), (3.0, 2.5)])
def test_gnmax_local_sensitivity_bounds_every_histogram_within_d(sigma, order):
    k, m = 8, 3
    hists = list(_histograms(k, m))

    def value(y):
        return beta_gnmax(float(logq_gnmax(np.array(y, dtype=float), sigma)), sigma, order)
    true = _brute_ls(value, hists, k, m)
    assert max(true.values()) > 0
    for x in hists:
        ls = ls_gnmax(x, sigma, order)
        assert ls.shape == (k + 1,)
        for d in range(k + 1):
            worst = max(true[y] for y in hists if _distance(x, y) <= d)
            assert worst <= ls[d] * (1 + 1e-9) + 1e-12, (x, d, worst, ls[d])


def test_logq0_is_where_the_data_independent_bound_takes_over():
    sigma, order = 2.0, 2.0
    lq0 = logq0_gnmax(sigma, order)
    ind = order / sigma ** 2
    assert beta_gnmax(lq0 - 0.01, sigma, order) < ind
    assert beta_gnmax(lq0 + 0.01, sigma, order) == pytest.approx(ind)


def test_gnss_release_adds_scaled_gaussian_noise():
    rng = np.random.default_rng(0)
    draws = np.array([gnss_release(1.0, 0.2, 3.0, rng) for _ in range(20_000)])
    assert draws.mean() == pytest.approx(1.0, abs=4 * 0.6 / math.sqrt(20_000))
    assert draws.std() == pytest.approx(0.6, rel=0.03)


def test_total_local_sensitivity_bounds_two_queries_by_brute_force():
    # two queries of k = 5 teachers over 3 bins, the first answered: every pair of
    # histograms each within d of the actual ones changes the total data-dependent RDP
    # (threshold on both, GNMax on the first) by at most the sum of the bounds
    from raudit.accountants.gnmax import rdp_confident_gnmax
    from raudit.accountants.smooth import ls_confident_total

    k, m, t, s1, s2, order = 5, 3, 2.5, 2.0, 1.5, 2.0
    x = np.array([[4, 1, 0], [2, 2, 1]])
    answered = np.array([True, False])

    hists = list(_histograms(k, m))
    pairs = [(h1, h2) for h1 in hists for h2 in hists]  # all 441 totals in one call
    values = rdp_confident_gnmax(np.array([[h1, h2] for h1, h2 in pairs]),
                                 np.tile(answered, (len(pairs), 1)), t, s1, s2, [order])[:, 0]
    table = dict(zip(pairs, values))

    def total(h1, h2):
        return table[(h1, h2)]
    bound = ls_confident_total(x, answered, t, s1, s2, order)
    near = {d: [h for h in hists if _distance(tuple(x[0]), h) <= d] for d in range(k + 1)}
    near2 = {d: [h for h in hists if _distance(tuple(x[1]), h) <= d] for d in range(k + 1)}
    for d in range(k + 1):
        worst = 0.0
        for y1 in near[d]:
            for y2 in near2[d]:
                base = total(y1, y2)
                for z1 in hists:
                    if _distance(y1, z1) > 1:
                        continue
                    for z2 in hists:
                        if _distance(y2, z2) <= 1:
                            worst = max(worst, abs(total(z1, z2) - base))
        assert worst <= bound[d] * (1 + 1e-9) + 1e-12, (d, worst, bound[d])
