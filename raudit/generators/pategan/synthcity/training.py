"""The synthcity port's training loop: re-drawn LR teachers, then ``epochs`` critic and
generator steps on real data with teacher-labelled fakes, then synthcity's accountant.

What each step does and where upstream does it: the module docstring of
:mod:`~raudit.generators.pategan.synthcity.port` (the generator class, its options and
presets). Split from there: the class resolves the hyperparameters, this runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.events import TeacherBatch, TeacherLoss, Votes
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.cond import CondSampler, sample_conditional
from raudit.generators.pategan.refit import QueryAccountant, RefitTeachers, account_iteration
from raudit.generators.pategan.synthcity.nets import DropoutCritic, SkipGenerator
from raudit.generators.pategan.partitions import gather_rows
from raudit.privacy import STUDY_DELTA


@dataclass(frozen=True)
class SynthcityHP:
    teachers: int
    batch: int
    lam: float
    orders: int
    max_iter: int | None
    lr: float
    epochs: int
    weight_decay: float
    clip: float
    gp: float
    latent: int


def train_synthcity(batch: TrainBatch, hp: SynthcityHP, blocks, softmax_blocks, *, options,
                    epsilon, delta, observer, progress) -> Trained:
    m, n_max, d = batch.x.shape
    k, b, dev = hp.teachers, hp.batch, batch.x.device
    rng = CounterRNG(batch.seeds, purpose="synthcity", device=dev, dtype=batch.x.dtype)
    sampler = CondSampler(rng, batch.x, batch.rows, blocks)
    c = sampler.width
    g_net = SkipGenerator(hp.latent + c, d, softmax_blocks)
    critic_net = DropoutCritic(d + c)
    gen, critic = g_net.create(rng), critic_net.create(rng)
    opt = dict(lr=hp.lr, weight_decay=hp.weight_decay, max_grad_norm=hp.clip)
    g_opt, d_opt = Adam(gen, **opt), Adam(critic, **opt)
    n_rows = batch.rows.cpu().numpy()
    if options["delta_rule"] == "forced":
        deltas = 1.0 / (n_rows * np.sqrt(n_rows))
    else:
        deltas = np.full(m, STUDY_DELTA if delta is None else float(delta))
    teachers = RefitTeachers(m, k)
    acct = QueryAccountant(options["accountant"], k=k, lam=hp.lam, orders=hp.orders, models=m)
    s = batch.rows // k  # (M,) rows per teacher
    active = np.ones(m, dtype=bool)
    iters = np.zeros(m, dtype=np.int64)
    eps_hat = acct.eps(deltas)
    stopped = ["max_iter"] * m
    uncharged = np.zeros(m, dtype=np.int64)

    def generate(n: int) -> torch.Tensor:
        cond = sampler.sample(rng, n)
        return g_net(gen, torch.cat([rng.normal(n, hp.latent), cond], dim=-1), rng)

    it = 0
    first = None
    while bool(active.any()) and (hp.max_iter is None or it < hp.max_iter):
        # 1. teachers on a re-drawn partition
        perm = rng.permutation(n_max, batch.rows)
        p = int(s.max())
        cols = torch.arange(p, device=dev)
        offs = torch.minimum(torch.arange(k, device=dev)[None, :, None] * s[:, None, None] + cols,
                             (batch.rows - 1)[:, None, None])
        parts = torch.gather(perm, 1, offs.reshape(m, -1)).view(m, k, p)
        r = min(b, p) if options["teacher_data"] == "batch" else p
        keys = rng.open_uniform(k, p)  # the harness keeps the first `batch` of a shuffle
        keys = torch.where(cols[None, None, :] < s[:, None, None], keys, keys + 2.0)
        pick = torch.argsort(keys, dim=2, stable=True)[..., :r]
        rows_t = torch.gather(parts, 2, pick)
        n_real = torch.minimum(s, torch.tensor(r, device=dev)) if options["teacher_data"] == "batch" else s
        ok = cols[None, None, :r] < n_real[:, None, None]
        real = gather_rows(batch.x, rows_t.reshape(m, -1)).view(m, k, r, d)
        with torch.no_grad():
            fake = generate(k * r).view(m, k, r, d)
        teachers.fit(real, ok.expand(-1, k, -1), fake, ok.expand(-1, k, -1))
        if observer is not None:
            rows_np = torch.where(ok, rows_t, -1).cpu().numpy()
            for t in range(k):
                observer(TeacherBatch(it, t, rows_np[:, t], active.copy()))
            if first is None:  # each teacher's first rows: the fixed subset of TeacherLoss
                first = (real, ok.expand(-1, k, -1))
            observer(TeacherLoss(it, teachers.losses_on(*first), active.copy()))
        # 2. the GAN: `epochs` batches, one critic and one generator step each
        for _ in range(hp.epochs):
            pos, valid = sampler.batch(rng, b)
            nb = valid.sum(1).to(batch.x.dtype)
            can = active & (nb.cpu().numpy() > 0)
            upd = None if can.all() else torch.as_tensor(can, device=dev)
            vf = valid.to(batch.x.dtype)
            real = gather_rows(batch.x, pos)
            cond = gather_rows(sampler.cond, pos) if c else real[..., :0]
            real_c = torch.cat([real, cond], dim=-1)
            with torch.no_grad():
                fake = g_net(gen, torch.cat([rng.normal(b, hp.latent), cond], dim=-1), rng)
                n1 = teachers.votes(fake)
                noise = rng.laplace(b, scale=1.0 / hp.lam)
                y = ((n1.to(noise.dtype) + noise) / (k + 1e-8) > 0.5) & valid
                early = (y.sum(1) >= nb / 2) & torch.as_tensor(options["early_return"], device=dev)
                y = y & ~early[:, None]
            charged = can & ~early.cpu().numpy()
            n1_np = n1.cpu().numpy()
            acct.charge(n1_np, valid.cpu().numpy() & charged[:, None])
            uncharged += can & ~charged
            if observer is not None:
                observer(Votes(it, n1_np, k, 1.0 / hp.lam, noise.cpu().numpy(), y.cpu().numpy(),
                               charged.copy(), active.copy(), "threshold"))
                observer(TeacherBatch(it, -1, torch.where(valid, pos, -1).cpu().numpy(), can.copy()))
            yf = y.to(batch.x.dtype)
            fake_c = torch.cat([fake, cond], dim=-1)
            out_r, out_f = critic_net(critic, real_c, rng), critic_net(critic, fake_c, rng)
            err_real = ((vf * out_r).sum(1) + (yf * out_f).sum(1)) / (nb + yf.sum(1)).clamp(min=1)
            zero = vf * (1 - yf)
            err_fake = (zero * out_f).sum(1) / zero.sum(1).clamp(min=1)
            e = rng.uniform(b, 1)
            inter = (e * real_c + (1 - e) * fake_c).requires_grad_(True)
            grad, = torch.autograd.grad(critic_net(critic, inter, rng).sum(), inter, create_graph=True)
            gp = hp.gp * (vf * (grad.norm(dim=-1) - 1) ** 2).sum(1) / nb.clamp(min=1)
            d_opt.zero_grad()
            (-err_real + err_fake + gp).sum().backward(inputs=[critic.flat])
            d_opt.step(upd)
            g_opt.zero_grad()
            fake = g_net(gen, torch.cat([rng.normal(b, hp.latent), cond], dim=-1), rng)
            out = critic_net(critic, torch.cat([fake, cond], dim=-1), rng)
            err_g = -(vf * out).sum(1) / nb.clamp(min=1)
            err_g = err_g + cond_penalty(real, fake, cond, vf, blocks, nb)
            err_g.sum().backward(inputs=[gen.flat])
            g_opt.step(upd)
        iters += active
        it += 1
        eps_hat = account_iteration(acct, deltas, epsilon, it, active, eps_hat, stopped,
                                    observer, progress)
    extra = [{"stopped": st, "charged_queries": int(q), "uncharged_batches": int(u), "delta": float(dl)}
             for st, q, u, dl in zip(stopped, acct.charged, uncharged, deltas)]
    return _trained(gen, g_net, sampler, hp, iters, eps_hat, extra)


def cond_penalty(real, fake, cond, vf, blocks, nb) -> torch.Tensor:
    """synthcity's ``_generator_cond_loss``: per discrete column, the NLL of the real row's
    category under the generated block, over the rows whose conditional picked that
    column; summed over columns and divided by the batch size. (M,)"""
    total = torch.zeros(real.shape[0], dtype=real.dtype, device=real.device)
    at = 0
    for o, w in blocks:
        mask = (cond[..., at:at + w].sum(-1) > 0).to(real.dtype) * vf
        target = real[..., o:o + w].argmax(-1, keepdim=True)
        nll = -torch.log(torch.gather(fake[..., o:o + w], 2, target).squeeze(-1) + 1e-8)
        cnt = mask.sum(1)
        total = total + torch.where(cnt > 0, (mask * nll).sum(1) / cnt.clamp(min=1), 0.0)
        at += w
    return total / nb.clamp(min=1)


def _trained(gen: Stacked, g_net: SkipGenerator, sampler: CondSampler, hp: SynthcityHP, iters,
             eps_hat, extra) -> Trained:
    # conditionals at sampling time use each model's own category frequencies: carry them
    # with the generator's parameters (FittedBatch selects models by slicing them)
    probs = sampler.probs.to(gen.flat.dtype).reshape(gen.groups, -1)
    layout = dict(gen.layout)
    layout["probs"] = (gen.flat.shape[1], tuple(sampler.probs.shape[1:]))
    params = Stacked(torch.cat([gen.flat.detach(), probs], dim=1), layout)
    offsets, width = sampler.cond_offsets, sampler.width

    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        cond = sample_conditional(rng, p["probs"].to(torch.float64), offsets, n, width)
        return g_net(p, torch.cat([rng.normal(n, hp.latent), cond.to(rng.dtype)], dim=-1), rng)
    return Trained(params, sample_fn, iters.tolist(), [float(e) for e in eps_hat], extra)
