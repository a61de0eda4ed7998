"""raudit's C kernels (nn/native.py): torch's bits, or torch itself."""

import pytest
import torch

from raudit.generators.nn import native
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.ports.smartnoise.nets import ResidualGenerator

needs_lib = pytest.mark.skipif(native.lib() is None, reason="no C compiler here: torch is used")


def _block_inputs(groups, rows, cols, seed):
    g = torch.Generator().manual_seed(seed)
    scale = torch.logspace(-4, 4, groups * rows, dtype=torch.float64).view(groups, rows, 1)
    h = torch.randn(groups, rows, cols, dtype=torch.float64, generator=g) * scale - scale
    res = torch.randn(groups, rows, cols, dtype=torch.float64, generator=g)
    flat = torch.randn(groups, 2 * cols + 5, dtype=torch.float64, generator=g)
    return h, res, flat[:, :cols], flat[:, cols:2 * cols]


@needs_lib
@pytest.mark.parametrize("cols", [1, 2, 7, 29, 30, 64, 67])
def test_block_gives_torchs_bits_on_data_other_than_the_probe(cols):
    how = native.block_ok(cols, 0.2)
    assert how is not None
    h, res, gamma, beta = _block_inputs(5, 37, cols, seed=100 + cols)  # 37 rows: a short last 8
    for r in (res, None):
        got = h.clone()
        native.ln_leaky_block(got, r, gamma, beta, 0.2, how)
        want = native.reference_block(h.clone(), r, gamma, beta, native.leaky_(0.2))
        assert torch.equal(got.view(torch.int64), want.view(torch.int64))


@needs_lib
def test_rows_wider_than_one_aten_chunk_stay_with_torch():
    assert native.block_ok(68, 0.2) is None and native.block_ok(200, 0.2) is None


def test_switched_off_means_no_library(monkeypatch):
    native.lib.cache_clear()
    monkeypatch.setenv("RAUDIT_NATIVE", "0")
    try:
        assert native.lib() is None and native.hash_kernel("bits", torch.int64, False) is None
    finally:
        native.lib.cache_clear()


def test_a_failed_build_warns_and_leaves_torch(monkeypatch):
    native.lib.cache_clear()

    def broken(cc):
        raise OSError("no linker")
    monkeypatch.setattr(native, "_build", broken)
    monkeypatch.setattr(native, "_compiler", lambda: "/usr/bin/cc")
    try:
        with pytest.warns(UserWarning, match="native kernels"):
            assert native.lib() is None
    finally:
        native.lib.cache_clear()


@pytest.mark.parametrize("binary", [False, True])
def test_generator_rows_without_gradients_are_the_same_either_way(binary, monkeypatch):
    # smartnoise's no-gradient forward (the teachers' and votes' fakes) with the C block and
    # with torch's four calls: the same bits (binary=True, Tanh, always takes torch)
    net = ResidualGenerator(64, 29, binary)
    rng = CounterRNG(list(range(6)), dtype=torch.float64)
    p = net.create(rng)
    with torch.no_grad():
        p.flat.add_(torch.randn(p.flat.shape, dtype=torch.float64,
                                generator=torch.Generator().manual_seed(1)) * 0.1)
        z = rng.uniform(300, 64, bits=32)
        fast = net(p, z)
        monkeypatch.setattr(native, "block_ok", lambda cols, slope: None)
        slow = net(p, z)
    assert torch.equal(fast.view(torch.int64), slow.view(torch.int64))
    with_grad = net(p, z)  # the autograd forward, the reference the fused path came from
    assert torch.equal(with_grad.detach().view(torch.int64), slow.view(torch.int64))
