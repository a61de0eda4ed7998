"""`updated`: the authors' 2021 release, bugs on (spec section 2)."""

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.events import AccountantStep, EventLog, TeacherBatch, Votes

Updated = generators.get("updated")


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 4)) * [1, 5, 10, 0.1], columns=["a", "b", "c", "d"])
    df["label"] = (rng.random(n) < 0.4).astype(int)
    return df


def run(**kw):
    log = EventLog()
    eps = kw.pop("epsilon", 1e9)
    gen = Updated(**kw).fit(table(n=kw.pop("n", 120) if "n" in kw else 120), epsilon=eps, seed=0,
                            observer=log)
    return gen, log


def test_stale_index_every_teacher_trains_on_the_last_partition():
    """From the events: each teacher's real rows are the same int(N/k) rows in every
    iteration, and they are the LAST chunk of the shuffled order (none of the other rows)."""
    gen, log = run(teachers=3, max_iter=3)
    batches = log.of(TeacherBatch)
    assert len(batches) == 3 * 3
    sets = {frozenset(e.rows[0].tolist()) for e in batches}
    assert len(sets) == 1
    (rows,) = sets
    assert len(rows) == 120 // 3
    disjoint, _ = run(teachers=3, max_iter=1, partition="disjoint")
    parts = [set(e.rows[0].tolist()) for e in _.of(TeacherBatch)]
    assert all(len(p) == 40 for p in parts) and len(set().union(*parts)) == 120
    assert rows in {frozenset(p) for p in parts}  # the stale one is one of the real chunks


def test_noise_scale_is_lambda_not_its_inverse():
    """Lap(scale) has E|Y| = scale: lambda = 0.5 gives ~0.5 (the accountant assumes 2).
    1,200 draws (batch min(64, 120 // 2) = 60): the mean's sd is 0.5/sqrt(1200) = 0.014; tolerance 0.05."""
    _, log = run(teachers=2, lam=0.5, max_iter=20, accountant="fixed-threshold")
    noise = np.concatenate([e.drawn.ravel() for e in log.of(Votes)])
    assert len(noise) == 20 * 60 and abs(np.abs(noise).mean() - 0.5) < 0.05
    assert all(e.noise_scale == 0.5 for e in log.of(Votes))
    _, log = run(teachers=2, lam=0.5, max_iter=20, noise_scale="inverse", accountant="fixed-threshold")
    noise = np.concatenate([e.drawn.ravel() for e in log.of(Votes)])
    assert abs(np.abs(noise).mean() - 2.0) < 0.2


def test_labels_are_the_thresholded_noisy_vote_fraction():
    _, log = run(teachers=3, lam=0.5, max_iter=2)
    for e in log.of(Votes):
        np.testing.assert_array_equal(e.labels, (e.n1 + e.drawn) / 3 > 0.5)


def test_nan_accountant_ends_training_silently_and_is_recorded():
    """lambda = 0.4 with two teachers: a tied vote makes 1 - q e^{2 lambda} < 0 and the log
    argument negative at odd orders: alpha and eps_hat become NaN and `while eps_hat < eps`
    stops after that iteration although eps = 1e9 is far away."""
    gen, log = run(teachers=2, lam=0.4, max_iter=40)
    steps = log.of(AccountantStep)
    ties = sum(int((e.n1 == 1).sum()) for e in log.of(Votes))
    assert ties > 0
    assert np.isnan(steps[-1].eps_hat[0]) and not any(np.isnan(s.eps_hat[0]) for s in steps[:-1])
    assert gen.summary()["stopped"] == "nan" and gen.summary()["iterations"] == len(steps) < 40


def test_accountant_golden_data_independent_regime():
    """lambda = 1e-3: every query adds 2 lambda^2 l(l+1) (L = 20), so after T iterations of
    one 60-sample student step (batch min(64, N // k)) eps_hat = min_l (2e-6 * 60 T l(l+1) + ln 1e5) / l."""
    gen, log = run(teachers=2, max_iter=7)
    l = np.arange(1, 21)
    want = np.min((2e-6 * 60 * 7 * l * (l + 1) + np.log(1e5)) / l)
    assert gen.summary()["eps_hat"] == pytest.approx(want, rel=1e-12)
    assert gen.summary()["charged_queries"] == 7 * 60


def test_stops_after_the_iteration_that_crosses_eps():
    """eps_hat is checked after the iteration (overshoot), as `while eps_hat < eps`."""
    gen, log = run(teachers=2, lam=0.05, epsilon=5.0, max_iter=500)
    eps = [float(s.eps_hat[0]) for s in log.of(AccountantStep)]
    assert eps[-1] >= 5.0 and all(e < 5.0 for e in eps[:-1])
    assert gen.summary()["stopped"] == "epsilon"


def test_presets():
    hp = Updated().resolve(686, 29)
    assert (hp.teachers, hp.batch, hp.max_iter, hp.student_steps, hp.orders) == (2, 64, 10_000, 1, 20)
    hp = Updated(preset="paper").resolve(686, 29)
    assert (hp.batch, hp.max_iter, hp.student_steps) == (64, None, 5)
    assert Updated(teachers=20).resolve(686, 29).batch == 34  # min(64, N // k)
