"""The data-independent regime: closed forms, property tests, and simulated stopping rules."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from raudit.accountants import create, eps_data_independent, eps_from_moments, get, iterations_to_reach, queries_to_reach
from raudit.events import PateVote
from raudit.errors import ConfigError

DELTA = 1e-5


def _eps_scalar(t, lam, L, delta=DELTA):
    """min_l (2 lam^2 t l(l+1) + log(1/delta)) / l, one order at a time."""
    return min((2 * lam**2 * t * l * (l + 1) + math.log(1 / delta)) / l for l in range(1, L + 1))


# ------------------------------------------------------------------ golden values


def test_floor_and_hand_values():
    assert eps_data_independent(0, 1e-3, 100, DELTA) == pytest.approx(0.1151292546497, rel=1e-12)
    assert eps_data_independent(0, 1e-3, 20, DELTA) == pytest.approx(math.log(1e5) / 20, rel=1e-14)
    got = eps_data_independent(np.array([0, 64, 10_000]), 1e-3, 100, DELTA)
    np.testing.assert_allclose(got, [_eps_scalar(t, 1e-3, 100) for t in (0, 64, 10_000)], rtol=1e-13)


def test_queries_for_the_studys_setting():
    # eps = 1, lam = 1e-3, L = 100, delta = 1e-5: the binding order is l = 24,
    # (24 - ln 1e5) / (2e-6 * 24 * 25) = 10405.9 -> 10406 queries.
    assert (24 - math.log(1e5)) / (2e-6 * 24 * 25) == pytest.approx(10405.895, abs=1e-3)
    assert queries_to_reach(1.0, 1e-3, 100, DELTA) == 10406
    assert _eps_scalar(10405, 1e-3, 100) < 1.0 <= _eps_scalar(10406, 1e-3, 100)
    # batch 64, one student step per iteration (updated): ceil(10406 / 64) = 163
    assert iterations_to_reach(1.0, 1e-3, 100, DELTA, 64) == 163
    # 5 student steps x 64 (borealis / smartnoise): ceil(10406 / 320) = 33
    assert iterations_to_reach(1.0, 1e-3, 100, DELTA, 320, check="top") == 33


def test_eps_below_the_floor():
    # eps = 0.1 < log(1e5)/100: loops checked after the iteration still run once,
    # smartnoise refuses to train.
    assert queries_to_reach(0.1, 1e-3, 100, DELTA) == 0
    assert iterations_to_reach(0.1, 1e-3, 100, DELTA, 64, check="after") == 1
    with pytest.raises(ConfigError, match="floor"):
        iterations_to_reach(0.1, 1e-3, 100, DELTA, 64, check="top")


def test_max_iter_caps_and_bad_arguments():
    assert iterations_to_reach(50.0, 1e-3, 100, DELTA, 64, max_iter=1000) == 1000
    for kwargs in ({"check": "middle"}, {"queries_per_iteration": 0}, {"eps": -1.0}):
        args = {"eps": 1.0, "lam": 1e-3, "L": 100, "delta": DELTA, "queries_per_iteration": 64} | kwargs
        with pytest.raises(ConfigError):
            iterations_to_reach(**args)


# ------------------------------------------------------------------ properties


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["paper", "fixed"]),
    lam=st.sampled_from([1e-3, 1e-4]),
    k=st.integers(1, 3000),
    batches=st.integers(1, 6),
    seed=st.integers(0, 2**32 - 1),
)
def test_closed_form_holds_for_small_lambda(name, lam, k, batches, seed):
    # lam <= 1e-3, L = 100, k <= 3000: q >= 0.05 > lam (l+1)/2 so 2 lam^2 l(l+1) always
    # wins the min, whatever the votes: eps_hat depends on the query count only.
    rng = np.random.default_rng(seed)
    acc = create(name, lam=lam, orders=100, k=k, models=2)
    for _ in range(batches):
        acc.compose(PateVote(rng.integers(0, k + 1, size=(2, 64)), acc.k))
    want = eps_data_independent(64 * batches, lam, 100, DELTA)
    np.testing.assert_allclose(acc.eps(DELTA), [want, want], rtol=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["paper", "fixed", "missing-log"]),
    lam=st.floats(1e-5, 0.34),
    k=st.integers(1, 60),
    seed=st.integers(0, 2**32 - 1),
)
def test_eps_nondecreasing_in_queries(name, lam, k, seed):
    # lam < log(2)/2 keeps e^{2 lam} q < 1, so every increment is >= 0 in these three.
    rng = np.random.default_rng(seed)
    votes = rng.integers(0, k + 1, size=40)
    fn = get(name)
    alpha = np.cumsum([fn(votes[i : i + 1], k, lam, 30) for i in range(40)], axis=0)
    eps = eps_from_moments(alpha, DELTA)
    assert np.all(np.diff(eps) >= -1e-12)


@settings(max_examples=60, deadline=None)
@given(lam=st.floats(1e-5, 5.0), k=st.integers(1, 60), seed=st.integers(0, 2**32 - 1))
def test_fixed_increments_are_nonnegative_and_finite_for_any_lambda(lam, k, seed):
    votes = np.random.default_rng(seed).integers(0, k + 1, size=(3, 20))
    a = get("fixed")(votes, k, lam, 50)
    assert np.all(np.isfinite(a)) and np.all(a >= 0)


@settings(max_examples=80, deadline=None)
@given(
    eps=st.floats(0.2, 50.0),
    lam=st.sampled_from([1e-4, 1e-3, 1e-2]),
    L=st.sampled_from([20, 100]),
)
def test_queries_to_reach_is_the_smallest(eps, lam, L):
    t = queries_to_reach(eps, lam, L, DELTA)
    assert eps_data_independent(t, lam, L, DELTA) >= eps
    assert t == 0 or eps_data_independent(t - 1, lam, L, DELTA) < eps


# ------------------------------------------------------- simulated stopping rules


def _run_after(name, eps, lam, L, k, qpi, rng):
    """paper / updated / synthcity / borealis: eps_hat recomputed at the end."""
    acc = create(name, lam=lam, orders=L, k=k)
    eps_hat, it = 0.0, 0
    while eps_hat < eps:
        it += 1
        acc.compose(PateVote(rng.integers(0, k + 1, size=(1, qpi)), acc.k))
        eps_hat = acc.eps(DELTA)[0]
    return it


def _run_top(name, eps, lam, L, k, qpi, rng):
    """smartnoise: eps_hat computed at the top, break if strictly above."""
    acc = create(name, lam=lam, orders=L, k=k)
    eps_hat, it, trained = 0.0, 0, 0
    while eps_hat < eps:
        it += 1
        eps_hat = acc.eps(DELTA)[0]
        if eps_hat > eps:
            if it == 1:
                raise ValueError("epsilon too small")
            break
        acc.compose(PateVote(rng.integers(0, k + 1, size=(1, qpi)), acc.k))
        trained += 1
    return trained


@pytest.mark.parametrize("eps", [0.3, 1.0, 2.0])
@pytest.mark.parametrize(
    "name,L,qpi,check",
    [
        ("updated", 20, 64, "after"),
        ("synthcity-index-bug", 100, 200, "after"),
        ("missing-log", 100, 320, "after"),
        ("missing-log", 100, 320, "top"),
        ("fixed", 100, 64, "after"),
    ],
)
def test_iterations_match_simulated_loops(eps, name, L, qpi, check):
    rng = np.random.default_rng(7)
    run = _run_after if check == "after" else _run_top
    got = run(name, eps, 1e-3, L, 5, qpi, rng)
    assert got == iterations_to_reach(eps, 1e-3, L, DELTA, qpi, check=check)
