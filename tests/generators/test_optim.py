"""Masked per-model optimisers: equal to torch's for one model; stopped models stay put."""

import torch

from raudit.generators.nn.optim import Adam
from raudit.generators.nn.stacked import Stacked


def _stacked(values):
    return Stacked.create({"w": (values.shape[1],)}, {"w": values})


def _loss(p):
    w = p["w"]
    return ((w - torch.arange(w.shape[1], dtype=w.dtype)) ** 2).sum(1).sum()


def test_adam_matches_torch_for_one_model():
    init = torch.randn(1, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    ours = _stacked(init)
    opt = Adam(ours, lr=0.01, betas=(0.5, 0.999))
    ref = init.clone().requires_grad_(True)
    ref_opt = torch.optim.Adam([ref], lr=0.01, betas=(0.5, 0.999))
    for _ in range(25):
        opt.zero_grad(); _loss(ours).backward(); opt.step()
        ref_opt.zero_grad(); ((ref - torch.arange(6.0, dtype=ref.dtype)) ** 2).sum().backward()
        ref_opt.step()
    assert torch.allclose(ours.flat, ref, atol=1e-12)


def test_masked_step_freezes_stopped_models_and_their_state():
    init = torch.zeros(3, 4, dtype=torch.float64)
    p = _stacked(init)
    opt = Adam(p, lr=0.1)
    opt.zero_grad(); _loss(p).backward(); opt.step()
    frozen = p.flat[1].detach().clone()
    m1 = opt.m[1].clone()
    for _ in range(5):
        opt.zero_grad(); _loss(p).backward(); opt.step(torch.tensor([True, False, True]))
    assert torch.equal(p.flat[1], frozen) and torch.equal(opt.m[1], m1)
    assert opt.t[:, 0].tolist() == [6, 1, 6]
    assert torch.equal(p.flat[0], p.flat[2])


def test_models_in_one_family_never_mix_gradients():
    a = _stacked(torch.zeros(1, 4, dtype=torch.float64))
    b = _stacked(torch.tensor([[0.0] * 4, [5.0] * 4], dtype=torch.float64))
    for p in (a, b):
        opt = Adam(p, lr=0.05)
        for _ in range(10):
            opt.zero_grad(); _loss(p).backward(); opt.step()
    assert torch.allclose(a.flat[0], b.flat[0], atol=1e-14)


def test_per_model_gradient_norm_clipping():
    p = _stacked(torch.tensor([[0.0] * 4, [100.0] * 4], dtype=torch.float64))
    opt = Adam(p, lr=0.1, max_grad_norm=1.0)
    opt.zero_grad(); _loss(p).backward(); opt.step()
    # Adam normalises the step; clipping must not couple the two models: model 0 alone
    q = _stacked(torch.zeros(1, 4, dtype=torch.float64))
    opt_q = Adam(q, lr=0.1, max_grad_norm=1.0)
    opt_q.zero_grad(); _loss(q).backward(); opt_q.step()
    assert torch.allclose(p.flat[0], q.flat[0])


def test_fused_and_eager_paths_agree_through_a_stop():
    """The fused kernel (the default) and the eager reference give the same models, with
    weight decay, clipping and a model stopping half-way (float64, to 1e-12)."""
    from raudit.generators.nn import optim

    if not optim.FUSED:
        import pytest
        pytest.skip("this torch has no fused Adam")
    init = torch.randn(3, 7, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    runs = []
    for fused in (True, False):
        optim.FUSED = fused
        try:
            p = _stacked(init.clone())
            opt = Adam(p, lr=0.05, weight_decay=0.01, max_grad_norm=2.0)
            for i in range(12):
                opt.zero_grad(); _loss(p).backward()
                opt.step(None if i < 6 else torch.tensor([True, False, True]))
            runs.append((p.flat.detach().clone(), opt.m.clone(), opt.t.clone()))
        finally:
            optim.FUSED = True
    (pa, ma, ta), (pb, mb, tb) = runs
    assert torch.allclose(pa, pb, rtol=0, atol=1e-12) and torch.allclose(ma, mb, rtol=0, atol=1e-12)
    assert torch.equal(ta, tb) and ta[:, 0].tolist() == [12, 6, 12]


def test_a_models_adam_steps_do_not_depend_on_the_chunk():
    """torch's fused Adam rounds the last n % SIMD-width elements of a tensor in a scalar loop:
    over the chunk's flat (M, P) parameters, which of a model's parameters fell there depended
    on M, so a model's bits did (paper after 40 iterations differed at M = 1 vs M = 3). Row 1
    of three models steps exactly as the same model alone, for widths around the block."""
    gen = torch.Generator().manual_seed(3)
    for dtype in (torch.float32, torch.float64):
        for width in (5, 37, 63, 64, 65, 203):
            init = torch.randn(3, width, dtype=dtype, generator=gen)
            grads = torch.randn(30, 3, width, dtype=dtype, generator=gen) * 1e-3
            three, one = _stacked(init.clone()), _stacked(init[1:2].clone())
            opts = Adam(three, lr=1e-3, betas=(0.5, 0.9)), Adam(one, lr=1e-3, betas=(0.5, 0.9))
            for g in grads:
                three.flat.grad, one.flat.grad = g.clone(), g[1:2].clone()
                opts[0].step(); opts[1].step()
            assert torch.equal(three.flat[1], one.flat[0]), (dtype, width)
            assert torch.equal(opts[0].m[1], opts[1].m[0]) and torch.equal(opts[0].v[1], opts[1].v[0])


def test_adam_steps_do_not_depend_on_the_thread_count():
    """GPU slots run CPU work on 2 threads: the fused kernel splits the flat parameters into
    per-thread ranges of whole cache lines, so no thread has a scalar tail of its own. One and
    two threads, one model alone or beside two others, give the same bits (measured on whole
    fits too: paper, fixed, smartnoise, original, borealis, M = 8, 100 iterations, 0)."""
    gen = torch.Generator().manual_seed(4)
    before = torch.get_num_threads()
    for dtype in (torch.float32, torch.float64):
        init = torch.randn(3, 4099, dtype=dtype, generator=gen)
        grads = torch.randn(10, 3, 4099, dtype=dtype, generator=gen) * 1e-3
        rows = []
        try:
            for threads, models in ((1, slice(0, 3)), (2, slice(0, 3)), (2, slice(1, 2))):
                torch.set_num_threads(threads)
                p = _stacked(init[models].clone())
                opt = Adam(p, lr=1e-3, betas=(0.5, 0.9))
                for g in grads:
                    p.flat.grad = g[models].clone()
                    opt.step()
                rows.append(p.flat[1 if models.start == 0 else 0].detach().clone())
        finally:
            torch.set_num_threads(before)
        assert torch.equal(rows[0], rows[1]) and torch.equal(rows[1], rows[2]), dtype
