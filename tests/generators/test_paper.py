"""The reference `paper` PATE-GAN on the batched engine."""

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.accountants import create
from raudit.events import PateVote
from raudit.accountants.closed_form import iterations_to_reach
from raudit.errors import ConfigError, DataError
from raudit.events import AccountantStep, EventLog, TeacherBatch, Votes

Paper = generators.get("paper")


def table(n=120, d=6, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, d - 1)), columns=[f"x{i}" for i in range(d - 1)])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


def test_batched_equals_single_float64():
    tables = [table(seed=1), table(n=110, seed=2), table(seed=3)]
    seeds = [11, 12, 13]
    gen = Paper(teachers=3, max_iter=15, dtype="float64")
    many = gen.fit_many(tables, epsilon=1e6, seeds=seeds)
    for t, s, m in zip(tables, seeds, many):
        alone = Paper(teachers=3, max_iter=15, dtype="float64").fit(t, epsilon=1e6, seed=s)
        a, b = m.sample(40, seed=5), alone.sample(40, seed=5)
        np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=0, atol=1e-9)
        assert m.summary()["iterations"] == alone.summary()["iterations"] == 15


def test_batched_equals_single_float32_short_run():
    t = table(seed=4)
    many = Paper(teachers=2, max_iter=5).fit_many([table(seed=9), t], epsilon=1e6, seeds=[1, 2])
    alone = Paper(teachers=2, max_iter=5).fit(t, epsilon=1e6, seed=2)
    np.testing.assert_allclose(many[1].sample(30, seed=0).to_numpy(float),
                               alone.sample(30, seed=0).to_numpy(float), rtol=1e-4, atol=1e-4)


def test_sample_many_equals_individual_sampling():
    models = Paper(teachers=2, max_iter=3).fit_many([table(seed=1)] * 3, epsilon=1e6, seeds=[1, 2, 3])
    together = Paper.sample_many(models, 25, seeds=[7, 8, 9])
    for m, s, df in zip(models, [7, 8, 9], together):
        pd.testing.assert_frame_equal(m.sample(25, seed=s), df)
    # models of two training batches, interleaved: each answer lands in its model's place
    other = Paper(teachers=2, max_iter=2).fit_many([table(seed=2)] * 2, epsilon=1e6, seeds=[4, 5])
    mixed = [other[0], models[0], other[1], models[2]]
    for m, s, df in zip(mixed, [6, 7, 8, 9], Paper.sample_many(mixed, 25, seeds=[6, 7, 8, 9])):
        pd.testing.assert_frame_equal(m.sample(25, seed=s), df)


@pytest.mark.parametrize("eps,k,batch", [(1.0, 2, 16), (0.5, 3, 8), (2.0, 4, 12)])
def test_stopping_iteration_matches_closed_form(eps, k, batch):
    """lambda=1e-3: eps_hat is a function of the query count (spec section 10)."""
    gen = Paper(teachers=k, batch=batch, lam=1e-3, orders=100).fit(table(), epsilon=eps, seed=0)
    expected = iterations_to_reach(eps, 1e-3, 100, 1e-5, queries_per_iteration=5 * batch,
                                   check="after")
    assert gen.summary()["iterations"] == expected
    assert gen.summary()["eps_hat"] >= eps


def test_models_stop_independently_in_one_batch():
    """A per-model stopping mask: each model stops on its own eps_hat."""
    gens = Paper(teachers=2, batch=8, lam=0.5, max_iter=400).fit_many(
        [table(seed=s) for s in range(4)], epsilon=3.0, seeds=[0, 1, 2, 3])
    iters = [g.summary()["iterations"] for g in gens]
    for g, s in zip(gens, range(4)):
        alone = Paper(teachers=2, batch=8, lam=0.5, max_iter=400).fit(table(seed=s), epsilon=3.0, seed=s)
        assert alone.summary()["iterations"] == g.summary()["iterations"]
    assert all(1 <= i < 400 for i in iters)


def test_partition_is_disjoint_and_covers_the_rows():
    log = EventLog()
    df = table(n=90)
    Paper(teachers=3, batch=30, max_iter=20).fit(df, epsilon=1e6, seed=0, observer=log)
    seen = [set() for _ in range(3)]
    for e in log.of(TeacherBatch):
        seen[e.teacher].update(e.rows[0].tolist())
    assert all(not (seen[a] & seen[b]) for a in range(3) for b in range(a + 1, 3))
    assert set().union(*seen) == set(range(90))
    assert all(len(s) == 30 for s in seen)


def test_votes_noise_scale_is_inverse_lambda_and_accountant_matches_events():
    log = EventLog()
    gen = Paper(teachers=5, batch=64, lam=0.05, max_iter=30).fit(table(n=200), epsilon=1e6, seed=1,
                                                                 observer=log)
    votes = log.of(Votes)
    noise = np.concatenate([v.drawn.ravel() for v in votes])
    assert abs(np.abs(noise).mean() - 1 / 0.05) < 0.05 * 20  # E|Lap(b)| = b, 5 % tolerance
    acct = create("paper", lam=0.05, orders=100, k=5, models=1)
    for v in votes:
        acct.compose(PateVote(v.n1, acct.k))
    assert acct.eps(1e-5)[0] == pytest.approx(gen.summary()["eps_hat"], rel=1e-12)
    assert log.of(AccountantStep)[-1].eps_hat[0] == pytest.approx(gen.summary()["eps_hat"])


def test_direct_noise_scale_option_changes_the_noise():
    log = EventLog()
    Paper(teachers=2, lam=0.5, noise_scale="direct", max_iter=3).fit(table(), epsilon=1e6, seed=1,
                                                                      observer=log)
    noise = np.concatenate([v.drawn.ravel() for v in log.of(Votes)])
    assert abs(np.abs(noise).mean() - 0.5) < 0.1


def test_output_schema_scale_and_types():
    df = table()
    out = Paper(teachers=2, max_iter=20).fit(df, epsilon=1e6, seed=0).sample(500, seed=3)
    assert list(out.columns) == list(df.columns)
    for c in df.columns:
        assert out[c].min() >= df[c].min() - 1e-9 and out[c].max() <= df[c].max() + 1e-9
    assert set(out["label"].unique()) <= {0, 1}
    assert (out["count"] == out["count"].round()).all()


def test_same_seed_same_data_different_seed_different_data():
    df = table()
    a = Paper(teachers=2, max_iter=5).fit(df, epsilon=1e6, seed=0).sample(50, seed=1)
    b = Paper(teachers=2, max_iter=5).fit(df, epsilon=1e6, seed=0).sample(50, seed=1)
    c = Paper(teachers=2, max_iter=5).fit(df, epsilon=1e6, seed=1).sample(50, seed=1)
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_presets_resolve_the_studys_rules():
    assert Paper().resolve(686, 29).teachers == 2
    assert Paper(teachers=5).resolve(686, 29).batch == 64
    assert Paper(teachers=20).resolve(686, 29).batch == 34  # min(64, N // k)
    assert Paper(preset="paper", teachers=20).resolve(686, 29).batch == 64
    assert Paper(preset="paper").resolve(686, 29).max_iter is None
    assert Paper().resolve(686, 29).max_iter == 10_000


@pytest.mark.parametrize("kwargs", [{"lam": 0}, {"teachers": 0}, {"batch": -1},
                                    {"noise_scale": "huge"}, {"preset": "fast"}])
def test_bad_options_are_config_errors(kwargs):
    with pytest.raises(ConfigError):
        Paper(**kwargs)


@pytest.mark.parametrize("eps,delta", [(0, 1e-5), (-1, 1e-5), (1, 0), (1, 1.5)])
def test_bad_privacy_parameters(eps, delta):
    with pytest.raises(ConfigError):
        Paper().fit(table(), epsilon=eps, delta=delta)


def test_bad_tables():
    df = table()
    with pytest.raises(ConfigError, match="teachers"):
        Paper(teachers=500).fit(df, epsilon=1)
    with pytest.raises(DataError, match="single class"):
        Paper().fit(df.assign(label=1), epsilon=1)
    with pytest.raises(DataError, match="NaN"):
        Paper().fit(df.assign(x0=np.nan), epsilon=1)
    with pytest.raises(DataError, match="empty"):
        Paper().fit(df.iloc[:0], epsilon=1)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu():
    df = table()
    a = Paper(teachers=2, max_iter=5, dtype="float64", device="cpu").fit(df, epsilon=1e6, seed=0)
    b = Paper(teachers=2, max_iter=5, dtype="float64", device="cuda").fit(df, epsilon=1e6, seed=0)
    np.testing.assert_allclose(a.sample(20, seed=1).to_numpy(float),
                               b.sample(20, seed=1).to_numpy(float), atol=1e-6)
