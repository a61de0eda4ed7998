"""What the faithful PyTorch ports (borealis, smartnoise) share on the PATE-GAN loop.

Both keep the paper's loop shape (spec sections 5, 6): persistent teachers on
contiguous partitions, n_T = 5 rounds of k teacher steps, n_S = 5 student steps
on single-noise threshold votes charged to the missing-log accountant, one
non-saturating generator step. They differ in networks, preprocessing, defaults
and where eps_hat is checked, which the subclasses supply.

Presets (one rule for both ports):

* ``default``: the study's harness: k = max(2, N // 1000) unless ``teachers`` is
  given, batch = min(64, N // k), at most 10,000 iterations (``max_iter``).
* ``paper``: the PATE-GAN paper's hyperparameters (k = N/1000 by the same rule,
  batch 64, Adam lr 1e-4, n_T = n_S = 5, delta 10^-5, no iteration cap) run through
  the implementation's OWN code paths and networks. The study's table 12 also
  swapped in the paper's network depths; raudit keeps each port's networks (the
  paper's depths do not map onto their output layers unambiguously) and leaves the
  paper's networks to the reference ``paper`` generator.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import torch

from raudit.accountants import VARIANTS
from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities
from raudit.generators.pategan.core.aggregation import CONTROLS, laplace_scale
from raudit.generators.pategan.core import fused_step
from raudit.generators.pategan.core.nets import LoopConfig, PateNets
from raudit.generators.pategan.core.loop import TeacherSource, to_trained, train_pate_gan
from raudit.generators.pategan.core.options import (PRESETS, PateHP, check_pate_options, choice,
                                                    pate_schedule, positive)
from raudit.generators.pategan.core.partitions import partition_from_order
from raudit.privacy import rule_deltas


class PortPateGan(BatchedGenerator):
    """Base of the ports: option checks, presets and the call into the shared loop."""
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)

    dtype = torch.float64  # both upstreams train in float64 (``.double()``)
    presets = PRESETS
    capabilities = Capabilities(device=True, progress=True, critic=True, teachers_on_ray=True,
                                events=("teacher_batch", "votes", "accountant_step", "teacher_loss"),
                                privacy_events=("PateVote",), controls=CONTROLS,
                                releases=("laplace",))

    def __init__(self, *, preset: str, device: str | None, dtype: str | None, **o):
        check_pate_options(preset, o["lam"], o["orders"], o["batch"], o["max_iter"])
        positive("teachers", o["teachers"], integer=True, allow_none=True)
        positive("teacher_steps", o["teacher_steps"], integer=True)
        positive("student_steps", o["student_steps"], integer=True)
        positive("lr", o["lr"])
        # the closed sets (check, aggregation, ...) are Literal fields of each port's options
        # object, checked when it is made; the accountant's set is the registry's
        choice("accountant", o["accountant"], tuple(VARIANTS.names()))
        super().__init__(preset=preset, device=device, dtype=dtype, **o)

    # -- hooks for the subclasses ----------------------------------------------
    def nets(self, d: int) -> PateNets:
        raise NotImplementedError

    def z_dim(self, d: int) -> int:
        raise NotImplementedError

    def partition_sizes(self, rows: torch.Tensor, k: int) -> torch.Tensor | None:
        """Teacher partition sizes (M, k); None for np.array_split's."""
        return None

    # -- BatchedGenerator --------------------------------------------------------
    def resolve(self, n_rows: int, n_cols: int) -> PateHP:
        o = self.options
        k, batch, max_iter = pate_schedule(self.preset, n_rows, teachers=o["teachers"],
                                           batch=o["batch"], max_iter=o["max_iter"])
        return PateHP(k, batch, o["lam"], o["orders"], max_iter, o["lr"], o["teacher_steps"],
                      o["student_steps"], "inverse", o["aggregation"], o["generator_loss"])

    def loop_config(self, hp: PateHP, d: int) -> LoopConfig:
        o = self.options
        return LoopConfig(
            k=hp.teachers, batch=hp.batch, lam=hp.lam,
            noise_scale=laplace_scale(hp.lam, hp.noise_scale),  # both upstreams: Lap(1/lambda)
            aggregation=hp.aggregation, accountant=o["accountant"], orders=hp.orders,
            teacher_steps=hp.teacher_steps, student_steps=hp.student_steps, check=o["check"],
            max_iter=hp.max_iter, z_dim=self.z_dim(d), z_train="uniform",
            generator_loss=hp.generator_loss, teacher_sample="first-shuffled", lr=hp.lr,
            teacher_fakes=o["teacher_fakes"], teacher_update=o["teacher_update"],
            partial_batch=True)

    def partition(self, rng, batch: TrainBatch, k: int):
        n = batch.x.shape[1]
        if self.options["partition"] == "shuffled":
            order = rng.permutation(n, batch.rows)
        else:  # row order, no shuffle: who trains on which rows is fixed by the file's order
            order = torch.arange(n, device=batch.rows.device).expand(batch.models, n)
        return partition_from_order(order, batch.rows, k, self.partition_sizes(batch.rows, k))

    def train(self, batch: TrainBatch, hp: PateHP, *, epsilon, delta, observer, progress,
              make_teachers=None, preprocessor_spent: float = 0.0,
              control: str | None = None) -> Trained:
        cfg, nets = replace(self.loop_config(hp, batch.dim), control=control), self.nets(batch.dim)
        if make_teachers is not None:
            _check_remote(cfg, batch)
        if delta is None:  # fit without a delta: the generator's declared rule, per model
            delta = rule_deltas(self, batch.rows.cpu().numpy().astype(np.float64))
        gen, iters, eps_hat, student = train_pate_gan(
            batch, cfg, nets, epsilon=epsilon - preprocessor_spent, delta=delta, observer=observer,
            progress=progress, source=TeacherSource(lambda rng, b: self.partition(rng, b, cfg.k),
                                                    make_teachers), fast_step=fused_step.prepare)
        trained = to_trained(gen, nets, cfg, iters, eps_hat, z_sample=self.options["generation_noise"],
                             student=student)
        deltas = np.broadcast_to(np.asarray(delta, dtype=float), (batch.models,))
        trained.extra = [{"delta": float(d), "epsilon_training": float(epsilon - preprocessor_spent)}
                         for d in deltas]
        return trained


def _check_remote(cfg: LoopConfig, batch: TrainBatch) -> None:
    """Teacher shards on Ray run LocalTeachers' defaults: refuse what they would change."""
    short = cfg.batch > int(batch.rows.min()) // cfg.k
    if cfg.teacher_fakes != "shared" or cfg.teacher_update != "joint" or short:
        raise ConfigError("--parallel teachers needs -o teacher_fakes=shared, teacher_update=joint "
                          "and a batch no larger than N // k (the Ray shards share one fake "
                          "batch per round and take full batches)")
