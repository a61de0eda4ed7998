"""The teachers' gradient by hand (nn/mlp_grad.py) against autograd, to the last bit."""

import numpy as np
import pandas as pd
import pytest
import torch
import torch.nn.functional as F

from raudit import generators
from raudit.generators.nn import mlp_grad
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core import teachers as teachers_mod
from raudit.generators.pategan.ports.smartnoise.nets import discriminator
from raudit.generators.pategan.core.teachers import bce_logits


def _autograd(net, p, real, fake, valid):
    """LocalTeachers' autograd joint loss: the real half a masked mean (partial batches)."""
    p.flat.grad = None
    per = F.binary_cross_entropy_with_logits(*(lambda z: (z, torch.ones_like(z)))(
        net(p, real, logits=True)), reduction="none")
    real_loss = ((per.squeeze(-1) * valid).sum(1) / valid.sum(1).clamp(min=1)).sum()
    (real_loss + bce_logits(net(p, fake, logits=True), 0.0)).backward()
    return p.flat.grad.clone()


@pytest.mark.parametrize("block_rows", [mlp_grad.BLOCK_ROWS, 1, 150])
@pytest.mark.parametrize("d,b", [(30, 64), (13, 7), (6, 5)])
def test_bce_grad_is_autograds_bit_for_bit(d, b, block_rows, monkeypatch):
    # in blocks of whole models (3 teachers each) too: one model a block, or several
    monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", block_rows)
    g = 12
    net = discriminator(d)
    p = net.create(CounterRNG(list(range(g)), dtype=torch.float64))
    gen = torch.Generator().manual_seed(d)
    real = torch.randn(g, b, d, dtype=torch.float64, generator=gen)
    fake = torch.randn(g, b, d, dtype=torch.float64, generator=gen) * 3
    sizes = torch.randint(1, 2 * b, (g, 1), generator=gen)  # some partitions shorter than b
    valid = (torch.arange(b)[None, :] < sizes).to(torch.float64)
    want = _autograd(net, p, real, fake, valid)
    weight = ((torch.ones(g, dtype=torch.float64) / valid.sum(1).clamp(min=1))[:, None]
              .expand(g, b) * valid).unsqueeze(-1)
    got = mlp_grad.bce_grad(net, p, [(real, 1.0, weight), (fake, 0.0, 1.0 / b)], align=3)
    assert torch.equal(got.view(torch.int64), want.view(torch.int64))


@pytest.mark.parametrize("d", [13, 29, 50])
def test_blocks_of_whole_models_give_one_blocks_bits(d, monkeypatch):
    # 40 models of 4 teachers, batch 64: blocks of 1, 3 (a short last one) and 16 models
    g, b, k = 160, 64, 4
    net = discriminator(d)
    p = net.create(CounterRNG(list(range(g)), dtype=torch.float64))
    gen = torch.Generator().manual_seed(d)
    real = torch.randn(g, b, d, dtype=torch.float64, generator=gen)
    fake = torch.randn(g, b, d, dtype=torch.float64, generator=gen) * 3
    halves = [(real, 1.0, 1.0 / b), (fake, 0.0, 1.0 / b)]
    whole = mlp_grad.bce_grad(net, p, halves)
    for models in (1, 3, 16):
        monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", models * k * b)
        got = mlp_grad.bce_grad(net, p, halves, align=k)
        assert torch.equal(got.view(torch.int64), whole.view(torch.int64)), models


@pytest.mark.parametrize("b", [64, 7])
@pytest.mark.parametrize("block_rows", [mlp_grad.BLOCK_ROWS, 640])
def test_one_half_with_labels_is_the_students_autograd(b, block_rows, monkeypatch):
    # the student's step (pategan/core/loop.py): one batch of fakes, a 0/1 label per row, the mean BCE;
    # 40 models in blocks of 10 (labels cut with the rows) where the batch allows blocks
    monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", block_rows)
    g, d = 40, 29
    net = discriminator(d)
    p = net.create(CounterRNG(list(range(g)), dtype=torch.float64))
    gen = torch.Generator().manual_seed(b)
    fake = torch.randn(g, b, d, dtype=torch.float64, generator=gen)
    target = (torch.rand(g, b, 1, generator=gen) < 0.3).to(torch.float64)
    p.flat.grad = None
    bce_logits(net(p, fake, logits=True), target).backward()
    got = mlp_grad.bce_grad(net, p, [(fake, target, 1.0 / b)], align=1)
    assert torch.equal(got.view(torch.int64), p.flat.grad.view(torch.int64))


def test_supported_only_where_it_is_autograds():
    cpu = torch.device("cpu")
    assert mlp_grad.supported(discriminator(30), cpu)
    assert not mlp_grad.supported(MLP([30, 20, 1], ["relu", "sigmoid"]), cpu)  # borealis's
    assert not mlp_grad.supported(MLP([30, 1], ["sigmoid"]), cpu)  # a logistic teacher
    assert not mlp_grad.supported(discriminator(4), cpu)  # a hidden layer of width 1 (4 // 3)
    assert not mlp_grad.supported(discriminator(30), torch.device("meta"))
    with pytest.raises(ValueError):
        mlp_grad.bce_grad(discriminator(6), discriminator(6).create(CounterRNG([0])), [])


def test_smartnoise_trains_to_the_same_bits_with_autograd(monkeypatch):
    rng = np.random.default_rng(3)
    df = pd.DataFrame(rng.normal(size=(90, 5)), columns=list("abcde"))
    df["label"] = (rng.random(90) < 0.4).astype(int)
    # batch 32 > 90 // 4 rows per teacher: partial real batches, the masked mean
    kw = dict(teachers=4, batch=32, max_iter=3, latent_dim=8)

    def fit():
        gen = generators.get("smartnoise")(**kw)
        fitted = gen.fit_many([df, df.iloc[:80]], epsilon=1e9, seeds=[1, 2])
        return fitted[0]._batch.trained.generator.flat.detach().clone()

    monkeypatch.setattr(teachers_mod, "HAND_GRAD", True)
    hand = fit()
    monkeypatch.setattr(teachers_mod, "HAND_GRAD", False)
    ref = fit()
    assert torch.equal(hand.view(torch.int64), ref.view(torch.int64))


def test_halves_made_per_block_give_the_whole_halves_bits(monkeypatch):
    # 10 models of 4 teachers, batch 64, blocks of 3 models (a short last one): each half
    # made per block (mlp_grad.Blockwise) is asked for whole models only, and the gradient
    # is the one of the whole tensors
    g, b, k, d = 40, 64, 4, 29
    monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", 3 * k * b)
    net = discriminator(d)
    p = net.create(CounterRNG(list(range(g)), dtype=torch.float64))
    gen = torch.Generator().manual_seed(5)
    real = torch.randn(g, b, d, dtype=torch.float64, generator=gen)
    fake = torch.randn(g, b, d, dtype=torch.float64, generator=gen) * 3
    weight = torch.rand(g, b, 1, dtype=torch.float64, generator=gen)
    whole = mlp_grad.bce_grad(net, p, [(real, 1.0, weight), (fake, 0.0, 1.0 / b)], align=k)
    asked = []

    def made(x):
        def make(lo, hi):
            asked.append((lo, hi))
            return x[lo:hi].clone()
        return mlp_grad.Blockwise(b, make)

    got = mlp_grad.bce_grad(net, p, [(made(real), 1.0, weight), (made(fake), 0.0, 1.0 / b)], align=k)
    assert torch.equal(got.view(torch.int64), whole.view(torch.int64))
    assert sorted(set(asked)) == [(0, 12), (12, 24), (24, 36), (36, 40)]
    assert len(asked) == 8  # each half once per block


def test_smartnoise_fakes_made_per_block_train_to_the_same_bits(monkeypatch):
    # batch 64: the teachers' gradient in blocks of one model, each block's fakes generated
    # there (pate_nets.TeacherFakes), against autograd on the whole round's fakes
    from raudit.generators.pategan.core import nets as pate_nets
    rng = np.random.default_rng(4)
    df = pd.DataFrame(rng.normal(size=(400, 11)), columns=list("abcdefghijk"))
    df["label"] = (rng.random(400) < 0.5).astype(int)
    kw = dict(teachers=3, batch=64, max_iter=3, latent_dim=8)
    blocks, teachers = [], []
    real_call, real_votes = pate_nets.TeacherFakes.__call__, teachers_mod.LocalTeachers.votes

    def spy(self, lo, hi):
        blocks.append((lo, hi))
        return real_call(self, lo, hi)

    def votes(self, fake):  # the teachers' parameters as each vote sees them
        teachers.append(self.params.flat.detach().clone())
        return real_votes(self, fake)

    def fit():
        teachers.clear()
        gen = generators.get("smartnoise")(**kw)
        fitted = gen.fit_many([df, df.iloc[:390], df], epsilon=1e9, seeds=[1, 2, 3])
        return torch.cat([fitted[0]._batch.trained.generator.flat.detach().flatten(),
                          *(t.flatten() for t in teachers)])

    monkeypatch.setattr(pate_nets.TeacherFakes, "__call__", spy)
    monkeypatch.setattr(teachers_mod.LocalTeachers, "votes", votes)
    monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", 3 * 64)
    monkeypatch.setattr(teachers_mod, "HAND_GRAD", True)
    blocked = fit()
    assert (0, 1) in blocks and (2, 3) in blocks  # made per model
    monkeypatch.setattr(teachers_mod, "HAND_GRAD", False)
    blocks.clear()
    ref = fit()
    assert blocks and set(blocks) == {(0, 3)}  # made whole for autograd
    assert torch.equal(blocked.view(torch.int64), ref.view(torch.int64))


@pytest.mark.parametrize("b", [64, 7])
def test_votes_in_blocks_of_models_are_the_whole_votes(b, monkeypatch):
    # 11 models of 5 teachers, blocks of 3 models (a short last one) where the batch is a
    # multiple of 64 rows; batch 7 stays whole. Logits scaled near 0, so that a different
    # rounding anywhere would flip votes
    m, k, d = 11, 5, 29
    net = discriminator(d)
    rng = CounterRNG(list(range(m * k)), dtype=torch.float64)
    teachers = object.__new__(teachers_mod.LocalTeachers)
    teachers.net, teachers.k, teachers.params = net, k, net.create(rng)
    fake = torch.randn(m, b, d, dtype=torch.float64, generator=torch.Generator().manual_seed(b)) * 1e-3
    whole = teachers._votes(teachers.params, fake)
    calls = []
    real = teachers._votes
    teachers._votes = lambda p, x: calls.append(x.shape[0]) or real(p, x)
    monkeypatch.setattr(mlp_grad, "BLOCK_ROWS", 3 * k * b)
    got = teachers.votes(fake)
    assert torch.equal(got, whole)
    assert calls == ([3, 3, 3, 2] if b == 64 else [m])
    if b == 64:  # and the probabilities themselves, a block's against the whole's
        part = Stacked(teachers.params.flat.detach()[3 * k:6 * k], teachers.params.layout)
        with torch.no_grad():
            a = net(part, fake[3:6], shared=k)
            w = net(teachers.params, fake, shared=k)[3 * k:6 * k]
        assert torch.equal(a.view(torch.int64), w.view(torch.int64))


@pytest.mark.parametrize("d,b,k", [(30, 64, 5), (32, 64, 5), (13, 7, 3), (6, 5, 1)])
def test_votes_forward_is_the_mlps_bit_for_bit(d, b, k):
    # probs_shared (bmm, bias and activation in place) against MLP.__call__ (baddbmm, out of
    # place), the votes' reference; inputs over twelve orders of magnitude
    m = 4
    net = discriminator(d)
    p = net.create(CounterRNG(list(range(m * k)), dtype=torch.float64))
    gen = torch.Generator().manual_seed(d + b)
    scale = torch.logspace(-6, 6, m * b, dtype=torch.float64).view(m, b, 1)
    x = torch.randn(m, b, d, dtype=torch.float64, generator=gen) * scale
    with torch.no_grad():
        want = net(p, x, shared=k)
        got = mlp_grad.probs_shared(net, p, x, k)
        assert torch.equal(got, want)
        if k == 1:
            return
        xs = x.repeat_interleave(k, dim=0)  # one batch per teacher: the unshared first layer
        assert torch.equal(mlp_grad.probs_shared(net, p, xs, 1), net(p, xs))


@pytest.mark.parametrize("g,b,i,o", [(60, 64, 32, 21), (60, 64, 21, 10), (12, 64, 32, 105), (7, 7, 29, 19)])
def test_hidden_is_baddbmm_then_leaky_relu(g, b, i, o):
    gen = torch.Generator().manual_seed(g * o)
    for s in (1e-6, 1.0, 1e6):
        x = torch.randn(g, b, i, dtype=torch.float64, generator=gen) * s
        w = torch.randn(g, i, o, dtype=torch.float64, generator=gen)
        bias = torch.randn(g, o, dtype=torch.float64, generator=gen) * s
        want = F.leaky_relu(torch.baddbmm(bias.unsqueeze(1), x, w), mlp_grad.SLOPE)
        assert torch.equal(mlp_grad.hidden_(x, w, bias), want)
