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
