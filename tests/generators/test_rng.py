"""The counter-based RNG: reference values, per-model independence of batch, distributions."""

import math

import numpy as np
import pytest
import torch

from raudit.generators.nn.rng import CounterRNG, splitmix64, stream_key

GOLDEN = 0x9E3779B97F4A7C15


def test_bits_match_scalar_splitmix64_reference():
    rng = CounterRNG([7])
    bits = rng._bits((5,))[0].tolist()
    key = stream_key(7)
    expected = [splitmix64((key + i * GOLDEN) % 2**64) for i in range(5)]
    assert [b % 2**64 for b in bits] == expected


def test_second_draw_continues_at_counter_offset():
    rng = CounterRNG([7])
    rng._bits((3,))
    bits = rng._bits((2,))[0].tolist()
    key = stream_key(7)
    expected = [splitmix64((key + ((1 << 32) + i) * GOLDEN) % 2**64) for i in range(2)]
    assert [b % 2**64 for b in bits] == expected


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_model_stream_does_not_depend_on_batch(dtype):
    alone, batch = CounterRNG([5], dtype=dtype), CounterRNG([1, 5, 9], dtype=dtype)
    for draw in ("uniform", "normal", "laplace"):
        a, b = getattr(alone, draw)(7, 3), getattr(batch, draw)(7, 3)
        assert torch.equal(a[0], b[1]), draw
    assert torch.equal(alone.permutation(11)[0], batch.permutation(11)[1])


def test_purposes_and_seeds_give_different_streams():
    a = CounterRNG([1]).uniform(100)
    assert not torch.equal(a, CounterRNG([2]).uniform(100))
    assert not torch.equal(a, CounterRNG([1], purpose="sample").uniform(100))


def test_distribution_moments():
    rng = CounterRNG([3], dtype=torch.float64)
    u = rng.uniform(200_000)[0].numpy()
    assert abs(u.mean() - 0.5) < 0.005 and abs(u.var() - 1 / 12) < 0.002
    assert u.min() >= 0 and u.max() < 1
    z = rng.normal(200_000)[0].numpy()
    assert abs(z.mean()) < 0.01 and abs(z.std() - 1) < 0.01
    lap = rng.laplace(200_000, scale=3.0)[0].numpy()
    assert abs(np.abs(lap).mean() - 3.0) < 0.05  # E|X| = b
    assert abs(lap.var() - 2 * 9.0) < 0.5  # Var = 2 b^2


def test_float32_uniform_is_uniform_and_below_one():
    u = CounterRNG([4]).uniform(100_001)[0].numpy()
    assert u.dtype == np.float32 and u.max() < 1 and u.min() >= 0
    assert abs(u.mean() - 0.5) < 0.005


def test_integers_and_permutation_respect_limits():
    rng = CounterRNG([1, 2])
    high = torch.tensor([[3], [10]])
    x = rng.integers(high, 1000)
    assert x[0].max() == 2 and x[1].max() == 9 and x.min() == 0
    perm = rng.permutation(8, valid=torch.tensor([5, 8]))
    assert sorted(perm[0, :5].tolist()) == list(range(5))
    assert sorted(perm[1].tolist()) == list(range(8))


def test_box_muller_tail_is_finite():
    z = CounterRNG([9], dtype=torch.float64).normal(1_000_000)
    assert torch.isfinite(z).all() and z.abs().max() < 7 * math.sqrt(2)


# -- statistical tests of the streams (fixed seeds; each check's tolerance is stated) --
# A correlation of independent streams over n pairs has sd 1/sqrt(n): 5 sd is the bound.

from scipy import stats  # noqa: E402

N = 100_000


@pytest.mark.parametrize("dtype,bits", [(torch.float32, 53), (torch.float64, 53), (torch.float64, 32)])
def test_uniforms_pass_ks_and_serial_chi2(dtype, bits):
    u = CounterRNG([11], dtype=dtype).uniform(N, bits=bits)[0].double().numpy()
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    # serial test: consecutive pairs fall evenly in a 16 x 16 grid (catches lag-1 structure)
    cells = (np.floor(u[0::2] * 16) * 16 + np.floor(u[1::2] * 16)).astype(int)
    counts = np.bincount(cells, minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-3


def test_normals_pass_ks_and_both_box_muller_halves_are_independent():
    z = CounterRNG([12], dtype=torch.float64).normal(N)[0].numpy()
    assert stats.kstest(z, "norm").pvalue > 1e-3
    h = N // 2  # the cos half and the sin half come from the same (r, theta) pairs
    a, b = z[:h], z[h:]
    bound = 5 / math.sqrt(h)
    assert abs(np.corrcoef(a, b)[0, 1]) < bound
    assert abs(np.corrcoef(a ** 2, b ** 2)[0, 1]) < bound  # r is shared: squares must not tie


def test_streams_are_uncorrelated_across_models_counters_and_positions():
    rng = CounterRNG(list(range(8)), dtype=torch.float64)
    first, second = rng.uniform(N), rng.uniform(N)
    bound = 5 / math.sqrt(N)
    corr = np.corrcoef(first.numpy())  # 8 models: every pair
    assert np.abs(corr[np.triu_indices(8, 1)]).max() < bound
    for m in range(8):  # the same model, next counter
        assert abs(np.corrcoef(first[m], second[m])[0, 1]) < bound
        x = first[m].numpy()  # neighbouring positions of one draw
        assert abs(np.corrcoef(x[:-1], x[1:])[0, 1]) < bound


def test_open_uniform_32_bits_stays_inside_the_open_interval_and_is_uniform():
    u = CounterRNG([14]).open_uniform(N, bits=32)[0].numpy()
    assert u.min() > 0 and u.max() < 1 and u.dtype == np.float64
    assert stats.kstest(u, "uniform").pvalue > 1e-3


def test_integers_are_uniform_over_their_range():
    x = CounterRNG([13]).integers(torch.tensor([[7]]), N)[0].numpy()
    assert stats.chisquare(np.bincount(x, minlength=7)).pvalue > 1e-3


def test_numpy_hash_and_uniforms_have_the_torch_bits():
    # the eager CPU draws run in C (native.c) where it is built, else in numpy (hash_np); the
    # torch functions are the reference.
    # Keys of both signs, counters up to 2^32 - 1, odd and even sizes, M = 1 and several.
    from raudit.generators.nn import rng as R
    seeds = [0, 1, 7, 2**31 - 1, 123456789]
    keys = torch.tensor([R._signed(R.stream_key(s, p)) for s in seeds for p in ("fit", "teacher")],
                        dtype=torch.int64)
    for k in (keys, keys[:1]):
        for counter, n in [(0, 1), (1, 2), (3, 7), (5, 320), ((1 << 31) + 3, 1857),
                           (2**32 - 1, 4097)]:
            pos = torch.arange(n, dtype=torch.int64) + R._signed(counter << 32)
            for fn in (R._hash_kernel, R._unit53, R._open53, R._unit32x2, R._unit24x2):
                got, want = fn(k, pos), fn.eager(k, pos)
                assert got.dtype == want.dtype and got.shape == want.shape
                assert torch.equal(got, want), (fn.eager.__name__, counter, n)


def test_draws_take_the_numpy_path_on_cpu_without_the_native_kernels(monkeypatch):
    from raudit.generators.nn import hash_np
    from raudit.generators.nn import rng as R
    calls = []
    real = hash_np.hash64
    monkeypatch.setattr(hash_np, "hash64", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(R, "_native_kernel", lambda name: None)
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    CounterRNG([3], dtype=torch.float32).uniform(5)
    assert calls == [1]


def test_draws_take_the_native_path_where_it_is_built(monkeypatch):
    from raudit.generators.nn import hash_np, native
    if native.lib() is None:
        pytest.skip("no C compiler here: the numpy path is the one taken")
    monkeypatch.setattr(hash_np, "hash64", lambda *a: pytest.fail("numpy hash called"))
    monkeypatch.setenv("RAUDIT_COMPILE", "0")
    CounterRNG([3], dtype=torch.float32).uniform(5)
    CounterRNG([3], dtype=torch.float64).normal(5)


def test_native_hash_and_uniforms_have_the_numpy_bits():
    # the C kernels (native.c) against the numpy ones, which the test above holds to torch's
    from raudit.generators.nn import hash_np, native
    from raudit.generators.nn import rng as R
    if native.lib() is None:
        pytest.skip("no C compiler here")
    keys = torch.tensor([R._signed(R.stream_key(s)) for s in (0, 5, 2**40 + 3)], dtype=torch.int64)
    pos = torch.arange(4097, dtype=torch.int64) + R._signed(((1 << 32) - 1) << 32)
    for name, fn in (("_hash", hash_np.bits), ("_unit53", hash_np.unit53), ("_open53", hash_np.open53),
                     ("_unit32x2", hash_np.unit32x2), ("_unit24x2", hash_np.unit24x2)):
        assert torch.equal(R._native_kernel(name)(keys, pos), fn(keys, pos)), name
