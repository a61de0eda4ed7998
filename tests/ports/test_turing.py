"""`turing` (spec section 4): reprosyn's discriminator-only WGAN-GP and its bugs."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from raudit import generators
from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError
from raudit.events import EventLog, LabelNoise, TeacherBatch
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.wgan.turing.port import TuringEncoder, TuringPateGan
from raudit.generators.wgan.label_noise import label_noise_sigma, noisy_labels

Turing = generators.get("turing")


def table(n=200, seed=0, positives=0.5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{i}" for i in range(5)])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < positives).astype(int)
    return df


def test_registered():
    assert Turing is TuringPateGan and "turing" in generators.names()


def test_sigma_power_bug():
    assert label_noise_sigma(1.0, 1e-5, "power") == pytest.approx(0.6681, abs=1e-4)
    assert label_noise_sigma(0.5, 1e-5, "power") == pytest.approx(2 * 0.6681, abs=2e-4)
    assert label_noise_sigma(1.0, 1e-5, "correct") == pytest.approx(4.8448, abs=1e-4)


def test_label_flip_rate_matches_sigma():
    """P(flip) = Phi(-0.5 / 0.668) = 0.227 at eps = 1."""
    labels = noisy_labels(CounterRNG([5]), 50_000, 0.6681).numpy()[0]
    flips = np.concatenate([labels[:50_000] == 0, labels[50_000:] == 1]).mean()
    assert flips == pytest.approx(norm.cdf(-0.5 / 0.6681), abs=0.005)  # ~2.7 standard errors


def test_training_events_and_fixed_iterations():
    log = EventLog()
    gen = Turing(teachers=3).fit(table(n=150), epsilon=1.0, seed=0, observer=log)
    assert gen.summary()["iterations"] == 100 and math.isnan(gen.summary()["eps_hat"])
    assert len(log.of(TeacherBatch)) == 300
    assert all(e.sigma == pytest.approx(0.6681, abs=1e-4) for e in log.of(LabelNoise))
    first = [set(e.rows[0]) for e in log.of(TeacherBatch) if e.iteration == 0]
    assert all(len(s) == 50 for s in first)  # batch min(128, 150 // 3)
    assert any(first[a] & first[b] for a in range(3) for b in range(a + 1, 3))  # not disjoint
    seen = set().union(*(e.rows[0] for e in log.of(TeacherBatch) if e.teacher == 0))
    assert len(seen) == 150  # one "teacher" reads the whole table over a run


def test_gp_coefficient_is_the_number_of_teachers():
    assert Turing(teachers=7).resolve(7000, 10).gp_coef == 7.0
    assert Turing().resolve(686, 29).gp_coef == 2.0
    assert Turing(teachers=7, gp_coef=10).resolve(7000, 10).gp_coef == 10.0


def test_encoding_bug_round_trips_but_scales_by_max():
    df = pd.DataFrame({"a": [10.0, 15.0, 20.0], "b": [-5.0, 0.0, 5.0], "y": [0, 1, 1]})
    enc = TuringEncoder().fit(df, None)
    x = enc.transform(df)
    np.testing.assert_allclose(x[:, 0], [0.0, 0.25, 0.5], atol=1e-8)  # (x - 10) / 20
    np.testing.assert_allclose(x[:, 1], [0.0, 1.0, 2.0], atol=1e-8)  # outside [0, 1]
    pd.testing.assert_frame_equal(enc.inverse(x).drop(columns="y"), df.drop(columns="y"))
    # a sigmoid output of 0.9 decodes to 28 > max 20, and b can never exceed min + max = 0
    out = enc.inverse(np.array([[0.9, 0.999, 0.9]]))
    assert out["a"][0] == pytest.approx(28.0) and out["b"][0] < 0.0
    fixed = TuringEncoder(denominator="range").fit(df, None).transform(df)
    np.testing.assert_allclose(fixed[:, :2], [[0, 0], [0.5, 0.5], [1, 1]], atol=1e-8)


def test_integer_truncation_zeroes_a_binary_label():
    enc = TuringEncoder().fit(table(), None)
    u = np.linspace(0.001, 0.999, 999)
    x = np.tile(u[:, None], (1, 7))
    assert (enc.inverse(x)["label"] == 0).all()  # astype(int) of values in (0, 1)
    df = table(positives=0.5)
    trunc = Turing(teachers=2, max_iter=20).fit(df, epsilon=1.0, seed=0).sample(2000, seed=1)
    assert (trunc["label"] == 1).mean() < 0.01  # the study's AUROC 0.5: no positive rows
    rounded = Turing(teachers=2, max_iter=20, integers="round").fit(df, epsilon=1.0, seed=0)
    assert 0.2 < (rounded.sample(2000, seed=1)["label"] == 1).mean() < 0.8


def test_output_rows_are_shuffled():
    df = table()
    a = Turing(teachers=2, max_iter=5, shuffle=False).fit(df, epsilon=1.0, seed=0).sample(50, seed=1)
    b = Turing(teachers=2, max_iter=5).fit(df, epsilon=1.0, seed=0).sample(50, seed=1)
    assert not a.equals(b)
    key = list(df.columns)
    pd.testing.assert_frame_equal(a.sort_values(key).reset_index(drop=True),
                                  b.sort_values(key).reset_index(drop=True))


def test_schema_and_dtypes():
    df = table()
    out = Turing(teachers=2, max_iter=5).fit(df, epsilon=1.0, seed=0).sample(100, seed=1)
    assert list(out.columns) == list(df.columns) and (out.dtypes == df.dtypes).all()


def test_one_hot_and_extra_column_options():
    df = pd.DataFrame({"c": [0, 2, 5, 2], "x": [0.1, 0.2, 0.3, 0.4], "y": [0, 1, 0, 1]})
    meta = (ColumnMeta("c", "categorical", 0, 5, "public", (0.0, 2.0, 5.0)),)
    enc = TuringEncoder(one_hot=True, extra_column=True).fit(df, meta)
    x = enc.transform(df)
    assert x.shape == (4, 3 + 1 + 1 + 1)
    np.testing.assert_array_equal(x[:, :3], [[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 1, 0]])
    assert (x[:, -1] == 0).all()
    pd.testing.assert_frame_equal(enc.inverse(x), df)
    gen = Turing(teachers=2, max_iter=3, one_hot=True, extra_column=True)
    out = gen.fit(df.sample(40, replace=True, random_state=0), epsilon=1.0, seed=0,
                  columns=meta).sample(30, seed=1)
    assert set(out["c"]) <= {0, 2, 5} and list(out.columns) == ["c", "x", "y"]


def test_batched_equals_single():
    tables, seeds = [table(seed=1), table(n=170, seed=2), table(seed=3)], [4, 5, 6]
    for dtype, tol in (("float64", 1e-9), ("float32", 1e-6)):
        kw = dict(teachers=3, max_iter=6, dtype=dtype, integers="none")
        many = Turing(**kw).fit_many(tables, epsilon=1.0, seeds=seeds)
        for t, s, m in zip(tables, seeds, many):
            alone = Turing(**kw).fit(t, epsilon=1.0, seed=s)
            np.testing.assert_allclose(m.sample(40, seed=5).to_numpy(float),
                                       alone.sample(40, seed=5).to_numpy(float), rtol=0, atol=tol)


def test_presets():
    hp = Turing().resolve(686, 29)
    assert (hp.teachers, hp.batch, hp.max_iter, hp.shuffle_output) == (2, 128, 100, True)
    paper = Turing(preset="paper").resolve(686, 29)
    assert (paper.batch, paper.generator_widths) == (64, "d,d/2,d")


@pytest.mark.parametrize("kwargs", [{"delta_bug": "xor"}, {"integers": "ceil"}, {"lr": 0},
                                    {"bounds": "guess"}, {"gp_coef": -1}])
def test_bad_options_are_config_errors(kwargs):
    with pytest.raises(ConfigError):
        Turing(**kwargs)
