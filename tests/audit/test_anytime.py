"""Anytime-valid sequential audits (raudit.audit.anytime): the type-I error at the
privacy boundary stays <= alpha over every look, and the test has power."""

from __future__ import annotations

import math

import numpy as np
import pytest

from raudit.audit.anytime import bets, eps_lower_sequence, wealth
from raudit.audit.known import max_overshoots
from raudit.errors import ConfigError


def rr_outcomes(rng, eps, n):
    # the best guess on randomized response: right with probability e^eps / (1 + e^eps)
    return (rng.random(n) < 1 / (1 + math.exp(-eps))).astype(float)


@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_type_one_error_over_every_look_at_the_boundary(eps):
    # 400 audits of 2,000 trials each, looking after EVERY trial: the claim eps (true,
    # on its boundary) is rejected at some look in at most the exact binomial share at
    # alpha = 0.1. A naive fixed-n test at every look would reject far more often.
    rng = np.random.default_rng(int(eps * 7))
    repeats, alpha = 400, 0.1
    rejected = sum(bool(np.any(wealth(rr_outcomes(rng, eps, 2000), eps) >= 1 / alpha))
                   for _ in range(repeats))
    assert rejected <= max_overshoots(repeats, alpha), rejected


def test_power_and_the_lower_confidence_sequence():
    rng = np.random.default_rng(3)
    c = rr_outcomes(rng, 2.0, 3000)
    assert np.any(wealth(c, 1.0) >= 10.0)  # eps 2 is seen to break an eps 1 claim
    lo = eps_lower_sequence(c, alpha=0.1)
    assert np.all(np.diff(lo) >= 0) and 1.5 < lo[-1] <= 2.0
    # at each look, eps_lo is exactly where the wealth crosses 1/alpha
    t = int(np.argmax(lo > 0))
    assert wealth(c[: t + 1], lo[t])[-1] == pytest.approx(10.0, rel=1e-4)


def test_bets_are_predictable_and_bounded():
    c = np.array([1, 1, 1, 0, 1, 1, 1, 1], dtype=float)
    lam = bets(c)
    assert lam[0] == 0.0 and np.all((lam >= 0) & (lam <= 0.9))
    c2 = c.copy()
    c2[-1] = 0  # changing the last outcome never changes the bets up to it
    np.testing.assert_array_equal(bets(c2), lam)
    with pytest.raises(ConfigError):
        bets([0, 2])
    with pytest.raises(ConfigError):
        wealth([1, 0], -1.0)


def test_eps_lower_at_reads_the_same_confidence_sequence_at_fewer_looks():
    from raudit.audit.anytime import eps_lower_at

    rng = np.random.default_rng(3)
    correct = (rng.random(600) < 0.8).astype(float)
    full = eps_lower_sequence(correct, alpha=0.1)
    looks = [50, 100, 300, 600]
    at = eps_lower_at(correct, looks, alpha=0.1)
    # the running maximum over fewer looks: never above the full sequence
    assert np.all(at <= full[np.array(looks) - 1] + 1e-5) and at[-1] > 0
    # at one look it is the eps0 whose wealth is exactly 1/alpha there (wealth's own product)
    single = eps_lower_at(correct, [600], alpha=0.1)[0]
    assert wealth(correct, single)[599] == pytest.approx(10.0, rel=1e-4)


def test_anytime_transcript_stops_when_the_claim_is_too_small():
    from raudit.audit.anytime import anytime_transcript
    from raudit.audit.transcript import VoteMechanism

    # fixed's votes at eps 4 (12,800 GNMax answers, sigma 185.2: eps_true 3.70)
    mech = VoteMechanism("gaussian", 185.21807117416745, 12_800)
    early = anytime_transcript(mech, trials=4000, claimed=0.3, seed=0, delta=1e-5)
    assert early["eps_anytime"] > 0.3 and early["trials_used"] < 4000
    assert early["stop_reason"].startswith("eps_lo ")
    # the mechanism's own eps is never rejected: a lower confidence sequence (fixed seeds)
    for seed in range(5):
        r = anytime_transcript(mech, trials=2000, claimed=3.698, seed=seed, delta=1e-5)
        assert r["trials_used"] == 2000 and r["eps_anytime"] < 3.698
        assert r["stop_reason"].startswith("reached the last look")
