"""`original` (spec section 1): the authors' discriminator-only WGAN-GP with noisy labels."""

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy.stats import norm

from raudit import generators
from raudit.errors import ConfigError
from raudit.events import EventLog, LabelNoise, TeacherBatch
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.wgan.original.port import OriginalPateGan, ScaleEncoder
from raudit.generators.wgan.label_noise import label_noise_sigma, noisy_labels
from raudit.generators.wgan.gp import WganNets

Original = generators.get("original")


def table(n=200, seed=0, positives=0.3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{i}" for i in range(5)])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < positives).astype(int)
    return df


def test_registered():
    assert Original is OriginalPateGan and "original" in generators.names()


@pytest.mark.parametrize("d, cond, widths, z, g_shapes, d_shapes", [
    (29, False, "d,d,d", 7, [(7, 29), (29, 29), (29, 29)], [(29, 29), (29, 29), (29, 1)]),
    (29, True, "d,d,d", 7, [(8, 28), (28, 28), (28, 28)], [(29, 28), (28, 28), (28, 1)]),
    (29, False, "d,d/2,d", 7, [(7, 29), (29, 14), (14, 29)], [(29, 29), (29, 29), (29, 1)]),
    (3, False, "d,d,d", 1, [(1, 3), (3, 3), (3, 3)], [(3, 3), (3, 3), (3, 1)]),
])
def test_architecture(d, cond, widths, z, g_shapes, d_shapes):
    nets = WganNets(d, conditional=cond, widths=widths)
    assert nets.z_dim == z
    assert [nets.generator.shapes()[f"w{i}"] for i in range(3)] == g_shapes
    assert [nets.critic.shapes()[f"w{i}"] for i in range(3)] == d_shapes
    assert nets.generator.activations == ["tanh", "tanh", "sigmoid"]
    assert nets.critic.activations == ["relu", "relu", "linear"]


def test_init_is_normal_with_std_sqrt_2_over_fan_in_and_zero_bias():
    nets = WganNets(400, conditional=False, widths="d,d,d")
    p = nets.critic.create(CounterRNG([0], dtype=torch.float64))
    state = p.state()
    w = state["w1"].numpy().ravel()  # 160,000 draws: the std is within 1 %
    assert w.std() == pytest.approx(1 / math.sqrt(400 / 2), rel=0.01) and abs(w.mean()) < 1e-3
    assert all(np.all(state[f"b{i}"].numpy() == 0) for i in range(3))


def test_sigma_xor_bug_and_correct_value():
    assert label_noise_sigma(1.0, 1e-5, "xor") == pytest.approx(2.4212, abs=1e-4)  # 10 ^ 5 == 15
    assert label_noise_sigma(2.0, 1e-5, "xor") == pytest.approx(2.4212 / 2, abs=1e-4)
    assert label_noise_sigma(1.0, 1e-5, "correct") == pytest.approx(4.8448, abs=1e-4)
    with pytest.raises(ConfigError, match="delta"):
        label_noise_sigma(1.0, 1e-10, "xor")  # 10 ^ 10 == 0: log(0)


@pytest.mark.parametrize("sigma", [2.4212, 4.8448])
def test_label_flip_rate_matches_sigma(sigma):
    """A label flips when its noise crosses 0.5: P = Phi(-0.5 / sigma) (0.418 and 0.459)."""
    labels = noisy_labels(CounterRNG([3]), 50_000, sigma).numpy()[0]
    flips = np.concatenate([labels[:50_000] == 0, labels[50_000:] == 1]).mean()
    assert flips == pytest.approx(norm.cdf(-0.5 / sigma), abs=0.006)  # ~2.7 standard errors


@pytest.mark.parametrize("bug, sigma", [("xor", 2.4212), ("correct", 4.8448)])
def test_training_uses_the_sigma_of_its_delta_rule(bug, sigma):
    log = EventLog()
    gen = Original(teachers=2, max_iter=3, delta_bug=bug).fit(table(), epsilon=1.0, seed=0, observer=log)
    noise = log.of(LabelNoise)
    assert len(noise) == 3 * 2 and all(e.sigma == pytest.approx(sigma, abs=1e-4) for e in noise)
    assert gen.summary()["label_noise_sigma"] == pytest.approx(sigma, abs=1e-4)


def test_every_step_draws_from_all_rows_without_replacement():
    log = EventLog()
    Original(teachers=10, max_iter=3).fit(table(n=200), epsilon=1.0, seed=0, observer=log)
    batches = log.of(TeacherBatch)
    assert [(e.iteration, e.teacher) for e in batches] == [(i, t) for i in range(3) for t in range(10)]
    for e in batches:
        rows = e.rows[0]
        assert len(rows) == 20 and len(set(rows)) == 20 and rows.min() >= 0 and rows.max() < 200
    first = [set(e.rows[0]) for e in batches if e.iteration == 0]
    # 10 steps x 20 rows out of 200: about 1 - 0.9^10 = 65 % of the rows, and steps overlap
    assert len(set().union(*first)) > 100
    assert any(first[a] & first[b] for a in range(10) for b in range(a + 1, 10))
    # across iterations the same step index reads different rows (no partition)
    assert set(batches[0].rows[0]) != set(batches[10].rows[0])


def test_disjoint_partition_option():
    log = EventLog()
    Original(teachers=4, max_iter=5, partition="disjoint").fit(table(n=200), epsilon=1.0, seed=0,
                                                              observer=log)
    seen = [set() for _ in range(4)]
    for e in log.of(TeacherBatch):
        seen[e.teacher].update(e.rows[0].tolist())
    assert all(not (seen[a] & seen[b]) for a in range(4) for b in range(a + 1, 4))
    # but the 4 "teachers" are steps of ONE critic: a row moves all of them (issue 47)
    from raudit.generators.transcript import run_eps_true, teachers_per_record
    assert teachers_per_record(log.events) == 4
    true = run_eps_true(log.events, delta=1e-5)
    assert true.eps == math.inf and true.sensitivity == 4  # the label noise bounds nothing


def test_fixed_iteration_count_and_no_accountant():
    log = EventLog()
    gen = Original(teachers=2, max_iter=7).fit(table(), epsilon=1.0, seed=0, observer=log)
    assert gen.summary()["iterations"] == 7 and math.isnan(gen.summary()["eps_hat"])
    assert len(log.of(TeacherBatch)) == 7 * 2
    assert Original().resolve(686, 29).max_iter == 10_000


def test_conditional_mode_returns_the_training_labels():
    df = table(n=150, positives=0.2)
    gen = Original(teachers=2, max_iter=5, conditional=True).fit(df, epsilon=1.0, seed=0)
    out = gen.sample(150, seed=1)
    np.testing.assert_array_equal(out["label"].to_numpy(), df["label"].to_numpy())
    twice = gen.sample(300, seed=2)["label"].value_counts()
    assert (twice == 2 * df["label"].value_counts()).all()


def test_schema_dtypes_and_range_round_trip():
    df = table()
    enc = ScaleEncoder().fit(df, None)
    np.testing.assert_allclose(enc.transform(df).min(0), 0.0, atol=1e-12)
    back = enc.inverse(enc.transform(df))
    pd.testing.assert_frame_equal(back, df, check_exact=False, rtol=1e-9)
    out = Original(teachers=2, max_iter=5).fit(df, epsilon=1.0, seed=0).sample(300, seed=1)
    assert list(out.columns) == list(df.columns) and (out.dtypes == df.dtypes).all()
    for c in df.columns:  # sigmoid output decodes inside [min, max + 1e-8 * ...]
        assert df[c].min() - 1e-6 <= out[c].min() and out[c].max() <= df[c].max() + 1e-6
    raw = Original(teachers=2, max_iter=5, integers="none").fit(df, epsilon=1.0, seed=0).sample(50)
    assert raw["label"].dtype == float  # the raw floats upstream returns


def test_batched_equals_single():
    tables, seeds = [table(seed=1), table(n=180, seed=2), table(seed=3)], [11, 12, 13]
    for dtype, tol in (("float64", 1e-9), ("float32", 1e-6)):
        many = Original(teachers=3, max_iter=8, dtype=dtype).fit_many(tables, epsilon=1.0, seeds=seeds)
        for t, s, m in zip(tables, seeds, many):
            alone = Original(teachers=3, max_iter=8, dtype=dtype).fit(t, epsilon=1.0, seed=s)
            np.testing.assert_allclose(m.sample(40, seed=5).to_numpy(float),
                                       alone.sample(40, seed=5).to_numpy(float), rtol=0, atol=tol)


def test_presets():
    hp = Original().resolve(686, 29)
    assert (hp.teachers, hp.batch, hp.gp_coef, hp.lr, hp.generator_widths) == (2, 128, 10.0, 1e-4, "d,d,d")
    assert Original(teachers=10).resolve(686, 29).batch == 68  # min(128, N // k)
    paper = Original(preset="paper").resolve(686, 29)
    assert (paper.batch, paper.generator_widths, paper.max_iter) == (64, "d,d/2,d", 10_000)


@pytest.mark.parametrize("kwargs", [{"teachers": 0}, {"batch": -1}, {"noise": "uniform"},
                                    {"delta_bug": "power"}, {"partition": "stale"},
                                    {"preset": "fast"}, {"integers": "floor"}])
def test_bad_options_are_config_errors(kwargs):
    with pytest.raises(ConfigError):
        Original(**kwargs)


def test_batch_larger_than_the_table_is_a_config_error():
    with pytest.raises(ConfigError, match="batch"):
        Original(batch=500).fit(table(n=100), epsilon=1.0)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")
def test_cuda_matches_cpu():
    df = table()
    a = Original(teachers=2, max_iter=5, dtype="float64", device="cpu").fit(df, epsilon=1.0, seed=0)
    b = Original(teachers=2, max_iter=5, dtype="float64", device="cuda").fit(df, epsilon=1.0, seed=0)
    np.testing.assert_allclose(a.sample(20, seed=1).to_numpy(float),
                               b.sample(20, seed=1).to_numpy(float), atol=1e-6)
