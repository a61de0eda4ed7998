"""Trade-off-curve bounds (raudit.audit.fdp): goldens from an independent library, closed
forms, and coverage of the bounds on mechanisms with a known trade-off curve."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from raudit.accountants.vote_budget import gdp_delta
from raudit.audit import fdp
from raudit.audit.epsilon import eps_clopper_pearson
from raudit.errors import ConfigError


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.0])
def test_gdp_conversion_matches_dp_accounting(mu):
    # A mu-GDP mechanism is the Gaussian mechanism with sensitivity 1 and sigma = 1/mu;
    # dp_accounting's privacy-loss distribution computes its eps(delta) independently.
    from dp_accounting.pld import privacy_loss_distribution as pld

    ref = pld.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0,
                                      value_discretization_interval=1e-4)
    assert fdp.eps_from_mu(mu, 1e-5) == pytest.approx(ref.get_epsilon_for_delta(1e-5), abs=1e-4)


def test_gdp_delta_is_decreasing_and_consistent():
    mu = 1.0
    eps = fdp.eps_from_mu(mu, 1e-3)
    assert gdp_delta(eps, mu) == pytest.approx(1e-3, rel=1e-6)
    vals = [gdp_delta(e, mu) for e in np.linspace(0, 6, 25)]
    assert all(a >= b for a, b in zip(vals, vals[1:]))
    assert fdp.eps_from_mu(0.0, 1e-5) == 0.0 and fdp.eps_from_mu(1e-3, 0.5) == 0.0
    with pytest.raises(ConfigError, match="delta"):
        fdp.eps_from_mu(1.0, 0.0)


def test_mu_from_a_point_of_the_gaussian_curve_is_exact():
    # Threshold t on N(0,1) vs N(mu,1): FPR = Phi(-t), FNR = Phi(t - mu).
    for mu, t in [(1.0, 0.3), (2.5, 1.0), (0.4, -0.2)]:
        a, b = stats.norm.cdf(-t), stats.norm.cdf(t - mu)
        assert float(fdp.mu_from_upper(a, b)) == pytest.approx(mu, abs=1e-9)
    assert float(fdp.mu_from_upper(0.6, 0.6)) == 0.0  # worse than guessing: no constraint
    assert float(fdp.mu_from_upper(1.0, 0.0)) == 0.0


def test_gdp_eps_is_not_a_bound_for_randomized_response():
    # The kink of the eps = 1 pure-DP curve, FPR = FNR = 1/(1 + e), lies on the
    # mu = 2 Phi^-1(e/(1+e)) = 1.232 Gaussian curve, whose eps at 1e-5 is 5.58 > 1:
    # why eps_gdp is reported next to, never instead of, the distribution-free bounds.
    p = 1.0 / (1.0 + math.e)
    mu = float(fdp.mu_from_upper(p, p))
    assert mu == pytest.approx(1.232035, abs=1e-6)
    assert fdp.eps_from_mu(mu, 1e-5) == pytest.approx(5.5837, abs=1e-3)


def test_curve_bound_is_the_corrected_cp_bound_at_the_best_threshold():
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1], 150)
    scores = np.clip(rng.normal(0.35 + 0.3 * labels, 0.15), 0.0, 1.0)
    got = fdp.eps_curve(scores, labels, delta=1e-5, alpha=0.1)
    counts = fdp.curve_counts(scores, labels)
    t = len(counts)
    assert t == 2 * len(fdp.GRID)
    # eps_clopper_pearson(alpha') uses tails alpha'/4: alpha' = alpha / T gives alpha/(4T).
    ref = max(eps_clopper_pearson(*row, delta=1e-5, alpha=0.1 / t) for row in counts.astype(int))
    assert got == pytest.approx(ref, abs=1e-12) and got > 0.0


def test_perfect_separation_reaches_the_corrected_ceiling():
    n = 200
    labels = np.repeat([0, 1], n)
    scores = labels.astype(float)
    out = fdp.tradeoff_bounds(scores, labels, scores, labels, delta=1e-5, alpha=0.1)
    b = (0.1 / (4 * 2 * len(fdp.GRID))) ** (1 / n)  # corrected CP limit with zero errors
    assert out["eps_curve"] == pytest.approx(math.log((b - 1e-5) / (1 - b)), abs=1e-9)
    b1 = 0.025 ** (1 / n)  # one threshold, chosen on validation: tail alpha/4
    assert out["mu_gdp"] == pytest.approx(-2 * stats.norm.ppf(1 - b1), abs=1e-9)
    assert out["eps_gdp"] == pytest.approx(fdp.eps_from_mu(out["mu_gdp"], 1e-5))


def test_scores_outside_the_unit_interval_are_refused():
    with pytest.raises(ConfigError, match=r"\[0, 1\]"):
        fdp.eps_curve(np.array([0.2, 1.5]), np.array([0, 1]))


ALPHA = 0.1


def test_curve_limits_hold_simultaneously_on_a_gaussian_mechanism():
    # The curve bound's promise: with probability >= 1 - alpha/2, EVERY threshold's
    # limits hold at once (a >= FPR(t), b >= FNR(t) for all 202 t). Checked against
    # the exact rates of a mu = 1 Gaussian mechanism, both directions, 200 repeats;
    # without the Bonferroni factor some band fails in most repeats.
    from raudit.audit.known import KnownMechanism, max_overshoots

    mech = KnownMechanism("gaussian", 1.0)
    fpr, fnr = mech.gaussian_rates(fdp.GRID)
    # direction "inverted" predicts in when 1 - s >= t, i.e. s <= 1 - t
    fpr_inv, fnr_inv = mech.gaussian_rates(1.0 - fdp.GRID)
    true_a = np.concatenate([fpr, 1.0 - fpr_inv])
    true_b = np.concatenate([fnr, 1.0 - fnr_inv])
    rng = np.random.default_rng(29)
    repeats, failed = 200, 0
    for _ in range(repeats):
        a, b = fdp.curve_limits(*mech.sample(rng, 500), alpha=ALPHA)
        failed += bool(np.any(a < true_a - 1e-12) or np.any(b < true_b - 1e-12))
    assert failed <= max_overshoots(repeats, ALPHA / 2), failed


def test_mu_bound_covers_a_gaussian_mechanism_with_many_trials():
    # 2,000 test trials per world: the mu bound reaches ~85% of the true mu, so one
    # 20% too optimistic overshoots in most repeats; the true one at most alpha/2.
    from raudit.audit.known import KnownMechanism, max_overshoots

    mech, repeats = KnownMechanism("gaussian", 1.0), 100
    rng = np.random.default_rng(7)
    mus = []
    for _ in range(repeats):
        vs, vl = mech.sample(rng, 1000)
        ts, tl = mech.sample(rng, 2000)
        mus.append(fdp.tradeoff_bounds(vs, vl, ts, tl, delta=1e-5, alpha=ALPHA)["mu_gdp"])
    assert np.sum(np.array(mus) > 1.0) <= max_overshoots(repeats, ALPHA / 2)
    assert np.mean(mus) > 0.75


def test_mu_threshold_comes_from_validation():
    # Validation separates at 0.6; the test split only at 0.55: mu must be read at 0.6.
    val_lab, test_lab = np.repeat([0, 1], 200), np.repeat([0, 1], 400)
    val = np.where(val_lab == 1, 0.6, 0.4)
    test = np.where(test_lab == 1, 0.55, 0.45)
    out = fdp.tradeoff_bounds(val, val_lab, test, test_lab, delta=1e-5, alpha=ALPHA)
    assert out["mu_gdp"] == 0.0 and out["eps_gdp"] == 0.0
    assert out["eps_curve"] > 3.0  # the curve bound reads every threshold of the test split


@pytest.mark.parametrize("mu", [1.0, 2.0])
def test_mu_bound_covers_the_true_mu_of_a_gaussian_mechanism(mu):
    # 300 audits of a mu-GDP mechanism (scores Phi(N(0,1)) vs Phi(N(mu,1)), 100
    # validation and 200 test draws per world): each bound holds with probability
    # >= 1 - alpha/2 = 0.95 by construction, so each may fail in at most the exact
    # binomial share of 300 at 5%. And it is not vacuous: the median bound is over
    # half the true mu.
    from raudit.audit.known import max_overshoots

    rng = np.random.default_rng(17)
    labels, val_labels = np.repeat([0, 1], 200), np.repeat([0, 1], 100)
    over_mu, over_curve, mus = 0, 0, []
    for _ in range(300):
        z = rng.normal(size=400) + mu * labels
        zv = rng.normal(size=200) + mu * val_labels
        out = fdp.tradeoff_bounds(stats.norm.cdf(zv), val_labels, stats.norm.cdf(z), labels,
                                  delta=1e-5, alpha=0.1)
        over_mu += out["mu_gdp"] > mu
        over_curve += out["eps_curve"] > fdp.eps_from_mu(mu, 1e-5)
        mus.append(out["mu_gdp"])
    assert over_mu <= max_overshoots(300, ALPHA / 2) and over_curve <= max_overshoots(300, ALPHA / 2)
    assert np.median(mus) > 0.5 * mu


@pytest.mark.parametrize("eps", [1.0, 2.0, 4.0])
def test_curve_bound_covers_randomized_response(eps):
    # One bit through randomized response (keep with prob e^eps/(1+e^eps)): the score
    # is the released bit, in world "in" the true bit is 1, in "out" it is 0. 2,000
    # trials per world, so that the corrected ceiling (5.4) lies above every eps
    # tested: at 200 per world it was 3.08 and the eps = 4 case could not fail.
    from raudit.audit.known import KnownMechanism, max_overshoots

    mech, repeats, n = KnownMechanism("randomized-response", eps), 150, 2000
    ceiling = fdp.eps_curve(np.repeat([0.0, 1.0], n), np.repeat([0, 1], n))
    assert ceiling > eps + 1.0
    rng = np.random.default_rng(int(eps * 10))
    bounds = np.array([fdp.eps_curve(*mech.sample(rng, n), delta=1e-5, alpha=ALPHA)
                       for _ in range(repeats)])
    assert np.sum(bounds > mech.eps_at(1e-5)) <= max_overshoots(repeats, ALPHA / 2)
    assert np.mean(bounds) > 0.75 * eps  # and it sees the mechanism
