"""`synthcity`: the synthcity library's PATE-GAN (v0.2.10, PyTorch), ported faithfully.

Source read: github.com/vanderschaarlab/synthcity ``plugins/privacy/plugin_pategan.py``
(the inner ``PATEGAN`` class the study instantiates), ``core/models/{tabular_gan,gan,mlp,
layers,factory,feature_encoder,tabular_encoder}.py``, ``utils/samplers.py``, and the
study's harness copy ``pate_gans/synthcity/{synthcity_audit,gan}.py`` (spec section 3).

Outer iteration, per model, while eps_hat < eps and it < max_iter:

1. Teachers: the row permutation is RE-DRAWN; teacher t gets rows perm[t s:(t+1) s]
   (s = int(N/k)), of which the study's harness keeps a random ``batch`` (label 1),
   plus ``batch`` generated rows (label 0, conditionals from ``sample_conditional``);
   a fresh ``LogisticRegression(solver="sag", max_iter=10000)`` (L2, C = 1) is fit.
   Over a run every teacher sees almost every record.
2. ``epochs`` (generator_n_iter = 10) "epochs", each ONE loader batch in the study's
   harness (:mod:`cond` explains which rows the loader hands out): one critic step
   and one generator step.
   * Critic (WGAN-GP, trained on REAL data): fakes G([z, c]) are labelled by the
     teachers, ((n1 + Lap(1/lambda)) / (k + 1e-8)) > 0.5; if at least half the batch
     is labelled real the labels become all 0 AND the accountant is not charged
     (uncharged queries); otherwise every sample charges it. errD = -mean(D(real) and
     D(fakes labelled 1)) + mean(D(fakes labelled 0)) + 10 * GP; Adam lr 1e-4, betas
     (0.9, 0.999), weight decay 1e-3, gradient-norm clip 1.
   * Generator: -mean(D(G([z, c]))) + the conditional cross-entropy penalty; Adam as
     the critic's.
3. eps_hat = min_l (alpha_l - log delta) / l with synthcity's accountant (L = 100,
   ``exp(2 lambda lidx + 1)`` index bug, clipped to [0, 2 lambda^2 (l)(l+1)]), computed
   after the 10 epochs (overshoot); delta is forced to 1/(N sqrt N) whatever is passed.

Networks: :mod:`~raudit.generators.pategan.synthcity.nets` (latent 100, z ~ N(0, 1),
dense skip connections, Gumbel-softmax heads). Encoding:
:mod:`~raudit.generators.pategan.synthcity.encoding`.

Deviations, each an option whose default is the upstream behaviour (as the study ran it):

==================  ==============  ==================================================
option              default         alternative
==================  ==============  ==================================================
accountant          "synthcity-     any raudit accountant ("paper", "fixed-threshold")
                    index-bug"
early_return        True            False (always label with the votes and charge them)
delta_rule          "forced"        "given" (use the delta passed, default 10^-5)
teacher_data        "batch"         "partition" (upstream plugin: all s rows + s fakes)
integers            "astype"        "round" (pandas astype truncates toward zero)
==================  ==============  ==================================================

Presets: ``default`` is the study's harness (k = max(2, N // 1000), batch min(200, N // k),
at most 1,000 iterations, the class default); ``paper`` is batch 64 and no iteration cap.

Not reproduced: the upstream plugin's full-epoch loader (every epoch one pass over the
loader; the study's harness, ported here, takes one batch per epoch); the ``!= 0``
filters on critic outputs (they drop outputs that are exactly 0.0, a measure-zero event).
"""

from __future__ import annotations


from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants import VARIANTS
from raudit.errors import ConfigError
from raudit.generators.base import group_tables
from raudit.generators.batched import BatchedGenerator, TrainBatch, Trained
from raudit.generators.events import TeacherBatch, TeacherLoss, Votes
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.cond import CondSampler, sample_conditional
from raudit.generators.pategan.options import check_pate_options, choice, pate_schedule, positive
from raudit.generators.pategan.refit import (CAPABILITIES, QueryAccountant, RefitTeachers,
                                            account_iteration)
from raudit.generators.pategan.synthcity.encoding import SynthcityEncoder, column_kinds
from raudit.generators.pategan.synthcity.nets import DropoutCritic, SkipGenerator
from raudit.generators.pategan.synthcity.options import SynthcityOptions
from raudit.generators.pategan.wgan_gp import gather_rows
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


class SynthcityPateGan(BatchedGenerator):
    name = "synthcity"
    description = "synthcity's PATE-GAN: LR teachers, critic on real data (faithful port, bugs on)"
    default_delta = None  # forced to 1/(N sqrt N) per model

    capabilities = CAPABILITIES  # its votes, for --threat-model transcript

    Options = SynthcityOptions

    def __init__(self, options: SynthcityOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the plugin's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        o = SynthcityOptions.build(options, overrides, self.name)
        check_pate_options(preset, o.lam, o.orders, o.batch, o.max_iter)
        for name in ("epochs", "latent"):
            positive(name, getattr(o, name), integer=True)
        positive("teachers", o.teachers, integer=True, allow_none=True)
        positive("lr", o.lr)
        positive("clip", o.clip)
        if not (isinstance(o.weight_decay, (int, float)) and o.weight_decay >= 0 and o.gp >= 0):
            raise ConfigError("weight_decay and gp must be numbers >= 0")
        if not isinstance(o.early_return, bool):  # strict, as the plugin's flag
            raise ConfigError(f"early_return must be true or false, got {o.early_return!r}")
        choice("accountant", o.accountant, tuple(VARIANTS.names()))  # the registry's set
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def resolve(self, n_rows: int, n_cols: int) -> SynthcityHP:
        o = self.options
        cap = 64 if self.preset == "paper" else 200
        k, batch, max_iter = pate_schedule(self.preset, n_rows, teachers=o["teachers"], batch=o["batch"],
                                           max_iter=o["max_iter"], batch_cap=cap, iteration_cap=1000)
        return SynthcityHP(k, batch, o["lam"], o["orders"], max_iter, o["lr"], o["epochs"],
                           float(o["weight_decay"]), float(o["clip"]), float(o["gp"]), o["latent"])

    def delta_rule(self) -> float | str:
        """Upstream forces delta = 1/(N sqrt N) whatever is passed (``delta_rule="forced"``);
        declaring it lets train and audit record, and bound with, the delta it trains with."""
        return "1/(N sqrt N)" if self.options["delta_rule"] == "forced" else STUDY_DELTA

    def encoder(self) -> SynthcityEncoder:
        return SynthcityEncoder(integers=self.options["integers"])

    def fit_many(self, tables, *, epsilon, delta=None, seeds, columns=None, observer=None,
                 progress=None, train_options=None):
        """Tables train together only when they encode to the same layout (one-hot widths
        come from the records, so neighbouring tables may differ)."""
        groups = group_tables(tables, seeds, epsilon=epsilon, delta=delta,
                              allow_nan=self.allow_nan, key=column_kinds)
        out: list = [None] * len(tables)
        for idx in groups.values():
            fitted = super().fit_many([tables[i] for i in idx], epsilon=epsilon, delta=delta,
                                      seeds=[seeds[i] for i in idx], columns=columns,
                                      observer=observer, progress=progress, train_options=train_options)
            for i, f in zip(idx, fitted):
                out[i] = f
        return out

    def _pack(self, tables, encoders, seeds, device) -> TrainBatch:
        self._encoders = encoders  # the loop needs the block layout
        return super()._pack(tables, encoders, seeds, device)

    def train(self, batch: TrainBatch, hp: SynthcityHP, *, epsilon, delta, observer, progress) -> Trained:
        enc = self._encoders[0]
        return train_synthcity(batch, hp, enc.discrete_blocks(), enc.softmax_blocks(),
                               options=self.options, epsilon=epsilon, delta=delta,
                               observer=observer, progress=progress)


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
                               charged.copy(), active.copy()))
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
