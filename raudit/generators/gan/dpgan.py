"""`dpgan`: DP-GAN (Xie et al. 2018), a WGAN whose critic is trained with DP-SGD.

Per iteration: ``critic_steps`` critic steps, then one generator step
(-mean D(G(z))). A critic step draws a Poisson sample of the real rows (every row
independently with rate q = batch / N, N treated as public as in the study), takes
each real row's gradient of -D(x) (per-sample, :mod:`.persample`), clips it to L2 norm
``clip``, sums, adds N(0, (z clip)^2) and divides by q N; the gradient of mean D(G(z))
over ``batch`` generated rows needs no noise (it does not read the records). Adam
(lr 1e-3, beta1 0.5), then the critic's weights are clipped to [-0.01, 0.01] (WGAN;
post-processing). Networks: the paper's generator; the critic is the paper's
discriminator with a linear output.

Accounting: every critic step is a :class:`~raudit.events.GaussianStep` (noise
multiplier z, Poisson rate q) charged to dp_accounting's ``RdpAccountant``
(add/remove neighbours). The number of iterations is fixed in advance and z is
calibrated before training so that the DP bounds (:mod:`raudit.generators.pategan.core.dp_bounds`,
``bounds_share`` of eps, only for columns without public bounds) plus all critic
steps cost at most eps: the stopping time is data-independent and never overshoots.

``conditional=True`` (off by default): the label is drawn from Bernoulli(``label_prior``),
a public constant, fed to the generator and written as the row's label, so a synthetic
table always has both classes (:mod:`raudit.generators.labelled`).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants import create
from raudit.events import GaussianStep
from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities, OptionsObject
from raudit.events import AccountantStep, DpSgdStep, TeacherBatch
from raudit.generators.gan.common import (critic_of, finish, gather_rows, paper_discriminator,
                                         paper_generator, poisson_rows)
from raudit.generators.gan.persample import per_sample_grads, privatise
from raudit.generators.labelled import check_conditional, public_label, with_label
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP
from raudit.generators.mechanism import DryRun, table_shape
from raudit.generators.pategan.core.dp_bounds import DPBoundsFitting, private_columns
from raudit.generators.pategan.core.noise_calibration import calibrate
from raudit.generators.pategan.core.options import positive

WEIGHT_CLIP = 0.01


@functools.lru_cache(maxsize=256)
def plan(epsilon: float, delta: float, steps: int, rate: float, dp_columns: int,
         bounds_share: float) -> tuple[float | None, float]:
    """(z of the bounds histogram or None, z of the critic steps) for a whole run."""
    return calibrate(epsilon, delta, dp_columns, bounds_share,
                     lambda z: GaussianStep(z, sampling_rate=rate, count=steps))


@dataclass(frozen=True)
class DpganOptions(OptionsObject):
    """`dpgan`'s options, one frozen object; the defaults are the class's settings."""

    iterations: int = 300
    max_iter: int | None = None
    critic_steps: int = 5
    batch: int = 64
    clip: float = 1.0
    lr: float = 1e-3
    bounds_share: float = 0.2
    conditional: bool = False
    label_prior: float = 0.5


class DpGan(DPBoundsFitting, BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "dpgan"
    description = "DP-GAN: WGAN with a DP-SGD critic (Poisson sampling, RDP via dp_accounting)"
    capabilities = Capabilities(device=True, progress=True, critic=True,
                                events=("teacher_batch", "accountant_step"),
                                privacy_events=("GaussianStep",), releases=("gaussian",))

    Options = DpganOptions

    def __init__(self, options: DpganOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the paper's settings) with ``overrides`` by name (-o KEY=VALUE)."""
        if preset != "default":
            raise ConfigError(f"dpgan has one preset, 'default'; got {preset!r}")
        o = DpganOptions.build(options, overrides, self.name)
        for name, value in (("iterations", o.iterations), ("critic_steps", o.critic_steps),
                            ("batch", o.batch)):
            positive(name, value, integer=True)
        positive("max_iter", o.max_iter, integer=True, allow_none=True)
        positive("clip", o.clip)
        positive("lr", o.lr)
        if not 0.0 < o.bounds_share < 1.0:
            raise ConfigError(f"bounds_share must lie in (0, 1), got {o.bounds_share!r}")
        check_conditional(o.conditional, o.label_prior)
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def fit_many(self, tables, *, columns=None, **kw):
        if self.options["conditional"] and len(tables):
            columns = public_label(tables, columns)
        return super().fit_many(tables, columns=columns, **kw)

    def generator(self, d: int):
        """(net, G(p, z) -> rows): the paper's generator, or with ``conditional`` one that
        writes the d - 1 features from [z, y] and appends y ~ Bernoulli(label_prior)."""
        o = self.options
        if not o["conditional"]:
            net = paper_generator(d)
            return net, net
        net = MLP([d, d, max(1, d // 2), d - 1], ["relu", "relu", "sigmoid"])
        return net, lambda p, z: with_label(lambda zy: net(p, zy), z, o["label_prior"], "uniform")

    def resolve(self, n_rows: int, n_cols: int) -> tuple:
        o = self.options
        iters = min(o["iterations"], o["max_iter"] or o["iterations"])
        return iters, min(1.0, o["batch"] / n_rows)

    def has_dry_run(self) -> bool:
        return True

    def mechanism(self, table, *, epsilon, delta, columns=None) -> DryRun:
        """Its critic's DP-SGD steps: iterations x critic_steps at the Poisson rate
        batch / N, with the noise multiplier its planner calibrates before training (a
        function of eps, delta, N and how many columns lack public bounds: no record is
        read). The DP-bounds pre-pass (a Gaussian histogram of the columns without public
        bounds) is a further release, named in ``uncovered``."""
        iters, rate = self.resolve(*table_shape(self.name, table))
        n_dp = len(private_columns(list(table.columns), tuple(columns) if columns else None))
        steps = iters * self.options["critic_steps"]
        z_bounds, z = plan(float(epsilon), float(delta), steps, rate, n_dp,
                           self.options["bounds_share"])
        uncovered = () if z_bounds is None else (
            f"the DP-bounds pre-pass (noise multiplier {z_bounds:.4g}, {n_dp} columns)",)
        pre = ("no DP-bounds pre-pass (public bounds)" if z_bounds is None else
               f"the DP-bounds pre-pass (noise multiplier {z_bounds:.4g}, {n_dp} columns) is "
               "released too and not audited")
        return DryRun((GaussianStep(z, rate, steps),),
                      f"dry run of the schedule: {steps:,} critic steps at its planner's "
                      f"noise; {pre}", uncovered)

    def train(self, batch: TrainBatch, hp, *, epsilon, delta, observer, progress) -> Trained:
        iters, rate = hp
        o = self.options
        d, m, n_max = batch.dim, batch.models, batch.x.shape[1]
        steps = iters * o["critic_steps"]
        z_bounds, z = plan(float(epsilon), float(delta), steps, rate, self._n_dp, o["bounds_share"])
        acct = create("rdp", models=m)
        if z_bounds is not None:
            acct.compose(GaussianStep(z_bounds))
        rng = CounterRNG(batch.seeds, purpose="dpgan", device=batch.x.device, dtype=batch.x.dtype)
        (g_net, generate), c_net = self.generator(d), paper_discriminator(d, output="linear")
        gen, critic = g_net.create(rng), c_net.create(rng)
        g_opt = Adam(gen, lr=o["lr"], betas=(0.5, 0.999))
        c_opt = Adam(critic, lr=o["lr"], betas=(0.5, 0.999))
        expected = rate * batch.rows.to(batch.x.dtype)[:, None]  # q N per model
        active = np.ones(m, dtype=bool)
        for it in range(iters):
            for _ in range(o["critic_steps"]):
                idx, mask = poisson_rows(rng, batch.rows, n_max, rate)
                if observer is not None:
                    ids = idx.cpu().numpy()
                    observer(TeacherBatch(it, -1, np.where(mask.cpu().numpy(), ids, -1), active))
                real = gather_rows(batch.x, idx)
                grads = per_sample_grads(c_net, critic, real, mask, lambda out: -out)
                private, _ = privatise(grads, o["clip"], z, 1.0, rng)
                c_opt.zero_grad()
                with torch.no_grad():
                    fake = generate(gen, rng.uniform(o["batch"], d))
                c_net(critic, fake, logits=True).flatten(1).mean(1).sum().backward()
                critic.flat.grad = critic.flat.grad + private / expected
                c_opt.step()
                with torch.no_grad():
                    critic.flat.clamp_(-WEIGHT_CLIP, WEIGHT_CLIP)
            acct.compose(GaussianStep(z, sampling_rate=rate, count=o["critic_steps"]))
            if observer is not None:
                observer(DpSgdStep(it, o["critic_steps"], z, o["clip"], rate, active.copy()))
            g_opt.zero_grad()
            (-c_net(critic, generate(gen, rng.uniform(o["batch"], d)), logits=True)
             .flatten(1).mean(1).sum()).backward()
            g_opt.step()
            if observer is not None:
                observer(AccountantStep(it, acct.eps(delta), np.zeros((m, 0)), active))
            if progress is not None:
                progress(it + 1)
        eps_hat = acct.eps(delta)
        trained = finish(gen, generate, d, [iters] * m, [float(e) for e in eps_hat],
                         critic=critic_of(c_net, critic))
        trained.extra = [{"noise_multiplier": z, "sampling_rate": rate, "critic_steps": steps,
                          "bounds_noise_multiplier": z_bounds, "dp_bounds_columns": self._n_dp}] * m
        return trained
