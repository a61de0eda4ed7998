"""`paper`: PATE-GAN exactly as Algorithm 1 of Jordon et al. (ICLR 2019) states it.

Hyperparameters (spec section 0; the study's table 3, first column): Adam lr
1e-4, batch 64, n_T = n_S = 5, one-layer teachers, student widths {d, d, 1},
generator widths {d, d/2, d} with ReLU hidden layers and sigmoid output, data
scaled to [0,1]^d, z ~ U([0,1]^d), Xavier init, delta = 10^-5, k = N/1000.

Where the paper is ambiguous raudit takes the reading its own accountant
assumes, and makes the other reading an option:

* ``noise_scale="inverse"``: Laplace scale 1/lambda (the accountant treats
  lambda as an inverse scale); ``"direct"`` uses scale lambda as Section 3.2
  writes it.
* ``aggregation="argmax"``: PATE's noisy argmax with one noise per class;
  ``"threshold"`` is the single-noise threshold every implementation uses.
* ``generator_loss="saturating"``: line 28's sum log(1 - S(G(z))).

Not given by the paper: lambda (raudit uses the study's 1e-3) and L (100).
Presets: ``default`` is the study's harness (k = max(2, N//1000), batch
min(64, N//k), at most 10,000 iterations); ``paper`` is batch 64 and no
iteration cap (stop on eps only).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities, OptionsObject
from raudit.generators.mechanism import DryRun, table_shape, vote_releases
from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.core.aggregation import CONTROLS, laplace_scale
from raudit.generators.pategan.core.encoding import MinMaxEncoder
from raudit.generators.pategan.core import fused_step
from raudit.generators.pategan.core.nets import LoopConfig, PateNets
from raudit.generators.pategan.core.loop import TeacherSource, to_trained, train_pate_gan
from raudit.generators.pategan.core.options import (PRESETS, PateHP, check_pate_options, pate_schedule,
                                               positive)
from raudit.generators.pategan.core.partitions import shuffled_partition


@dataclass(frozen=True)
class PaperOptions(OptionsObject):
    """`paper`'s options, one frozen object; the defaults are the module docstring's readings."""

    teachers: int | None = None  # None: the preset's k
    batch: int | None = None  # None: the preset's rule
    lam: float = 1e-3
    orders: int = 100
    max_iter: int | None = None  # None: the preset's cap
    lr: float = 1e-4
    teacher_steps: int = 5
    student_steps: int = 5
    noise_scale: Literal["inverse", "direct"] = "inverse"
    aggregation: Literal["argmax", "threshold"] = "argmax"
    generator_loss: Literal["saturating", "non-saturating"] = "saturating"


class PaperPateGan(BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "paper"
    description = "PATE-GAN as Algorithm 1 of the paper states it (reference)"
    presets = PRESETS
    capabilities = Capabilities(device=True, progress=True, critic=True, teachers_on_ray=True,
                                events=("teacher_batch", "votes", "accountant_step", "teacher_loss"),
                                privacy_events=("PateVote",), controls=CONTROLS,
                                releases=("laplace",))

    Options = PaperOptions

    def __init__(self, options: PaperOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the paper's reading) with ``overrides`` by name (-o KEY=VALUE)."""
        o = PaperOptions.build(options, overrides, self.name)
        check_pate_options(preset, o.lam, o.orders, o.batch, o.max_iter)
        positive("teacher_steps", o.teacher_steps, integer=True)
        positive("student_steps", o.student_steps, integer=True)
        positive("lr", o.lr)
        if o.teachers is not None:
            positive("teachers", o.teachers, integer=True)
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def resolve(self, n_rows: int, n_cols: int) -> PateHP:
        o = self.options
        k, batch, max_iter = pate_schedule(self.preset, n_rows, teachers=o["teachers"],
                                           batch=o["batch"], max_iter=o["max_iter"])
        return PateHP(k, batch, o["lam"], o["orders"], max_iter, o["lr"], o["teacher_steps"],
                      o["student_steps"], o["noise_scale"], o["aggregation"], o["generator_loss"])

    def encoder(self, seed: int) -> MinMaxEncoder:
        return MinMaxEncoder(eps=0.0, clip=True, integers="round", bounds="metadata")

    def has_dry_run(self) -> bool:
        return True

    def mechanism(self, table, *, epsilon, delta, columns=None) -> DryRun:
        """Its Laplace votes at eps: the loop checks eps_hat AFTER each iteration of
        batch x student_steps queries, so it runs the first iteration whose closed-form
        eps_hat reaches eps (the last one past eps included) or stops at the preset's
        ``max_iter`` first (the data-independent regime: lam <= 1e-3 at the study's delta)."""
        from raudit.accountants.closed_form import iterations_to_reach

        hp = self.resolve(*table_shape(self.name, table))
        per_iteration = hp.batch * hp.student_steps
        iters = iterations_to_reach(float(epsilon), hp.lam, hp.orders, float(delta),
                                    per_iteration, check="after", max_iter=hp.max_iter)
        capped = hp.max_iter is not None and iters == hp.max_iter
        stop = (f"stopped by max_iter {hp.max_iter:,}" if capped
                else "the first iteration whose eps_hat reaches eps")
        return DryRun((vote_releases("laplace", laplace_scale(hp.lam, hp.noise_scale),
                                     iters * per_iteration, hp.aggregation),),
                      f"dry run of the schedule: {iters:,} iterations of {per_iteration} "
                      f"queries ({stop})")

    @staticmethod
    def nets(d: int) -> PateNets:
        return PateNets(
            generator=MLP([d, d, max(1, d // 2), d], ["relu", "relu", "sigmoid"]),
            student=MLP([d, d, d, 1], ["relu", "relu", "sigmoid"]),
            teacher=MLP([d, 1], ["sigmoid"]),
        )

    def loop_config(self, hp: PateHP, d: int) -> LoopConfig:
        return LoopConfig(
            k=hp.teachers, batch=hp.batch, lam=hp.lam,
            noise_scale=laplace_scale(hp.lam, hp.noise_scale), aggregation=hp.aggregation,
            accountant="paper", orders=hp.orders, teacher_steps=hp.teacher_steps,
            student_steps=hp.student_steps, check="after", max_iter=hp.max_iter, z_dim=d,
            z_train="uniform", generator_loss=hp.generator_loss, lr=hp.lr)

    def train(self, batch: TrainBatch, hp: PateHP, *, epsilon, delta, observer, progress,
              make_teachers=None, control: str | None = None) -> Trained:
        cfg, nets = replace(self.loop_config(hp, batch.dim), control=control), self.nets(batch.dim)
        gen, iters, eps_hat, student = train_pate_gan(
            batch, cfg, nets, epsilon=epsilon, delta=delta, observer=observer, progress=progress,
            source=TeacherSource(
                lambda rng, b: shuffled_partition(rng, b.rows, b.x.shape[1], cfg.k), make_teachers),
            fast_step=fused_step.prepare)
        return to_trained(gen, nets, cfg, iters, eps_hat, z_sample="uniform", student=student)
