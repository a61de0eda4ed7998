"""Stacked layers give each group the same bits whatever else shares the call: chunking
must never change a result. (A GEMM over the distinct rows of a chunk was tried for
the logistic teachers and dropped: its rounding depended on the chunk's sizes.)"""

import torch

from raudit.generators.nn.stacked import linear


def _rand(*shape, seed):
    return torch.rand(*shape, generator=torch.Generator().manual_seed(seed))


def test_width_one_layer_matches_bmm_and_is_bit_identical_in_any_batch():
    x, w, b = _rand(2, 64, 29, seed=0), _rand(2, 29, 1, seed=1), _rand(2, 1, seed=2)
    alone = linear(x, w, b)
    torch.testing.assert_close(alone, torch.baddbmm(b.unsqueeze(1), x, w), rtol=1e-5, atol=1e-6)
    big_x, big_w, big_b = _rand(640, 64, 29, seed=3), _rand(640, 29, 1, seed=4), _rand(640, 1, seed=5)
    big_x[7:9], big_w[7:9], big_b[7:9] = x, w, b
    assert torch.equal(linear(big_x, big_w, big_b)[7:9], alone)


def test_wider_layers_are_bit_identical_in_any_batch():
    x, w, b = _rand(3, 64, 29, seed=6), _rand(3, 29, 14, seed=7), _rand(3, 14, seed=8)
    alone = linear(x, w, b)
    big_x, big_w, big_b = _rand(128, 64, 29, seed=9), _rand(128, 29, 14, seed=10), _rand(128, 14, seed=11)
    big_x[100:103], big_w[100:103], big_b[100:103] = x, w, b
    assert torch.equal(linear(big_x, big_w, big_b)[100:103], alone)
