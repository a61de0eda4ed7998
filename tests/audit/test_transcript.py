"""The transcript threat model's cheap trials (raudit.audit.transcript): the sufficient
statistic has the distribution of simulating every query, and the audit stays below
the mechanism's true eps."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from raudit.audit.threat_model import ThreatSpec
from raudit.audit.transcript import VoteMechanism, mu_equivalent, transcript_audit
from raudit.errors import ConfigError


def brute_force_llr(rng, noise, scale, queries, n, world):
    # every query's noisy histogram (n0, n1) with the target's vote moved (-1, +1)
    base = rng.integers(0, 10, size=(n, queries, 2)).astype(float)
    shift = np.array([-1.0, 1.0]) * world
    draw = rng.laplace(0, scale, base.shape) if noise == "laplace" else rng.normal(0, scale, base.shape)
    r = base + shift + draw
    out_c, in_c = r - base, r - base - np.array([-1.0, 1.0])
    if noise == "laplace":
        return (np.abs(out_c) - np.abs(in_c)).sum(axis=(1, 2)) / scale
    return ((out_c**2 - in_c**2) / (2 * scale**2)).sum(axis=(1, 2))


@pytest.mark.parametrize("noise,scale", [("laplace", 2.0), ("laplace", 40.0), ("gaussian", 3.0)])
@pytest.mark.parametrize("world", [0, 1])
def test_sufficient_statistic_matches_simulating_every_query(noise, scale, world):
    mech = VoteMechanism(noise, scale, 30)
    fast = mech.statistic(np.random.default_rng(1), 4000, world)
    slow = brute_force_llr(np.random.default_rng(2), noise, scale, 30, 4000, world)
    assert stats.ks_2samp(fast, slow).pvalue > 0.01  # fixed seeds


def test_gaussian_statistic_is_mu_gdp():
    mech = VoteMechanism("gaussian", 50.0, 800)
    out = mech.statistic(np.random.default_rng(3), 200_000, 0)
    inn = mech.statistic(np.random.default_rng(4), 200_000, 1)
    mu = (inn.mean() - out.mean()) / out.std()
    assert mu == pytest.approx(math.sqrt(1600) / 50.0, abs=0.01)


def test_audit_stays_below_the_true_eps():
    from raudit.events import PateVote
    from raudit.accountants.true_curve import eps_true

    mech = VoteMechanism("laplace", 20.0, 100)
    true = eps_true([PateVote(np.zeros((1, 100), dtype=int), 3, "laplace", 20.0)], delta=1e-5).eps
    r = transcript_audit(mech, trials=2000, seed=0)
    assert 0.0 < max(r["eps_cp"], r["eps_curve"]) <= true
    assert r["mu_gdp"] <= mu_equivalent(true, 1e-5) * 1.05  # Gaussian-like, not exactly GDP


def test_threat_model_is_a_recorded_value():
    tm = ThreatSpec.transcript()
    assert tm.spec()["level"] == "transcript" and "every query" in tm.spec()["neighbours"]
    assert ThreatSpec().level == "black-box"
    assert ThreatSpec.white_box(critic=True).level == "white-box"
    with pytest.raises(ConfigError, match="threat model"):
        ThreatSpec("grey-box")


def test_one_run_transcript_splits_the_queries_and_keeps_its_level():
    from raudit.audit.known import max_overshoots
    from raudit.audit.transcript import one_run_transcript

    # one randomized-response-like canary per query: Laplace(1) votes, eps 2 per canary
    mech = VoteMechanism("laplace", 1.0, 1000, "threshold")
    res = [one_run_transcript(mech, canaries=1000, seed=s) for s in range(60)]
    assert all(r["queries_per_canary"] == 1 for r in res)
    lo = np.array([r["eps_lo"] for r in res])
    # a threshold vote of Laplace(1) at unit shift is exactly 1-DP: the pure-DP bound must
    # stay below 1 but show most of it with 1,000 canaries (fixed seeds)
    assert (lo > 1.0).sum() <= max_overshoots(60, 0.05) and lo.mean() > 0.65
    with pytest.raises(ConfigError, match="more than the 1000 queries"):
        one_run_transcript(mech, canaries=1001, seed=0)
