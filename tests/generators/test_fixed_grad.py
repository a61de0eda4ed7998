"""`fixed`'s joint-critic teachers by hand (pategan/fixed/grad.py) against autograd, to the bit."""

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.fixed import grad as fixed_grad
from raudit.generators.pategan.core import teachers as teachers_mod
from raudit.generators.pategan.fixed.nets import JointCritic
from raudit.generators.pategan.core.teachers import LocalTeachers, TeacherTraining, teacher_rng
from raudit.generators.pategan.core.partitions import iid_partition


def _bits(t: torch.Tensor) -> torch.Tensor:
    return t.detach().contiguous().view(torch.int64 if t.dtype == torch.float64 else torch.int32)


def _rows(gen, *shape, dtype):
    x = torch.rand(*shape, generator=gen, dtype=dtype)
    x[..., -1] = (x[..., -1] > 0.6).to(dtype)  # the label, last
    return x


def _teachers(m, k, n, d, dtype, batch, hidden):
    gen = torch.Generator().manual_seed(m * 100 + k)
    x = _rows(gen, m, n, d, dtype=dtype)
    rng = CounterRNG(list(range(m)), purpose="pategan", dtype=dtype)
    parts, sizes = iid_partition(rng, torch.full((m,), n), n, k)
    net = JointCritic([d] + hidden + [1], ["relu"] * len(hidden) + ["sigmoid"])
    return gen, LocalTeachers(net, teacher_rng(list(range(m)), k, dtype=dtype), x, parts, sizes,
                              TeacherTraining(batch, 1e-3, sample="first-shuffled",
                                              partial_batch=True))


def _run(hand: bool, monkeypatch, **kw):
    """Three teacher steps, each followed by two vote rounds (fixed's loop): params and votes."""
    monkeypatch.setattr(teachers_mod, "HAND_GRAD", hand)
    gen, t = _teachers(**kw)
    m, d, dtype = kw["m"], kw["d"], kw["dtype"]
    votes = []
    for _ in range(3):
        t.step(_rows(gen, m, kw["batch"], d, dtype=dtype), None)
        for _ in range(2):
            q = _rows(gen, m, 5, d, dtype=dtype)
            if hand:
                votes.append(t.votes(q))
            else:  # the votes without the cached first layer: MLP's own shared forward
                with torch.no_grad():
                    p = super(JointCritic, t.net).__call__(t.params, t.net.joint(q), shared=t.k)
                votes.append((p.squeeze(-1) > 0.5).view(m, t.k, -1).sum(dim=1))
                assert torch.equal(votes[-1], t.votes(q))
    logits = t.net(t.params, _rows(gen, m, 4, d, dtype=dtype), logits=True, shared=t.k)
    return t.params.flat.detach().clone(), torch.stack(votes), logits


@pytest.mark.parametrize("m,k,n,d,batch,hidden,dtype", [
    (1, 7, 60, 9, 16, [4], torch.float32),     # partitions of ~8 rows: partial batches
    (2, 5, 400, 13, 16, [6], torch.float32),   # full batches
    (3, 4, 50, 11, 7, [5], torch.float64),     # an odd batch, float64
    (2, 3, 90, 8, 16, [6, 3], torch.float32),  # two hidden layers
    (1, 64, 900, 9, 16, [4], torch.float32),  # G x P a multiple of 64: no Adam tail
])
def test_hand_steps_and_cached_votes_are_autograds_bits(m, k, n, d, batch, hidden, dtype,
                                                        monkeypatch):
    kw = dict(m=m, k=k, n=n, d=d, dtype=dtype, batch=batch, hidden=hidden)
    want = _run(False, monkeypatch, **kw)
    got = _run(True, monkeypatch, **kw)
    for a, b in zip(got, want):
        assert torch.equal(_bits(a), _bits(b))


def test_kept_permuted_layer_lives_from_the_votes_to_the_next_step():
    # the votes make it, the two vote rounds and the next step share it, the step drops it
    _, t = _teachers(m=1, k=3, n=40, d=6, dtype=torch.float32, batch=8, hidden=[4])
    assert t._first is None
    t.votes(torch.rand(1, 5, 6))
    kept = t._first
    assert kept is not None
    t.votes(torch.rand(1, 5, 6))
    assert t._first is kept
    t.step(torch.rand(1, 8, 6), None)
    assert t._first is None
    t.votes(torch.rand(1, 5, 6))
    fresh = fixed_grad.shared_first(t.params, 3)
    assert not torch.equal(t._first[0], kept[0]) and torch.equal(t._first[0], fresh[0])


def test_only_relu_critics_on_cpu():
    assert fixed_grad.supported(JointCritic([9, 4, 1], ["relu", "sigmoid"]), torch.device("cpu"))
    assert not fixed_grad.supported(JointCritic([9, 4, 1], ["leaky_relu", "sigmoid"]),
                                    torch.device("cpu"))
    assert not fixed_grad.supported(JointCritic([9, 4, 1], ["relu", "sigmoid"]),
                                    torch.device("meta"))


def test_joint_fit_is_autograds_bit_for_bit(monkeypatch):
    # fixed -o critic=joint end to end, two models, hand path against RAUDIT_HAND_GRAD=0
    rng = np.random.default_rng(3)
    x = rng.normal(size=(120, 5))
    table = pd.DataFrame(x, columns=[f"f{i}" for i in range(5)]).assign(
        label=(x[:, 0] > 0).astype(int))
    out = []
    for hand in (False, True):
        monkeypatch.setattr(teachers_mod, "HAND_GRAD", hand)
        g = generators.get("fixed")(critic="joint", iterations=6, teachers=6, batch=16,
                                    teacher_steps=2, query_batch=8)
        models = g.fit_many([table, table], epsilon=10.0, delta=1e-5, seeds=[1, 2])
        out.append([m.sample(50, seed=7).to_numpy() for m in models])
    for a, b in zip(*out):
        assert np.array_equal(a, b)
