"""smartnoise's generator step by hand (ResidualGenerator.hand_grad through the student's
input gradient, mlp_grad.bce_input_grad) against autograd, to the last bit."""

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.generators.nn import mlp_grad
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.core import nets as pate_nets
from raudit.generators.pategan.core.teachers import bce_logits
from raudit.generators.pategan.ports.smartnoise.nets import ResidualGenerator, discriminator


def _nets(m: int, latent: int, d: int, seed: int):
    """A generator and a student of m models, the generator's gamma and beta moved off 1 and
    0 (so the affine's gradient paths are not trivial), and the student fixed (loop.py's judge)."""
    gen_net, student = ResidualGenerator(latent, d), discriminator(d)
    rng = CounterRNG(list(range(seed, seed + m)), dtype=torch.float64)
    gen, s = gen_net.create(rng), student.create(rng)
    noise = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        gen.flat.add_(torch.randn(gen.flat.shape, dtype=torch.float64, generator=noise) * 0.3)
    return gen_net, student, gen, Stacked(s.flat.detach(), s.layout), noise


def _autograd(gen_net, student, gen, judge, z):
    """loop.py's generator step under autograd: the mean BCE(S(G(z)), 1) per model, summed."""
    gen.flat.grad = None
    bce_logits(student(judge, gen_net(gen, z), logits=True), 1.0).backward()
    return gen.flat.grad.clone()


# (models, batch, latent, columns): the advertised audit's (64 rows, latent 64, d 30), a
# batch that is not whole SIMD blocks, columns wider than the latent and narrower, M = 1
@pytest.mark.parametrize("m,b,latent,d", [(3, 64, 64, 30), (5, 7, 13, 9), (2, 64, 16, 40),
                                          (4, 16, 5, 3), (1, 64, 64, 31)])
def test_hand_gradient_is_autograds_bit_for_bit(m, b, latent, d):
    gen_net, student, gen, judge, noise = _nets(m, latent, d, seed=m * 100 + d)
    for scale in (1.0, 1e3):  # and rows far from the layer norm's unit scale
        z = torch.rand(m, b, latent, dtype=torch.float64, generator=noise) * scale
        want = _autograd(gen_net, student, gen, judge, z)
        got = gen_net.hand_grad(gen, z, lambda x, lo, hi: mlp_grad.bce_input_grad(student, judge, x, 1.0, 1.0 / b))
        assert torch.equal(got.view(torch.int64), want.view(torch.int64))


@pytest.mark.parametrize("block", [1, 3, 16])
def test_blocks_of_models_give_autograds_bits(block, monkeypatch):
    # 10 models of 64 rows (the loop's batch) in blocks of 1, 3 (a short last one) and 16
    # (one block): each block's generator and student kernels see only its models
    monkeypatch.setattr(pate_nets, "GENERATOR_BLOCK", block)
    gen_net, student, gen, judge, noise = _nets(10, 64, 30, seed=block)
    z = torch.rand(10, 64, 64, dtype=torch.float64, generator=noise)
    nets = pate_nets.PateNets(generator=gen_net, student=student, teacher=student)
    seen = []
    real = mlp_grad.bce_input_grad

    def spy(net, p, x, target, weight):
        seen.append(p.groups)
        return real(net, p, x, target, weight)
    monkeypatch.setattr(mlp_grad, "bce_input_grad", spy)
    got = nets.generator_grad(gen, judge, z)
    assert seen == [min(block, 10 - lo) for lo in range(0, 10, block)]
    want = _autograd(gen_net, student, gen, judge, z)
    assert torch.equal(got.view(torch.int64), want.view(torch.int64))


def test_pate_nets_take_the_hand_path_only_where_it_is_autograds():
    gen_net, student, gen, judge, noise = _nets(2, 8, 6, seed=1)
    z = torch.rand(2, 64, 8, dtype=torch.float64, generator=noise)
    nets = pate_nets.PateNets(generator=gen_net, student=student, teacher=student)
    got = nets.generator_grad(gen, judge, z)
    assert got is not None
    assert torch.equal(got.view(torch.int64), _autograd(gen_net, student, gen, judge, z).view(torch.int64))
    tanh = ResidualGenerator(8, 6, binary=True)  # Tanh blocks: autograd
    assert pate_nets.PateNets(generator=tanh, student=student, teacher=student) \
        .generator_grad(tanh.create(CounterRNG([0, 1], dtype=torch.float64)), judge, z) is None

    class Relabelled(pate_nets.PateNets):  # another generate: autograd
        def generate(self, p, z):
            return super().generate(p, z)
    assert Relabelled(generator=gen_net, student=student, teacher=student).generator_grad(gen, judge, z) is None


def test_smartnoise_trains_to_the_same_bits_with_the_hand_generator_step(monkeypatch):
    # three models (two tables), five iterations of batch 64 and one of 7: every generator step
    # by hand against every one by autograd, the rest of the loop the same
    rng = np.random.default_rng(6)
    df = pd.DataFrame(rng.normal(size=(300, 7)), columns=list("abcdefg"))
    df["label"] = (rng.random(300) < 0.4).astype(int)
    calls = []
    real = pate_nets.PateNets.generator_grad

    def spy(self, gen, judge, z):
        out = real(self, gen, judge, z)
        calls.append(out is not None)
        return out

    def fit(batch):
        gen = generators.get("smartnoise")(teachers=2, batch=batch, max_iter=5, latent_dim=16)
        fitted = gen.fit_many([df, df.iloc[:290], df], epsilon=1e9, seeds=[1, 2, 3])
        return torch.cat([f._batch.trained.generator.flat.detach().flatten() for f in fitted])

    for batch in (64, 7):
        monkeypatch.setattr(pate_nets.PateNets, "generator_grad", spy)
        hand = fit(batch)
        assert calls and all(calls)
        monkeypatch.setattr(pate_nets.PateNets, "generator_grad", lambda *a: None)
        ref = fit(batch)
        assert torch.equal(hand.view(torch.int64), ref.view(torch.int64))
        calls.clear()
