"""The generator contract, run over every registered generator (ports plug in here unchanged)."""

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError, DataError
from raudit.generators.base import Generator

# Enough iterations to exercise the loops, few enough to keep the suite fast.
FAST = {"max_iter": 3}
# gpate's default noise (sigma1 = 0.75 k) with 2 teachers cannot pay for one step at eps 5
# (it refuses, naming the eps that could): 2 queries per step at sigma 4 can.
FAST_FOR = {"gpate": {"batch": 2, "k_proj": 1, "sigma1": 4.0, "sigma2": 4.0}}
BINARY_ONLY = {"randomized-response"}


def small_table(binary: bool = False, n: int = 80, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    if binary:
        df = pd.DataFrame(rng.integers(0, 2, size=(n, 4)), columns=["a", "b", "c", "d"])
    else:
        df = pd.DataFrame({"x": rng.normal(size=n), "u": rng.uniform(2, 5, size=n),
                           "n": rng.integers(0, 7, size=n)})
    df["label"] = (np.arange(n) % 3 == 0).astype(int)
    return df


def make(name: str) -> Generator:
    cls = generators.get(name)
    caps = cls.describe()
    kwargs = {k: v for k, v in FAST.items() if caps.options is not None and caps.accepts(k)}
    if caps.options is not None and caps.accepts("teachers"):
        kwargs["teachers"] = 2
    return cls(**{**kwargs, **FAST_FOR.get(name, {})})


@pytest.fixture(params=generators.names())
def name(request):
    return request.param


def test_fit_sample_round_trip(name):
    df = small_table(binary=name in BINARY_ONLY)
    gen = make(name).fit(df, epsilon=5.0, seed=1, columns=infer_columns(df))
    out = gen.sample(50, seed=2)
    assert isinstance(out, pd.DataFrame) and len(out) == 50
    assert list(out.columns) == list(df.columns)
    assert not out.isna().to_numpy().any()
    assert set(out["label"].unique()) <= {0, 1}
    s = gen.summary()
    assert "iterations" in s and "eps_hat" in s


def test_same_seed_same_output(name):
    df = small_table(binary=name in BINARY_ONLY)
    a = make(name).fit(df, epsilon=5.0, seed=3).sample(30, seed=4)
    b = make(name).fit(df, epsilon=5.0, seed=3).sample(30, seed=4)
    pd.testing.assert_frame_equal(a, b)


def test_fit_many_matches_fit(name):
    tables = [small_table(binary=name in BINARY_ONLY, seed=s) for s in (1, 2)]
    many = make(name).fit_many(tables, epsilon=5.0, seeds=[5, 6])
    alone = make(name).fit(tables[1], epsilon=5.0, seed=6)
    # exact: a model's bits do not depend on its chunk (tests/generators/test_chunk_invariance.py)
    np.testing.assert_array_equal(many[1].sample(20, seed=0).to_numpy(float),
                                  alone.sample(20, seed=0).to_numpy(float))


def test_one_table_m_times_equals_m_copies_bit_for_bit(name):
    # An audit chunk passes one table object M times and the set-up (checks, encoder
    # fits, encodings) runs once for it; M distinct copies take the per-model path.
    df = small_table(binary=name in BINARY_ONLY)
    cols = infer_columns(df)
    shared = make(name).fit_many([df] * 3, epsilon=5.0, seeds=[7, 8, 9], columns=cols)
    copies = make(name).fit_many([df.copy() for _ in range(3)], epsilon=5.0, seeds=[7, 8, 9],
                                 columns=cols)
    for a, b in zip(shared, copies):
        pd.testing.assert_frame_equal(a.sample(25, seed=1), b.sample(25, seed=1), check_exact=True)
        sa, sb = a.summary(), b.summary()
        assert sa["iterations"] == sb["iterations"]
        assert sa["eps_hat"] == sb["eps_hat"] or (np.isnan(sa["eps_hat"]) and np.isnan(sb["eps_hat"]))
    batch = getattr(shared[0], "_batch", None)
    if batch is not None and getattr(batch.encoders[0], "shareable", False):
        assert batch.encoders[0] is batch.encoders[2]  # one fit, shared


def test_rejects_bad_privacy_and_bad_tables(name):
    df = small_table(binary=name in BINARY_ONLY)
    with pytest.raises(ConfigError):
        make(name).fit(df, epsilon=0.0)
    with pytest.raises(ConfigError):
        make(name).fit(df, epsilon=1.0, delta=1.0)
    with pytest.raises(DataError):
        make(name).fit(df.iloc[:0], epsilon=1.0)
    with pytest.raises(DataError):
        make(name).fit(df.assign(label=0), epsilon=1.0)


def test_registry_unknown_name_lists_known():
    with pytest.raises(KeyError, match="known: .*paper"):
        generators.get("nope")


def test_register_plugin_and_duplicate_names():
    class Mine(generators.get("identity")):
        name = "contract-test-plugin"
    generators.register(Mine)
    assert generators.get("contract-test-plugin") is Mine
    with pytest.raises(ConfigError, match="already registered"):
        generators.register(Mine)
    with pytest.raises(ConfigError, match="module:Class"):
        generators.load_class("nocolon")
