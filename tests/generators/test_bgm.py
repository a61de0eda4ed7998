"""synthcity's BGM / one-hot column encoding (raudit.generators.pategan.ports.synthcity.encoding)."""

import numpy as np
import pandas as pd
from sklearn.mixture import BayesianGaussianMixture

from raudit.generators.pategan.ports.synthcity.encoding import SynthcityEncoder, column_kinds


def table(n=300, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "cont": np.concatenate([rng.normal(0, 1, n // 2), rng.normal(10, 2, n - n // 2)]),
        "age": rng.integers(15, 80, size=n),  # > 10 distinct integers: BGM
        "cat": rng.integers(0, 7, size=n),  # <= 10 distinct: one-hot
        "label": (rng.random(n) < 0.3).astype(int),
    })


def test_layout_and_widths():
    df = table()
    enc = SynthcityEncoder().fit(df)
    assert column_kinds(df) == (("bgm", 5), ("bgm", 5), ("discrete", 7), ("discrete", 2))
    assert enc.layout == [("continuous", 1), ("component", 5), ("continuous", 1), ("component", 5),
                          ("discrete", 7), ("discrete", 2)]
    x = enc.transform(df)
    assert x.shape == (len(df), 6 + 6 + 7 + 2)
    assert enc.discrete_blocks() == [(12, 7), (19, 2)]
    assert enc.softmax_blocks() == [(1, 5), (7, 5), (12, 7), (19, 2)]
    assert np.all(np.abs(x[:, 0]) <= 0.99)  # the scalar is clipped to +/-0.99
    np.testing.assert_array_equal(x[:, 1:6].sum(1), 1)


def test_scalar_is_the_likeliest_component_in_four_sigmas():
    df = table()
    enc = SynthcityEncoder().fit(df)
    ref = BayesianGaussianMixture(n_components=5, random_state=0, weight_concentration_prior=1e-3)
    v = df["cont"].to_numpy().reshape(-1, 1)
    ref.fit(v)
    comp = ref.predict_proba(v).argmax(1)
    z = (v[:, 0] - ref.means_.ravel()[comp]) / (4 * np.sqrt(ref.covariances_.ravel()[comp]))
    x = enc.transform(df)
    np.testing.assert_allclose(x[:, 0], np.clip(z, -0.99, 0.99), rtol=1e-12)
    np.testing.assert_array_equal(x[:, 1:6].argmax(1), comp)


def test_round_trip():
    """decode(encode(df)) gives df back: one-hot exactly; BGM columns where the scalar was
    not clipped (|z| < 0.99), up to float error; integers come back exact with "round"
    and within 1 with upstream's astype (truncation of e.g. 36.9999999)."""
    df = table()
    enc = SynthcityEncoder(integers="round").fit(df)
    x = enc.transform(df)
    back = enc.inverse(x)
    assert list(back.columns) == list(df.columns) and (back.dtypes == df.dtypes).all()
    pd.testing.assert_series_equal(back["cat"], df["cat"])
    pd.testing.assert_series_equal(back["label"], df["label"])
    inside = np.abs(x[:, 0]) < 0.99
    np.testing.assert_allclose(back["cont"][inside], df["cont"][inside], rtol=1e-9, atol=1e-9)
    inside_age = np.abs(x[:, 6]) < 0.99
    np.testing.assert_array_equal(back["age"][inside_age], df["age"][inside_age])
    trunc = SynthcityEncoder().fit(df).inverse(x)
    assert (np.abs(trunc["age"] - df["age"])[inside_age] <= 1).all()


def test_decoding_clips_to_the_training_range_and_argmaxes_blocks():
    df = table()
    enc = SynthcityEncoder().fit(df)
    x = np.zeros((2, enc.width))
    x[:, 0] = [5.0, -5.0]  # beyond +/-1: clipped, then to [min, max]
    x[:, 1] = 1.0
    x[:, 7], x[:, 12 + 3], x[:, 19 + 1] = 1.0, 0.9, 0.6
    out = enc.inverse(x)
    assert df["cont"].min() <= out["cont"].min() and out["cont"].max() <= df["cont"].max()
    assert list(out["cat"]) == [3, 3] and list(out["label"]) == [1, 1]


def test_encoding_is_seeded():
    df = table(seed=4)
    np.testing.assert_array_equal(SynthcityEncoder().fit(df).transform(df),
                                  SynthcityEncoder().fit(df).transform(df))


def test_cached_fit_is_the_fit_of_the_same_column():
    """Two encoders of equal columns share one mixture; a changed column gets its own fit,
    and a cached fit encodes exactly as a fresh one (the cache is only a shortcut)."""
    from raudit.generators.pategan.ports.synthcity import encoding as bgm

    rng = np.random.default_rng(3)
    x = rng.normal(size=200)
    bgm._FITTED.clear()
    a = bgm.BgmColumn().fit(x)
    b = bgm.BgmColumn().fit(x.copy())
    assert a.model is b.model and len(bgm._FITTED) == 1
    y = x.copy()
    y[0] += 1.0
    c = bgm.BgmColumn().fit(y)
    assert c.model is not a.model and len(bgm._FITTED) == 2
    bgm._FITTED.clear()
    fresh = bgm.BgmColumn().fit(x)
    assert np.array_equal(fresh.transform(x), b.transform(x))
    assert np.array_equal(fresh.means, b.means) and np.array_equal(fresh.stds, b.stds)


def test_both_worlds_of_a_wide_table_stay_cached(monkeypatch):
    """An audit's chunks encode two tables (its worlds, one row apart) over and over; with
    isolet's 613 mixture columns each, both must stay in the cache, or every encoding
    refits all of them (the cache held 512 columns: an LRU cycled by more never hits)."""
    from raudit.generators.pategan.ports.synthcity import encoding as bgm

    fits = []

    def fake_fit(self, x):  # a stand-in mixture: only the count of fits matters here
        fits.append(1)
        self.means_, self.covariances_ = np.zeros((5, 1)), np.ones((5, 1, 1))
        return self
    monkeypatch.setattr(BayesianGaussianMixture, "fit", fake_fit)
    rng = np.random.default_rng(4)
    out_world = pd.DataFrame(rng.normal(size=(30, 620)), columns=[f"f{i}" for i in range(620)])
    in_world = pd.concat([out_world, out_world.iloc[[0]] + 1.0], ignore_index=True)
    bgm._FITTED.clear()
    for df in (out_world, in_world, out_world, in_world):
        SynthcityEncoder().fit(df)
    bgm._FITTED.clear()
    assert len(fits) == 2 * 620  # each world's columns fitted once
