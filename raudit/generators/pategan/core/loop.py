"""The PATE-GAN training loop on the batched engine (Algorithm 1, and the ports that keep its shape).

One call trains the M models of a :class:`TrainBatch` in lockstep. Per iteration:
``teacher_steps`` rounds in which every teacher takes one step on its real
batch and a shared fake batch; ``student_steps`` rounds in which a fake batch
is labelled by the noisy teacher vote, the accountant is charged and the
student takes one step; then one generator step against the student. A model
stops when its eps_hat reaches eps (checked after the iteration, as in the
paper, or at the top of the loop, as smartnoise does); ``active`` masks it out
of every later update while the others go on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import torch

from raudit.accountants import Accountant, create
from raudit.generators.batch_types import Critic, TrainBatch, Trained
from raudit.events import (AccountantStep, GradientVotes, Observer, TeacherBatch,
                           TeacherLoss, Votes)
from raudit.generators.nn import mlp_grad, whole
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked
from raudit.generators.pategan.core import teachers as teachers_mod
from raudit.generators.pategan.core.aggregation import aggregator, confident_votes
from raudit.generators.pategan.core.nets import (EpsilonTooSmall, LoopConfig, PateNets,
                                                 TeacherFakes, draw_z, fakes, vote_event)
from raudit.generators.pategan.core.teachers import (LocalTeachers, TeacherTraining, bce_logits,
                                                teacher_rng)


def make_accountant(cfg: LoopConfig, models: int) -> Accountant:
    """The accountant named by ``cfg``: PATE moments for Laplace votes, a dp_accounting one
    (``rdp``/``pld``, no PATE parameters) for Gaussian (GNMax) votes."""
    if cfg.noise == "gaussian":
        return create(cfg.accountant, models=models)
    return create(cfg.accountant, models=models, lam=cfg.lam, orders=cfg.orders, k=cfg.k)


class FastStep(Protocol):
    """A whole iteration in one call, bound to one run (``RAUDIT_COMPILE=step``:
    :class:`raudit.generators.pategan.core.fused_step.FusedStep`); the loop takes it as a
    strategy and imports no variant."""

    def __call__(self, active: torch.Tensor) -> tuple | None:
        """Take the iteration in place, returning its records; None: the eager loop takes it."""

    def emit(self, it: int, cfg: LoopConfig, out: tuple, sinks: tuple, first_rows: Any,
             act_np: np.ndarray) -> Any:
        """Hand the records to (accountant, observer) as the eager loop would; returns the
        first teacher batch."""


# (cfg, nets, teachers, generator, student, their Adams, rng) -> the run's step, or None
FastStepFactory = Callable[[LoopConfig, PateNets, Any, Stacked, Stacked, Adam, Adam, CounterRNG],
                           "FastStep | None"]


@dataclass(frozen=True)
class TeacherSource:
    """Where a run's teacher ensemble comes from.

    ``partition(rng, batch) -> (parts, sizes)`` draws the teachers' data.
    ``make_teachers(batch, parts, sizes, cfg, net)`` builds the ensemble elsewhere
    (e.g. shards on Ray actors) from the same partition; ``teachers`` may also be
    given ready-made. Both default to :class:`LocalTeachers`.
    """

    partition: Callable[[CounterRNG, TrainBatch], tuple[torch.Tensor, torch.Tensor]] | None = None
    make_teachers: Callable[..., Any] | None = None
    teachers: Any = None  # LocalTeachers, or a stand-in with its step/votes (engine/teachers.py)


def train_pate_gan(batch: TrainBatch, cfg: LoopConfig, nets: PateNets, *, epsilon: float,
                   delta: float | np.ndarray, observer: Observer | None = None,
                   progress: Callable[[int], None] | None = None,
                   source: TeacherSource = TeacherSource(), accountant: Accountant | None = None,
                   fast_step: FastStepFactory | None = None,
                   ) -> tuple[Stacked, list[int], list[float], Stacked]:
    """Train every model of ``batch``; returns generator params, iterations, eps_hat and
    the student's params (kept for the white-box threat model only).

    ``source`` says how the teachers are drawn and built (:class:`TeacherSource`).
    ``delta`` may hold one value per model. ``accountant`` may come already charged
    (``fixed`` charges its DP bounds before training); by default a fresh one of
    ``cfg.accountant``. ``fast_step`` may take whole iterations (:class:`FastStep`); it
    returns None where it does not apply, and any iteration it hands back runs eagerly.
    """
    partition, teachers, make_teachers = source.partition, source.teachers, source.make_teachers
    if teachers is None and partition is None:
        raise ValueError("train_pate_gan needs ready teachers or a partition to draw them from")
    m, dev = batch.models, batch.x.device
    rng = CounterRNG(batch.seeds, purpose="pategan", device=dev, dtype=batch.x.dtype)
    gen = nets.generator.create(rng)
    student = nets.student.create(rng)
    if teachers is None and make_teachers is not None and partition is not None:
        parts, sizes = partition(rng, batch)
        teachers = make_teachers(batch, parts, sizes, cfg, nets.teacher)
    elif teachers is None and partition is not None:
        parts, sizes = partition(rng, batch)
        trng = teacher_rng(batch.seeds, cfg.k, device=dev, dtype=batch.x.dtype)
        teachers = LocalTeachers(nets.teacher, trng, batch.x, parts, sizes, TeacherTraining(
            cfg.batch, cfg.teacher_rate, sample=cfg.teacher_sample, update=cfg.teacher_update,
            partial_batch=cfg.partial_batch))
    g_opt, s_opt = Adam(gen, lr=cfg.lr), Adam(student, lr=cfg.lr)
    fused = None if fast_step is None else fast_step(cfg, nets, teachers, gen, student, g_opt,
                                                     s_opt, rng)
    # The loop only emits votes and asks for eps; the accountant does the math.
    acct = make_accountant(cfg, m) if accountant is None else accountant
    aggregate = aggregator(cfg.noise, cfg.aggregation, cfg.control)
    active = torch.ones(m, dtype=torch.bool, device=dev)
    iters = np.zeros(m, dtype=np.int64)
    eps_hat = acct.eps(delta)
    first_rows = None  # each teacher's first real batch, the fixed subset of TeacherLoss
    it = 0
    while cfg.max_iter is None or it < cfg.max_iter:
        if cfg.check == "top":
            stop = eps_hat > epsilon
            if it == 0 and stop.any():
                raise EpsilonTooSmall(
                    f"epsilon {epsilon} is below the accountant's floor {float(eps_hat.min()):.4f} "
                    f"(log(1/delta)/L with delta={delta}, L={cfg.orders}); raise epsilon or delta")
            active &= torch.as_tensor(~stop, device=dev)
        if not bool(active.any()):
            break
        act_np = active.cpu().numpy().copy()  # events keep it: never a view of the live mask
        upd = None if act_np.all() else active  # masked optimiser steps only when needed
        out = fused(active) if fused is not None else None  # RAUDIT_COMPILE=step
        if fused is not None and out is not None:
            first_rows = fused.emit(it, cfg, out, (acct, observer), first_rows, act_np)
        else:
            for _ in range(cfg.teacher_steps):
                if cfg.teacher_fakes != "per-teacher":
                    rows = teachers.step(fakes(nets, gen, rng, cfg, cfg.batch), upd)
                elif isinstance(teachers, LocalTeachers) and nets.block_elements and dev.type == "cpu":
                    made = TeacherFakes(nets, gen, rng, cfg)  # made per block of the teachers' step
                    rows = teachers.step(mlp_grad.Blockwise(cfg.batch, made), upd)
                    assert made.counter is not None  # the step made every block's fakes
                    rng.counter = made.counter
                else:  # (M, k*B, d) -> (M*k, B, d), teacher-major
                    fake = fakes(nets, gen, rng, cfg, cfg.k * cfg.batch).reshape(m * cfg.k, cfg.batch, -1)
                    rows = teachers.step(fake, upd)
                if observer is not None:
                    first_rows = rows if first_rows is None else first_rows
                    rows_np = rows.cpu().numpy()
                    for t in range(cfg.k):
                        observer(TeacherBatch(it, t, rows_np[:, t], act_np))
            if observer is not None and first_rows is not None and hasattr(teachers, "losses_on"):
                observer(TeacherLoss(it, teachers.losses_on(first_rows), act_np))
            for _ in range(cfg.student_steps):
                with torch.no_grad():
                    fake = fakes(nets, gen, rng, cfg, cfg.student_batch or cfg.batch)
                    n1 = teachers.votes(fake)
                    if cfg.confident is None:
                        labels, noise = aggregate(n1, cfg.k, rng, cfg.noise_scale)
                        answered = None
                    else:
                        labels, noise, thr_noise, answered = confident_votes(
                            n1, cfg.k, rng, cfg.confident, cfg.control)
                n1_np = n1.cpu().numpy()
                ans_np = None if answered is None else answered.cpu().numpy()
                acct.compose(vote_event(cfg, n1_np, act_np, ans_np))
                if observer is not None and answered is None:
                    observer(Votes(it, n1_np, cfg.k, cfg.noise_scale, noise.cpu().numpy(),
                                   labels.cpu().numpy(), act_np.copy(), act_np, cfg.aggregation,
                                   cfg.noise))
                elif observer is not None:
                    observer(_gradient_votes(it, cfg, n1_np, thr_noise, ans_np, labels, act_np))
                s_opt.zero_grad()
                target = labels.to(fake.dtype)[..., None]
                if answered is None and teachers_mod.HAND_GRAD and mlp_grad.supported(nets.student, dev):
                    # autograd's gradient of the mean BCE below, by hand (nn/mlp_grad.py)
                    student.flat.grad = mlp_grad.bce_grad(
                        nets.student, student, [(fake, target, 1.0 / fake.shape[1])], align=1)
                else:
                    logits = nets.student(student, fake, logits=True)
                    (bce_logits(logits, target) if answered is None else
                     student_loss(logits, target, answered)).backward()
                s_opt.step(upd)
            g_opt.zero_grad()
            # through the student's input only: its parameters' gradient would be discarded
            # (each student round starts from zero_grad), so autograd is not asked for it
            judge = Stacked(student.flat.detach(), student.layout)
            z = draw_z(rng, cfg.z_train, cfg.batch, cfg.z_dim)
            hand = None
            if cfg.generator_loss == "non-saturating" and teachers_mod.HAND_GRAD:
                hand = nets.generator_grad(gen, judge, z)  # autograd's bits, no graph
            if hand is not None:
                gen.flat.grad = hand
            else:
                logits = nets.student(judge, nets.generate(gen, z), logits=True)
                if cfg.generator_loss == "saturating":  # minimise mean log(1 - S(G(z)))
                    loss = -whole.softplus(logits).flatten(1).mean(1).sum()  # same bits in any chunk
                else:
                    loss = bce_logits(logits, 1.0)
                loss.backward()
            g_opt.step(upd)
        iters += act_np
        it += 1
        # a planned run asks for eps only when someone watches, and at the end (an RDP
        # conversion per iteration would cost more than the networks)
        last = cfg.max_iter is not None and it >= cfg.max_iter
        if cfg.check != "planned" or observer is not None or last:
            eps_hat = acct.eps(delta)
        if observer is not None:
            moments = getattr(acct, "alpha", np.zeros((m, 0)))  # dp_accounting ones keep no moments
            observer(AccountantStep(it - 1, eps_hat.copy(), moments.copy(), act_np))
        if progress is not None:
            progress(it)
        if cfg.check == "after":
            active &= torch.as_tensor(eps_hat < epsilon, device=dev)
    return gen, iters.tolist(), [float(e) for e in eps_hat], student


def student_loss(logits: torch.Tensor, target: torch.Tensor, answered: torch.Tensor) -> torch.Tensor:
    """The student's BCE, per model the mean over the answered queries (summed over models):
    only answered queries carry a label (Confident-GNMax)."""
    w = answered.to(target.dtype)[..., None]
    per = whole.bce_with_logits(logits, target)  # the same bits in any chunk (nn/whole.py)
    return ((per * w).flatten(1).sum(1) / w.flatten(1).sum(1).clamp(min=1.0)).sum()


def _gradient_votes(it, cfg: LoopConfig, n1: np.ndarray, thr_noise, answered: Any, labels,
                    active: np.ndarray) -> GradientVotes:
    """A Confident-GNMax batch as the observed event G-PATE emits (one coordinate, two bins):
    the transcript turns it into a :class:`ConfidentGNMax` release."""
    counts = np.stack([cfg.k - n1, n1], axis=-1)[:, :, None, :]
    choice = np.where(answered, labels.cpu().numpy().astype(np.int64), -1)[..., None]
    c = cfg.confident
    assert c is not None  # only Confident-GNMax batches come here
    return GradientVotes(it, counts, cfg.k, c.threshold, c.sigma1, c.sigma2,
                         thr_noise.cpu().numpy()[..., None], answered[..., None], choice,
                         active.copy(), active)


def to_trained(gen: Stacked, nets: PateNets, cfg: LoopConfig, iters, eps_hat, z_sample: str,
               student: Stacked | None = None) -> Trained:
    """Wrap the loop's output; generation may draw z from another distribution (a port's bug).
    ``student``: the trained student, the critic a white-box attacker reads."""
    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        return nets.generate(p, draw_z(rng, z_sample, n, cfg.z_dim))

    def score(p: Stacked, x: torch.Tensor) -> torch.Tensor:
        return nets.student(p, x, logits=True)
    critic = None if student is None else Critic(student, score)
    return Trained(gen, sample_fn, iters, eps_hat, critic=critic)
