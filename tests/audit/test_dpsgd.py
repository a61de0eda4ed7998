"""Transcript-level DP-SGD and G-PATE mechanisms (raudit.audit.dpsgd): the statistic is
the likelihood ratio of the released values, eps_true is dp_accounting's PLD, and the
audits stay below it."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld
from scipy import stats

from raudit.audit.dpsgd import GaussianReleases, SubsampledGaussianMechanism
from raudit.audit.fdp import eps_from_mu
from raudit.audit.mechanisms import Schedule, schedule_eps_true, schedule_of
from raudit.audit.threat_model import ThreatSpec
from raudit.audit.transcript import one_run_transcript, transcript_audit
from raudit.errors import ConfigError

DELTA = 1e-5


def brute_force_llr(rng, z, q, steps, n, world):
    """Each step's released projection x = b + N(0, z^2), b ~ Bernoulli(q) in world 1; the
    log of the mixture density over the null density, by scipy's normal pdf."""
    x = rng.normal(0.0, z, size=(n, steps)) + world * (rng.random((n, steps)) < q)
    ratio = ((1 - q) * stats.norm.pdf(x, 0, z) + q * stats.norm.pdf(x, 1, z)) / stats.norm.pdf(x, 0, z)
    return np.log(ratio).sum(axis=1)


@pytest.mark.parametrize("z,q", [(1.5, 0.1), (4.0, 0.5), (2.0, 1.0)])
@pytest.mark.parametrize("world", [0, 1])
def test_statistic_is_the_likelihood_ratio_of_the_released_projection(z, q, world):
    mech = SubsampledGaussianMechanism(z, q, 40)
    fast = mech.statistic(np.random.default_rng(1), 4000, world)
    slow = brute_force_llr(np.random.default_rng(2), z, q, 40, 4000, world)
    assert stats.ks_2samp(fast, slow).pvalue > 0.01  # fixed seeds


def test_full_batch_dpsgd_is_mu_gdp():
    # q = 1: T Gaussian steps of noise multiplier z are mu-GDP, mu = sqrt(T)/z
    mech = SubsampledGaussianMechanism(10.0, 1.0, 400)
    out = mech.statistic(np.random.default_rng(3), 50_000, 0)
    inn = mech.statistic(np.random.default_rng(4), 50_000, 1)
    assert (inn.mean() - out.mean()) / out.std() == pytest.approx(2.0, abs=0.02)


def test_drawing_in_blocks_keeps_the_distribution(monkeypatch):
    import raudit.audit.dpsgd as dp

    mech = SubsampledGaussianMechanism(2.0, 0.3, 50)
    whole = mech.statistic(np.random.default_rng(5), 3000, 1)
    monkeypatch.setattr(dp, "BLOCK", 50 * 7)  # 7 trials per block, the last one short
    blocks = mech.statistic(np.random.default_rng(6), 3000, 1)
    assert blocks.shape == (3000,) and np.all(np.isfinite(blocks))
    assert stats.ks_2samp(whole, blocks).pvalue > 0.01  # fixed seeds


def test_dpgan_schedule_eps_true_is_dp_accountings_subsampled_gaussian():
    """Golden: the dry run's eps_true is dp_accounting's PLD of T Poisson-subsampled
    Gaussian steps (computed here directly), and below dpgan's own RDP claim."""
    from raudit import data

    ds = data.load("breast-cancer")
    sched = schedule_of("dpgan", {}, 2.0, DELTA, table=ds.train, columns=ds.columns)
    m = sched.mechanism
    assert m.queries == 300 * 5 and m.sampling_rate == pytest.approx(64 / len(ds.train))
    acct = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE, 1e-4)
    acct.compose(dp_accounting.PoissonSampledDpEvent(
        m.sampling_rate, dp_accounting.GaussianDpEvent(m.scale)), m.queries)
    true = schedule_eps_true(sched, DELTA)
    assert true.method == "pld" and true.eps == pytest.approx(acct.get_epsilon(DELTA), abs=1e-9)
    assert 1.5 < true.eps < 2.0  # RDP charges more; the DP-bounds pre-pass takes the rest
    assert "pre-pass" in sched.source and "not audited" in sched.source


def test_dpgan_schedule_needs_the_table():
    with pytest.raises(ConfigError, match="needs the training table"):
        schedule_of("dpgan", {}, 1.0, DELTA)


def test_gpate_releases_are_mu_gdp_and_eps_true_is_their_pld():
    m = GaussianReleases(40.0, 900, 20.0, 300)
    assert m.mu == pytest.approx(math.sqrt(900 / 1600 + 600 / 400))
    true = schedule_eps_true(Schedule(m, "test"), DELTA)
    assert true.eps == pytest.approx(eps_from_mu(m.mu, DELTA), abs=1e-4)
    s0 = m.statistic(np.random.default_rng(0), 100_000, 0)
    s1 = m.statistic(np.random.default_rng(1), 100_000, 1)
    assert (s1.mean() - s0.mean()) / s0.std() == pytest.approx(m.mu, abs=0.02)
    with pytest.raises(ConfigError, match="not split among canaries"):
        one_run_transcript(m, canaries=10, seed=0)


@pytest.mark.parametrize("z,q,steps", [(1.2, 0.05, 300), (8.0, 1.0, 200)])
def test_transcript_audit_of_dpsgd_stays_below_eps_true(z, q, steps):
    from raudit.events import GaussianStep
    from raudit.accountants.true_curve import eps_true

    mech = SubsampledGaussianMechanism(z, q, steps)
    true = eps_true([GaussianStep(z, q, steps)], delta=DELTA).eps
    r = transcript_audit(mech, trials=3000, seed=0, delta=DELTA)
    assert 0.0 < max(r["eps_cp"], r["eps_curve"]) <= true


def test_one_run_gives_every_dpsgd_canary_all_its_steps():
    mech = SubsampledGaussianMechanism(1.0, 0.1, 200)  # eps_true ~ 2.6 at 1e-5
    assert mech.per_canary(500) is mech
    r = one_run_transcript(mech, canaries=500, seed=0)
    assert r["queries_per_canary"] == 200 and 0.0 < r["eps_lo"] < 2.6


def test_threat_model_names_what_dpsgd_releases():
    tm = ThreatSpec.transcript("dp-sgd").spec()
    assert "gradient" in tm["sees"] and "norm C" in tm["neighbours"]
    assert ThreatSpec.transcript().spec() == ThreatSpec.transcript("argmax").spec()
    assert "40 gradient canaries" in ThreatSpec.transcript_one_run(40, "dp-sgd").canaries


def test_bad_input():
    for args in [(0.0, 0.1, 10), (1.0, 0.0, 10), (1.0, 1.5, 10), (1.0, 0.1, 0)]:
        with pytest.raises(ConfigError):
            SubsampledGaussianMechanism(*args)
    with pytest.raises(ConfigError):
        GaussianReleases(1.0, 0, 1.0, 0)


@pytest.mark.slow
@pytest.mark.parametrize("z,q,steps", [(3.0, 0.3, 30), (4.0, 1.0, 16)])
def test_transcript_bounds_cover_dpsgd_at_their_level(z, q, steps):
    """120 transcript audits (3,000 trials per world) of a DP-SGD mechanism: CP and the
    curve bound (each at alpha/2 = 0.05) exceed its PLD eps_true in at most the exact
    binomial share; at q = 1 (mu-GDP, mu = sqrt(T)/z = 1) the GDP bound exceeds mu as
    rarely. The bounds are not vacuous: at least 90 % of the audits show eps > 0 (measured
    mean of the larger bound: 0.73 of eps_true 2.45 at q = 0.3, i.e. 0.30; z = 0.9 would have
    eps_true 13.9, beyond what 3,000 trials can show). Measured: 0 overshoots of 120 for
    every bound (limit 12). The eps checks sit far below eps_true (which a Gaussian-like
    composition's trade-off curve reaches only at delta = 1e-5), so they catch gross errors
    only; the mu check at q = 1 is on its boundary: mu_gdp x 1.2 overshoots 77 times."""
    from raudit.events import GaussianStep
    from raudit.accountants.true_curve import eps_true
    from raudit.audit.known import max_overshoots

    mech = SubsampledGaussianMechanism(z, q, steps)
    true = eps_true([GaussianStep(z, q, steps)], delta=DELTA).eps
    runs = [transcript_audit(mech, trials=3000, seed=s, delta=DELTA) for s in range(120)]
    limit = max_overshoots(120, 0.05)
    for key in ("eps_cp", "eps_curve"):
        vals = np.array([r[key] for r in runs])
        assert int(np.sum(vals > true)) <= limit, (key, np.sum(vals > true), true)
    assert np.mean([max(r["eps_cp"], r["eps_curve"]) > 0 for r in runs]) >= 0.9
    if q == 1.0:
        mus = np.array([r["mu_gdp"] for r in runs])
        assert int(np.sum(mus > math.sqrt(steps) / z)) <= limit
