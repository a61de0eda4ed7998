"""The cross-check's named checks on hand-made runs (no process, no package)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.accountants.pate import eps_from_moments, moments_missing_log
from raudit.crosscheck import checks as ck
from raudit.crosscheck.report import failed, verdict
from raudit.crosscheck.sides import Run

K, LAM, L, DELTA = 5, 1e-3, 100, 1e-5


def _table(rng, n=50, shift=0.0):
    return pd.DataFrame({"a": np.clip(rng.normal(5 + shift, 1, n), 0, 10),
                         "b": rng.integers(0, 3, n), "label": rng.integers(0, 2, n)})


def _run(rng, iterations=4, *, shift=0.0, with_moments=True) -> Run:
    """A run whose votes, moments and trajectory agree (as the released entry writes them)."""
    votes, moments, traj = [], [], []
    alpha = np.zeros(L)
    for t in range(iterations + 1):
        moments.append(alpha.tolist())
        traj.append(float(eps_from_moments(alpha, DELTA)))
        if t < iterations:
            for _ in range(2):
                n1 = rng.integers(0, K + 1, 8)
                votes.append((t, n1))
                alpha = alpha + moments_missing_log(n1, K, LAM, L)
    return Run(0, iterations, traj, traj[-1], _table(rng, shift=shift), 1.0, 0.1, inner_fit_s=0.5,
               votes=votes, moments=moments if with_moments else [])


def _train(rng):
    """A training table of the runs' size whose ranges cover every synthetic value."""
    t = _table(rng)
    t.loc[0, "a"], t.loc[1, "a"], t.loc[0, "b"], t.loc[1, "b"] = 0.0, 10.0, 0, 2
    return t


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def test_same_runs_pass_every_check(rng):
    port = [_run(rng) for _ in range(12)]
    released = [_run(rng) for _ in range(12)]
    train = _train(rng)
    assert ck.stopping(port, released).passed
    assert ck.trajectory(port, released).passed
    acc = ck.accountant(released, k=K, lam=LAM, orders=L, delta=DELTA)
    assert acc.passed and acc.numbers["queries"] == 12 * 4 * 2 * 8
    assert ck.schema(port, released, train).passed
    assert ck.statistics(port, released, alpha=0.05).passed


def test_a_different_stopping_rule_fails_stopping_and_trajectory(rng):
    port = [_run(rng) for _ in range(3)]
    released = [_run(rng, iterations=5) for _ in range(3)]
    assert ck.stopping(port, released).passed is False
    assert ck.trajectory(port, released).passed is False
    assert ck.accountant(released, k=K, lam=LAM, orders=L, delta=DELTA).passed  # still consistent


def test_trajectory_tolerance_is_relative_1e6(rng):
    port = [_run(rng)]
    released = [_run(rng)]
    released[0].trajectory = [x * (1 + 5e-7) for x in port[0].trajectory]
    assert ck.trajectory(port, released).passed
    released[0].trajectory = [x * (1 + 5e-6) for x in port[0].trajectory]
    assert not ck.trajectory(port, released).passed


def test_accountant_detects_moments_that_do_not_follow_the_votes(rng):
    released = [_run(rng)]
    released[0].moments[2] = (np.array(released[0].moments[2]) * 1.001).tolist()
    assert ck.accountant(released, k=K, lam=LAM, orders=L, delta=DELTA).passed is False
    # a batch of votes the accountant never saw (with lambda = 1e-3 the increment depends
    # on the number of queries only, spec section 10, so a changed vote would not show)
    released = [_run(rng)]
    released[0].votes.append((1, np.zeros(8, dtype=np.int64)))
    assert ck.accountant(released, k=K, lam=LAM, orders=L, delta=DELTA).passed is False


def test_shifted_output_fails_statistics_not_schema(rng):
    port = [_run(rng) for _ in range(12)]
    released = [_run(rng, shift=1.0) for _ in range(12)]
    train = _train(rng)
    stat = ck.statistics(port, released, alpha=0.05)
    assert stat.passed is False and ("mean", "a") in stat.numbers["rejected"]
    assert ck.schema(port, released, train).passed


def test_schema_fails_outside_the_training_range_or_on_other_dtypes(rng):
    port, released = [_run(rng)], [_run(rng)]
    train = _train(rng)
    released[0].synthetic.loc[0, "a"] = 99.0
    res = ck.schema(port, released, train)
    assert res.passed is False and "'a' outside" in res.summary
    released = [_run(rng)]
    released[0].synthetic["b"] = released[0].synthetic["b"].astype(float)
    assert ck.schema(port, released, train).passed is False


def test_utility_permutation_test(rng):
    same = ck.utility({"lr": list(rng.uniform(0.7, 0.8, 20))}, {"lr": list(rng.uniform(0.7, 0.8, 20))},
                      alpha=0.05)
    assert same.passed
    far = ck.utility({"lr": list(rng.uniform(0.7, 0.8, 20))}, {"lr": list(rng.uniform(0.4, 0.5, 20))},
                     alpha=0.05)
    assert far.passed is False and far.numbers["failed"] == ["lr"]


def test_verdict_names_the_failed_checks(rng):
    port = [_run(rng) for _ in range(3)]
    released = [_run(rng, iterations=5) for _ in range(3)]
    result = {"settings": {"impl": "smartnoise", "dataset": "x", "models": 3},
              "checks": [ck.stopping(port, released), ck.speed(port, released, {1: 0.5, 3: 0.25})]}
    assert failed(result) == ["stopping-iteration"]
    line = verdict(result)
    assert "DIFFERS" in line and "stopping-iteration" in line and "4.0x faster" in line


def test_float32_model_is_the_released_arithmetic_and_within_tolerance(rng):
    """smartnoise-synth's moments_acc, re-typed in torch (int64 orders make its bound a
    float32 tensor): the float32 model matches it exactly, raudit's float64 within 2e-7."""
    import math

    import torch

    n1 = rng.integers(0, K + 1, 64)
    votes = torch.tensor(n1, dtype=torch.float64)[:, None]
    l_list = 1 + torch.tensor(range(L))
    q = (2 + LAM * torch.abs(2 * votes - K)) / (4 * torch.exp(LAM * torch.abs(2 * votes - K)))
    released = []
    for l_val in l_list:
        a = 2 * LAM ** 2 * l_val * (l_val + 1)
        assert a.dtype == torch.float32
        t = (1 - q) * torch.pow((1 - q) / (1 - math.exp(2 * LAM) * q), l_val) + q * torch.exp(2 * LAM * l_val)
        released.append(torch.clamp(t, max=a).sum().item())
    released = np.array(released)
    assert np.max(np.abs(ck.float32_missing_log(n1, K, LAM, L) / released - 1)) <= 1e-12
    ours = moments_missing_log(n1, K, LAM, L)
    gap = np.max(np.abs(ours / released - 1))
    assert 1e-9 < gap <= ck.FLOAT32_RTOL


def test_utility_says_when_it_has_no_power(rng):
    """At 3 models per side the permutation test cannot reject whatever the AUROCs (its
    smallest p is 2 / C(6, 3) = 0.1 > 0.05): the pass is said to mean nothing."""
    assert ck.smallest_p(3) == pytest.approx(0.1) and ck.smallest_p(4) == pytest.approx(2 / 70)
    far = ck.utility({"lr": [0.9, 0.91, 0.92]}, {"lr": [0.1, 0.11, 0.12]}, alpha=0.05)
    assert far.passed  # cannot fail: the numbers are as far apart as they can be
    assert "cannot fail with 3 model(s) per side" in far.summary and far.numbers["low_power"]
    few = ck.utility({"lr": list(rng.uniform(0.7, 0.8, 6))},
                     {"lr": list(rng.uniform(0.7, 0.8, 6))}, alpha=0.05)
    assert "little power" in few.summary
    many = ck.utility({"lr": list(rng.uniform(0.7, 0.8, 20))},
                      {"lr": list(rng.uniform(0.7, 0.8, 20))}, alpha=0.05)
    assert many.numbers["low_power"] == "" and "power" not in many.summary
