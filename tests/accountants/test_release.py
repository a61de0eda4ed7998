"""The GNSS release of a two-class Confident-GNMax run (raudit.accountants.release): the
tabulated local sensitivities equal the one-histogram functions (themselves checked
against the reference release and brute force), and the released eps by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from raudit.accountants.gnmax import rdp_confident_gnmax
from raudit.accountants.release import (GnssPlan, ls_gnmax_two, ls_threshold_table, ls_total_two,
                                        rdp_dd_two, release_eps)
from raudit.accountants.smooth import (ls_confident_total, ls_gnmax, ls_threshold,
                                       smooth_sensitivity)
from raudit.errors import ConfigError


@pytest.mark.parametrize("k,threshold,sigma", [(30, 16.0, 2.0), (30, 2.0, 2.0), (41, 30.0, 8.0)])
def test_threshold_table_rows_are_ls_threshold(k, threshold, sigma):
    table = ls_threshold_table(k, threshold, sigma, 10.0)
    for top in range(k + 1):
        np.testing.assert_array_equal(table[top], ls_threshold(top, k, threshold, sigma, 10.0))


@pytest.mark.parametrize("k,sigma,order", [(10, 0.5, 1.5), (40, 3.0, 5.0), (41, 6.0, 20.0)])
def test_gnmax_two_is_ls_gnmax(k, sigma, order):
    for top in range((k + 1) // 2, k + 1):
        np.testing.assert_allclose(ls_gnmax_two(top, k, sigma, order),
                                   ls_gnmax([top, k - top], sigma, order), rtol=1e-12, atol=0)


def test_total_is_ls_confident_total_and_rdp_is_below_the_accountant_bound():
    rng = np.random.default_rng(7)
    k, thr, s1, s2, order = 25, 18.0, 4.0, 2.0, 8.0
    n1 = rng.integers(0, k + 1, size=40)
    counts = np.stack([k - n1, n1], axis=1)
    answered = rng.random(40) < 0.6
    np.testing.assert_allclose(ls_total_two(counts, answered, k, thr, s1, s2, order),
                               ls_confident_total(counts, answered, thr, s1, s2, order), rtol=1e-12)
    released = rdp_dd_two(counts[None], answered[None], thr, s1, s2, order)[0]
    accountant = rdp_confident_gnmax(counts[None], answered[None], thr, s1, s2, [order])[0, 0]
    assert released >= accountant - 1e-15  # beta_gnmax is never below rdp_gnmax
    assert released <= 40 * (order / (2 * s1 ** 2) + order / s2 ** 2)  # nor above the worst case


def test_release_by_hand():
    # k = 4 teachers, one unanswered query with top count 4; threshold 3, sigma1 1, order 2.
    # Every quantity below is written from the formulas, not read off the code under test.
    k, order, beta, sigma_s, delta = 4, 2.0, 0.1, 3.0, 1e-5
    plan = GnssPlan(order, beta, sigma_s)
    assert plan.rdp == pytest.approx(order * math.exp(2 * beta) / sigma_s ** 2
                                     + (beta * order - 0.5 * math.log(1 - 2 * order * beta))
                                     / (order - 1), abs=1e-14)
    # r(v): the threshold check's RDP when the top count is v (only the top matters)
    r = np.array([float(rdp_dd_two(np.array([[[v, 0]]]), np.array([[False]]), 3.0, 1.0, 1.0,
                                   order)[0]) for v in range(k + 1)])
    # LS at distance d of top 4: the largest |r(v+1) - r(v)| touching v in [4 - d, 4]
    steps = np.abs(np.diff(r))
    local = np.array([steps[0], max(steps[0], steps[1]), max(steps[1], steps[2]),
                      max(steps[2], steps[3]), steps[3]])
    ls = [max(local[4 - d:]) for d in range(k + 1)]
    ss = max(math.exp(-beta * d) * ls[d] for d in range(k + 1))
    z = -0.7
    got = release_eps(np.array([[[0, 4]]]), np.array([[False]]), k=k, threshold=3.0, sigma1=1.0,
                      sigma2=1.0, plan=plan, delta=delta, z=[z], rdp_other=0.25)[0]
    assert got.ss == pytest.approx(ss, rel=1e-12) and ss > 0
    assert got.rdp_dd == pytest.approx(r[4], rel=1e-12)
    assert got.noise == pytest.approx(ss * sigma_s * z, rel=1e-12)
    assert got.eps == pytest.approx(r[4] + ss * sigma_s * z + plan.rdp + 0.25
                                    + math.log(1 / delta) / (order - 1), rel=1e-12)
    assert smooth_sensitivity(ls, beta) == pytest.approx(ss, rel=1e-12)


def test_release_is_linear_in_its_noise_draw():
    counts = np.array([[[3, 17], [10, 10], [0, 20]]])
    answered = np.array([[True, False, True]])
    kw = dict(k=20, threshold=15.0, sigma1=3.0, sigma2=2.0, plan=GnssPlan(10.0, 0.02, 5.0), delta=1e-5)
    a, b, c = (release_eps(counts, answered, z=[z], **kw)[0] for z in (0.0, 1.0, 2.0))
    assert a.noise == 0.0 and a.ss > 0
    assert b.eps - a.eps == pytest.approx(a.ss * 5.0, rel=1e-12)
    assert c.eps - a.eps == pytest.approx(2 * (b.eps - a.eps), rel=1e-12)


@pytest.mark.parametrize("kw,match", [
    (dict(order=1.0, beta=0.1, sigma_s=1.0), "order > 1"),
    (dict(order=10.0, beta=0.05, sigma_s=1.0), "beta < 1/"),
    (dict(order=10.0, beta=0.01, sigma_s=0.0), "sigma_s > 0"),
])
def test_gnss_plan_rejects_bad_parameters(kw, match):
    with pytest.raises(ConfigError, match=match):
        GnssPlan(**kw)


def test_release_rejects_more_than_two_classes():
    with pytest.raises(ConfigError, match="two-class"):
        release_eps(np.zeros((1, 2, 3)), np.zeros((1, 2), bool), k=3, threshold=2.0, sigma1=1.0,
                    sigma2=1.0, plan=GnssPlan(2.0, 0.1, 1.0), delta=1e-5, z=[0.0])
