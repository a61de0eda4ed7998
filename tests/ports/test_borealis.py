"""`borealis`: the Borealis AI PATE-GAN port, bugs on (spec section 5)."""

import math

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.accountants import create, iterations_to_reach
from raudit.events import PateVote
from raudit.events import EventLog, TeacherBatch, Votes
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.ports.borealis.port import borealis_sizes, borealis_z_dim

Borealis = generators.get("borealis")


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 4)) * [1, 5, 10, 0.1], columns=["a", "b", "c", "d"])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


@pytest.mark.parametrize("d,z", [(10, 2), (9, 3), (5, 2), (3, 1), (2, 1), (30, 7)])
def test_z_dim_rule(d, z):
    """z = din/4 + 1 if din % 4 == 0 else int(din/4), at least 1 (din = d - 1)."""
    assert borealis_z_dim(d) == z


def test_architecture_shapes_and_init():
    nets = Borealis().nets(10)  # din = 9: z = 2, hidden = int(9/2) = 4
    rng = CounterRNG([0], dtype=torch.float64)
    g, t, s = nets.generator.create(rng), nets.teacher.create(rng), nets.student.create(rng)
    assert {k: tuple(v.shape[1:]) for k, v in g.views().items()} == \
        {"w0": (2, 4), "b0": (4,), "w1": (4, 10), "b1": (10,)}
    for p in (t, s):
        assert {k: tuple(v.shape[1:]) for k, v in p.views().items()} == \
            {"w0": (10, 4), "b0": (4,), "w1": (4, 1), "b1": (1,)}
        assert torch.all(p["b0"] == 0.01) and torch.all(p["b1"] == 0.01)
        assert p["w0"].abs().max() <= math.sqrt(6 / 14)  # Xavier-uniform bound
    assert nets.generator.activations == ["relu", "linear"]
    assert nets.teacher.activations == ["relu", "sigmoid"]


def test_partition_sizes_follow_upstream_int_boundaries():
    rows = torch.tensor([100, 5, 7])
    sizes = borealis_sizes(rows, 3)
    for m, n in enumerate(rows.tolist()):
        bounds = [int(t * n / 3) for t in range(3)] + [n]
        assert sizes[m].tolist() == [b - a for a, b in zip(bounds, bounds[1:])]


def test_teachers_see_contiguous_disjoint_slices():
    log, df = EventLog(), table(n=100)
    Borealis(teachers=3, batch=16, lam=1e-3, max_iter=20).fit(df, epsilon=1e6, seed=0, observer=log)
    seen = [set() for _ in range(3)]
    for e in log.of(TeacherBatch):
        seen[e.teacher].update(e.rows[0].tolist())
    assert [(min(s), max(s)) for s in seen] == [(0, 32), (33, 65), (66, 99)]
    assert all(not (seen[a] & seen[b]) for a in range(3) for b in range(a + 1, 3))
    assert [len(s) for s in seen] == [33, 33, 34]  # 20 iterations x 5 batches of 16 cover each slice


def test_shuffled_partition_option_is_not_contiguous():
    log = EventLog()
    Borealis(teachers=2, batch=16, max_iter=10, partition="shuffled").fit(
        table(n=100), epsilon=1e6, seed=0, observer=log)
    first = {r for e in log.of(TeacherBatch) if e.teacher == 0 for r in e.rows[0].tolist()}
    assert max(first) >= 50


def test_accountant_is_missing_log():
    """eps_hat equals the missing-log accountant over the recorded votes (lam = 1: the data-dependent
    term wins some orders, so it differs from the accountant with the log)."""
    log, lam, delta = EventLog(), 1.0, 1e-5
    g = Borealis(teachers=5, batch=16, lam=lam, max_iter=3).fit(
        table(), epsilon=1e6, delta=delta, seed=1, observer=log)
    acct = {v: create(v, lam=lam, orders=100, k=5) for v in ("missing-log", "paper")}
    for e in log.of(Votes):
        for a in acct.values():
            a.compose(PateVote(e.n1, a.k, mask=e.charged))
    assert g.summary()["eps_hat"] == pytest.approx(acct["missing-log"].eps(delta)[0], rel=1e-12)
    assert g.summary()["eps_hat"] != pytest.approx(acct["paper"].eps(delta)[0], rel=1e-3)


@pytest.mark.parametrize("eps,batch", [(0.3, 16), (0.5, 12), (1.0, 32)])
def test_stops_after_the_iteration_that_reaches_eps(eps, batch):
    """lam = 1e-3, delta = 1e-5, L = 100: eps_hat depends only on the query count; the check
    runs after each iteration (overshoot)."""
    g = Borealis(teachers=3, batch=batch, lam=1e-3).fit(table(), epsilon=eps, delta=1e-5, seed=0)
    expected = iterations_to_reach(eps, 1e-3, 100, 1e-5, queries_per_iteration=5 * batch, check="after")
    assert g.summary()["iterations"] == expected
    assert g.summary()["eps_hat"] >= eps


def test_laplace_noise_has_scale_one_over_lambda():
    log, lam = EventLog(), 0.05
    Borealis(teachers=3, batch=64, lam=lam, max_iter=4).fit(table(n=300), epsilon=1e6, seed=3, observer=log)
    votes = log.of(Votes)
    noise = np.concatenate([e.drawn[0] for e in votes])
    assert all(e.noise_scale == pytest.approx(1 / lam) for e in votes)
    assert noise.size == 4 * 5 * 64
    # E|Lap(b)| = b; the sample mean of 1,280 draws has sd b/sqrt(1280) ~ 2.8% of b
    assert np.mean(np.abs(noise)) == pytest.approx(1 / lam, rel=0.12)
    assert abs(np.median(noise)) < 0.15 / lam
    for e in votes:  # single noise on n1, threshold at k/2
        np.testing.assert_array_equal(e.labels[0], e.n1[0] + e.drawn[0] > 1.5)


def test_generation_noise_mismatch_is_an_option():
    df = table()
    normal = Borealis(teachers=2, batch=16, max_iter=5).fit(df, epsilon=1e6, seed=0)
    uniform = Borealis(teachers=2, batch=16, max_iter=5, generation_noise="uniform").fit(df, epsilon=1e6, seed=0)
    assert normal.summary()["eps_hat"] == uniform.summary()["eps_hat"]  # same training
    a, b = normal.sample(200, seed=1), uniform.sample(200, seed=1)
    assert not np.allclose(a.to_numpy(float), b.to_numpy(float))


def test_output_schema_dtypes_and_scale():
    df = table(n=150)
    out = Borealis(teachers=2, batch=16, max_iter=30).fit(df, epsilon=1e6, seed=0).sample(300, seed=2)
    assert list(out.columns) == list(df.columns)
    assert (out.dtypes == df.dtypes).all()
    tol = 1e-12 * (df.max() - df.min())  # u * (max - min) + min may pass max by an ulp
    assert ((out >= df.min() - tol) & (out <= df.max() + tol)).all().all()  # clipped to [0, 1], inverted
    assert set(out["label"].unique()) <= {0, 1}


def test_batched_equals_single_float64():
    tables, seeds = [table(seed=1), table(n=110, seed=2), table(n=130, seed=3)], [11, 12, 13]
    opts = dict(teachers=3, batch=16, lam=1e-3, max_iter=8)
    many = Borealis(**opts).fit_many(tables, epsilon=1e6, seeds=seeds)
    for t, s, m in zip(tables, seeds, many):
        alone = Borealis(**opts).fit(t, epsilon=1e6, seed=s)
        np.testing.assert_allclose(m.sample(50, seed=5).to_numpy(float),
                                   alone.sample(50, seed=5).to_numpy(float), rtol=0, atol=1e-9)
        assert m.summary()["iterations"] == alone.summary()["iterations"] == 8


def test_paper_preset_uses_batch_64_and_no_cap():
    hp = Borealis(preset="paper").resolve(100, 6)
    assert (hp.batch, hp.max_iter, hp.teachers) == (64, None, 2)
    hp = Borealis().resolve(100, 6)
    assert (hp.batch, hp.max_iter, hp.teachers) == (50, 10_000, 2)


def test_short_partitions_train_on_short_batches():
    """batch 64 over 2 x 20 rows: each teacher's batch holds its 20 rows (a DataLoader's first batch)."""
    log = EventLog()
    g = Borealis(preset="paper", teachers=2, max_iter=2).fit(table(n=40), epsilon=1e6, seed=0, observer=log)
    for e in log.of(TeacherBatch):
        lo = 0 if e.teacher == 0 else 20
        assert set(e.rows[0].tolist()) == set(range(lo, lo + 20))
    assert g.summary()["iterations"] == 2
