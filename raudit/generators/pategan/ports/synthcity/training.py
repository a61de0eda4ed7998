"""The synthcity port's training loop: re-drawn LR teachers, then ``epochs`` critic and
generator steps on real data with teacher-labelled fakes, then synthcity's accountant.

What each step does and where upstream does it: the module docstring of
:mod:`~raudit.generators.pategan.ports.synthcity.port` (the generator class, its options and
presets). Split from there: the class resolves the hyperparameters, this runs them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from raudit.generators.batch_types import TrainBatch, Trained
from raudit.events import RealRowsRead, TeacherBatch, TeacherLoss, Votes
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.ports.synthcity.cond import CondSampler, sample_conditional
from raudit.generators.pategan.ports.refit import QueryAccountant, RefitTeachers, account_iteration
from raudit.generators.pategan.ports.synthcity.nets import DropoutCritic, SkipGenerator
from raudit.generators.pategan.core.partitions import gather_rows
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


class Live:
    """The models of a chunk that still train, and their rows of every stacked tensor.

    The loop runs until the chunk's last model stops; a stopped model kept in the tensors
    cost as much as a training one (a cervical chunk's models stop on eps between about
    15 and 20 iterations: at M=32 a fifth of the work was for stopped models). Dropping
    it gives the others the same numbers: each model's arithmetic is its own (the port is
    chunk-invariant, ``whole_blocks``), its random streams are keyed by its seed with a
    counter all share, and every draw keeps the chunk's shape (``n_max``, the partition
    width ``p`` and the loader's list width stay the whole chunk's).
    """

    def __init__(self, index: np.ndarray, x: torch.Tensor, rows: torch.Tensor, s: torch.Tensor,
                 sampler: CondSampler, gen: Stacked, critic: Stacked, teachers: RefitTeachers,
                 out: torch.Tensor):
        self.index, self.x, self.rows, self.s, self.sampler = index, x, rows, s, sampler
        self.gen, self.critic, self.teachers = gen, critic, teachers
        self.out = out  # (M, P) the whole chunk's generators: a model's row once it left

    @property
    def models(self) -> int:
        return len(self.index)

    def whole(self, n1: np.ndarray, valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Votes (rows here) as the whole chunk's arrays, a model not here charging nothing."""
        m = self.out.shape[0]
        if len(self.index) == m:
            return n1, valid
        n1_all = np.zeros((m, *n1.shape[1:]), dtype=n1.dtype)
        valid_all = np.zeros((m, *valid.shape[1:]), dtype=bool)
        n1_all[self.index], valid_all[self.index] = n1, valid
        return n1_all, valid_all

    def narrowed(self, keep: np.ndarray, rng: CounterRNG, g_opt: Adam, d_opt: Adam) -> "Live":
        """These models' rows ``keep`` only; the others' generators are final (stored)."""
        dev = self.x.device
        gone = torch.as_tensor(np.setdiff1d(np.arange(len(self.index)), keep), device=dev)
        self.out[torch.as_tensor(self.index, device=dev)[gone]] = self.gen.flat.detach()[gone]
        at = torch.as_tensor(keep, device=dev)
        rng.keep(at)
        gen, critic = (Stacked(t.flat.detach()[at].clone().requires_grad_(True), t.layout)
                       for t in (self.gen, self.critic))
        g_opt.select(gen, at)
        d_opt.select(critic, at)
        return Live(self.index[keep], self.x[at], self.rows[at], self.s[at], self.sampler.select(at),
                    gen, critic, RefitTeachers(len(keep), self.teachers.k), self.out)

    def finish(self) -> Stacked:
        """The whole chunk's generators (M rows, in the chunk's order)."""
        self.out[torch.as_tensor(self.index, device=self.x.device)] = self.gen.flat.detach()
        return Stacked(self.out, self.gen.layout)


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
    p = int(s.max())  # the chunk's: draws keep their shapes when models leave the tensors
    active = np.ones(m, dtype=bool)
    iters = np.zeros(m, dtype=np.int64)
    eps_hat = acct.eps(deltas)
    stopped = ["max_iter"] * m
    uncharged = np.zeros(m, dtype=np.int64)

    # The models still training, as rows of the stacked tensors: a stopped model leaves
    # them (with an observer, whose events report every model, none leaves)
    live = Live(np.arange(m), batch.x, batch.rows, s, sampler, gen, critic, teachers,
                torch.empty_like(gen.flat, requires_grad=False))

    def generate(n: int) -> torch.Tensor:
        cond = live.sampler.sample(rng, n)
        return g_net(live.gen, torch.cat([rng.normal(n, hp.latent), cond], dim=-1), rng)

    it = 0
    first = None
    while bool(active.any()) and (hp.max_iter is None or it < hp.max_iter):
        ml, x, rows, s, gen, critic = live.models, live.x, live.rows, live.s, live.gen, live.critic
        now = active[live.index]
        # 1. teachers on a re-drawn partition
        perm = rng.permutation(n_max, rows)
        cols = torch.arange(p, device=dev)
        offs = torch.minimum(torch.arange(k, device=dev)[None, :, None] * s[:, None, None] + cols,
                             (rows - 1)[:, None, None])
        parts = torch.gather(perm, 1, offs.reshape(ml, -1)).view(ml, k, p)
        r = min(b, p) if options["teacher_data"] == "batch" else p
        keys = rng.open_uniform(k, p)  # the harness keeps the first `batch` of a shuffle
        keys = torch.where(cols[None, None, :] < s[:, None, None], keys, keys + 2.0)
        pick = torch.argsort(keys, dim=2, stable=True)[..., :r]
        rows_t = torch.gather(parts, 2, pick)
        n_real = torch.minimum(s, torch.tensor(r, device=dev)) if options["teacher_data"] == "batch" else s
        ok = cols[None, None, :r] < n_real[:, None, None]
        real = gather_rows(x, rows_t.reshape(ml, -1)).view(ml, k, r, d)
        with torch.no_grad():
            fake = generate(k * r).view(ml, k, r, d)
        teachers = live.teachers
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
            pos, valid = live.sampler.batch(rng, b)
            nb = valid.sum(1).to(x.dtype)
            can = now & (nb.cpu().numpy() > 0)
            upd = None if can.all() else torch.as_tensor(can, device=dev)
            vf = valid.to(x.dtype)
            real = gather_rows(x, pos)
            cond = gather_rows(live.sampler.cond, pos) if c else real[..., :0]
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
            acct.charge(*live.whole(n1_np, valid.cpu().numpy() & charged[:, None]))
            uncharged[live.index] += can & ~charged
            if observer is not None:
                observer(Votes(it, n1_np, k, 1.0 / hp.lam, noise.cpu().numpy(), y.cpu().numpy(),
                               charged.copy(), active.copy(), "threshold"))
                observer(TeacherBatch(it, -1, torch.where(valid, pos, -1).cpu().numpy(), can.copy()))
                observer(RealRowsRead(it, "the critic", can.copy()))  # err_real below
            yf = y.to(x.dtype)
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
        if observer is None and bool(active.any()) and not active[live.index].all():
            live = live.narrowed(np.flatnonzero(active[live.index]), rng, g_opt, d_opt)
    gen = live.finish()
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
