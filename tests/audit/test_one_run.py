"""One-run audits (raudit.audit.one_run): the Binomial tail, its inversion, and coverage on
simulated canaries of known eps (each canary in with probability 1/2, one run)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from raudit.audit.known import max_overshoots
from raudit.audit.one_run import best_one_run, eps_one_run, guess_counts, p_value
from raudit.errors import ConfigError


def test_p_value_is_the_binomial_tail_and_inverts():
    q = math.e / (1 + math.e)
    want = sum(stats.binom.pmf(j, 100, q) for j in range(80, 101))
    assert p_value(100, 80, 1.0) == pytest.approx(want, rel=1e-10)
    e = eps_one_run(100, 80, beta=0.05)
    assert p_value(100, 80, e) == pytest.approx(0.05, rel=1e-6)
    assert eps_one_run(100, 50, beta=0.05) == 0.0  # a coin's score rejects nothing
    assert eps_one_run(0, 0) == 0.0


def rr_canaries(rng, m, eps):
    s = rng.choice([-1, 1], size=m)
    keep = rng.random(m) < 1 / (1 + math.exp(-eps))
    return np.where(keep, s, -s).astype(float), s


def laplace_canaries(rng, m, eps):
    s = rng.choice([-1, 1], size=m)
    return (s == 1) + rng.laplace(scale=1 / eps, size=m), s


@pytest.mark.parametrize("eps", [1.0, 2.0])
def test_one_run_covers_randomized_response_canaries(eps):
    # every canary guessed (r = m): W ~ Binomial(m, q(eps)) exactly, the boundary case
    rng = np.random.default_rng(int(eps))
    repeats, m, beta = 400, 1000, 0.05
    got = []
    for _ in range(repeats):
        scores, s = rr_canaries(rng, m, eps)
        got.append(eps_one_run(m, int(np.sum(np.sign(scores) == s)), beta=beta))
    got = np.array(got)
    assert np.sum(got > eps) <= max_overshoots(repeats, beta)
    assert np.mean(got) > 0.8 * eps  # and it is tight: one run of 1,000 canaries


def test_best_one_run_covers_laplace_canaries():
    rng = np.random.default_rng(5)
    repeats, eps = 200, 2.0
    got = np.array([best_one_run(*laplace_canaries(rng, 1000, eps))["eps_lo"]
                    for _ in range(repeats)])
    assert np.sum(got > eps) <= max_overshoots(repeats, 0.05)
    assert np.mean(got) > 0.4 * eps


def test_bad_input():
    with pytest.raises(ConfigError, match="correct guesses"):
        p_value(10, 11, 1.0)
    with pytest.raises(ConfigError, match="k must"):
        guess_counts(np.zeros(4), np.array([1, -1, 1, -1]), 3)
    with pytest.raises(ConfigError, match="inclusion"):
        guess_counts(np.zeros(4), np.array([1, 0, 1, -1]), 1)
    with pytest.raises(ConfigError, match="beta"):
        eps_one_run(10, 9, beta=1.0)
