"""One PATE-GAN iteration as one compiled graph (``RAUDIT_COMPILE=step``).

The eager loop (:mod:`raudit.generators.pategan.core.loop`) runs each iteration as some
hundred separate torch calls: per teacher round a latent draw, the generator, the
teachers' real and fake halves, their backward and an Adam step; per student round the
votes, the Laplace noise, the student and its Adam step; then the generator's step. Here
that whole tensor program, random draws included, is a pure function of the state
(parameters, Adam moments and step counts, both random streams' counters, the active
mask) compiled once per process and set-up (shapes, dtype, options) by inductor, which
fuses the element-wise work across layers, losses and optimisers. What is not tensor work
stays outside: the numpy accountant and the observer receive the votes, noise, labels and
rows the step returns, in the eager loop's order, after the call.

Same draws, not the same bits: the random streams hash the same positions (integer
arithmetic compiles exactly), but fusion reorders floating-point sums and inductor's
transcendental functions need not round like ATen's, so parameters drift from eager by
float rounding and a vote or a label on a knife edge may flip. Eager stays the reference
(tests/generators/test_fused_step.py states the measured agreement).

Supported set-ups (anything else runs eagerly, silently): CPU, the local teachers, plain
:class:`MLP` teachers and student, a plain MLP generator or one that declares itself
traceable (``fused_key``: smartnoise's residual layer-norm generator), Laplace votes without Confident-GNMax, no control, the unweighted
student loss, the joint teacher update; teacher batches with replacement (``paper``) or
the first batch of a fresh shuffle (``borealis``), shared or per-teacher fakes.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

from raudit.events import TeacherBatch, TeacherLoss, Votes
from raudit.generators.nn import compiled
from raudit.generators.nn.optim import adam_update
from raudit.generators.nn.fused import StepRNG, run_compiled
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core.aggregation import AGGREGATIONS
from raudit.generators.pategan.core.nets import PateNets, draw_z, vote_event
from raudit.generators.pategan.core.teachers import LocalTeachers, bce_logits


class Plan:
    """The constants of one set-up (what the compiled graph bakes in): the networks and
    their layouts, the loop options the step reads, and how the teachers train."""

    def __init__(self, cfg, nets, teachers: LocalTeachers, layouts: tuple, dtype: torch.dtype):
        self.cfg, self.nets, self.layouts, self.dtype = cfg, nets, layouts, dtype
        self.k, self.models = teachers.k, teachers.models
        self.t_batch, self.t_sample, self.t_partial = teachers.batch, teachers.sample, teachers.partial_batch
        self.t_lr, self.t_betas = teachers.opt.lr, (teachers.opt.b1, teachers.opt.b2)
        self.aggregate = AGGREGATIONS[cfg.aggregation]

    def key(self, shapes: tuple) -> tuple:
        """What a compiled graph is specific to: runs that differ only in what the step does
        not read (the accountant, eps, the stopping rule, the cap) share one graph."""
        c, n = self.cfg, self.nets
        nets = tuple(net_key(x) for x in (n.generator, n.student, n.teacher))
        step = (c.k, c.batch, c.noise_scale, c.aggregation, c.teacher_steps, c.student_steps, c.z_dim,
                c.z_train, c.generator_loss, c.lr, c.teacher_fakes, c.student_batch)
        return (step, nets, self.t_batch, self.t_sample, self.t_partial, self.t_lr, self.t_betas,
                self.dtype, shapes)


def net_key(net) -> tuple | None:
    """What a compiled graph bakes in of a network, or None where the step cannot trace it:
    a plain :class:`MLP` (its own forward) by its widths and activations; another network by
    its ``fused_key()``, which a network defines only when its forward with gradients enabled
    is a pure function of (parameters, input) that the step may call (smartnoise's generator)."""
    if type(net).__call__ is MLP.__call__:
        return ("mlp", tuple(net.widths), tuple(net.activations))
    key = getattr(net, "fused_key", None)
    return None if key is None else key()


def supported(cfg, nets, teachers, device: torch.device) -> bool:
    """Whether the fused step runs this set-up (module docstring); else the eager loop."""
    # the teachers and the student take ``shared=`` and ``logits=``: plain MLPs only
    plain = (all(type(n).__call__ is MLP.__call__ for n in (nets.student, nets.teacher))
             and net_key(nets.generator) is not None)
    return (device.type == "cpu" and isinstance(teachers, LocalTeachers) and plain
            and type(nets).generate is PateNets.generate and cfg.confident is None
            and cfg.control is None and cfg.noise == "laplace"
            and cfg.teacher_update == "joint" and teachers.update == "joint"
            and not teachers.opt.weight_decay and teachers.opt.max_grad_norm is None
            and teachers.sample in ("with-replacement", "first-shuffled")
            and cfg.teacher_fakes in ("shared", "per-teacher")
            and cfg.aggregation in AGGREGATIONS)


def _iteration(plan: Plan, state: tuple, data: tuple) -> tuple:
    """One iteration, a pure function: ``state`` -> (new state, records for the boundary)."""
    (g_p, g_m, g_v, g_t, s_p, s_m, s_v, s_t, t_p, t_m, t_v, t_t, base, t_base, active) = state
    keys, t_keys, table, ids, parts, sizes = data
    cfg, nets, k, mdl = plan.cfg, plan.nets, plan.k, plan.models
    rng, trng = StepRNG(keys, base, plan.dtype), StepRNG(t_keys, t_base, plan.dtype)
    act_t = active.repeat_interleave(k)
    gen = nets.generator
    layout_g, layout_s, layout_t = plan.layouts

    def generate(p, n):
        return gen(Stacked(p, layout_g), draw_z(rng, cfg.z_train, n, cfg.z_dim))

    rows_out, ties = [], []
    for _ in range(cfg.teacher_steps):
        if cfg.teacher_fakes == "per-teacher":
            fake = generate(g_p, k * cfg.batch).reshape(mdl * k, cfg.batch, -1)
        else:
            fake = generate(g_p, cfg.batch)
        shared = k if fake.shape[0] == mdl else 1
        if plan.t_sample == "with-replacement":
            pos = trng.integers(sizes, plan.t_batch)
        else:  # the first batch of a fresh shuffle; a tie is reported and the step redone eagerly
            keyv = trng.open_uniform(parts.shape[1])
            cols = torch.arange(parts.shape[1], device=keyv.device)[None, :]
            keyv = torch.where(cols < sizes, keyv, keyv + 2.0)
            vals, idx = torch.topk(keyv, plan.t_batch + 1, dim=1, largest=False, sorted=True)
            ties.append((vals[:, 1:] <= vals[:, :-1]).any())
            pos = torch.minimum(idx[:, :plan.t_batch], (sizes - 1).clamp(min=0))
        rows_out.append(torch.gather(parts, 1, pos).view(mdl, k, -1))
        rid = torch.gather(ids, 1, pos)
        fake = fake.detach()

        def teacher_loss(flat):
            p = Stacked(flat, layout_t)
            logits = nets.teacher(p, F.embedding(rid, table), logits=True)
            if plan.t_partial and plan.t_sample == "first-shuffled":
                per = F.binary_cross_entropy_with_logits(logits, torch.ones_like(logits), reduction="none")
                valid = (torch.arange(per.shape[1], device=per.device)[None, :] < sizes).to(per.dtype)
                real = ((per.squeeze(-1) * valid).sum(1) / valid.sum(1).clamp(min=1)).sum()
            else:
                real = bce_logits(logits, 1.0)
            return real + bce_logits(nets.teacher(p, fake, logits=True, shared=shared), 0.0)

        grad = torch.func.grad(teacher_loss)(t_p)
        t_p, t_m, t_v, t_t = adam_update(t_p, grad, t_m, t_v, t_t, act_t, plan.t_lr, plan.t_betas)
    votes = []
    for _ in range(cfg.student_steps):
        fake = generate(g_p, cfg.student_batch or cfg.batch).detach()
        prob = nets.teacher(Stacked(t_p, layout_t), fake, shared=k)
        n1 = (prob.squeeze(-1) > 0.5).view(mdl, k, -1).sum(dim=1)
        labels, noise = plan.aggregate(n1, cfg.k, rng, cfg.noise_scale)
        votes.append((n1, noise, labels))
        target = labels.to(fake.dtype)[..., None]

        def student_loss(flat):
            return bce_logits(nets.student(Stacked(flat, layout_s), fake, logits=True), target)

        grad = torch.func.grad(student_loss)(s_p)
        s_p, s_m, s_v, s_t = adam_update(s_p, grad, s_m, s_v, s_t, active, cfg.lr)
    z = draw_z(rng, cfg.z_train, cfg.batch, cfg.z_dim)
    s_fixed = s_p.detach()

    def generator_loss(flat):
        logits = nets.student(Stacked(s_fixed, layout_s), gen(Stacked(flat, layout_g), z), logits=True)
        if cfg.generator_loss == "saturating":
            return -F.softplus(logits).flatten(1).mean(1).sum()
        return bce_logits(logits, 1.0)

    grad = torch.func.grad(generator_loss)(g_p)
    g_p, g_m, g_v, g_t = adam_update(g_p, grad, g_m, g_v, g_t, active, cfg.lr)
    tie = torch.stack(ties).any() if ties else torch.zeros((), dtype=torch.bool)
    new = (g_p, g_m, g_v, g_t, s_p, s_m, s_v, s_t, t_p, t_m, t_v, t_t)
    n1s, noises, labels = (torch.stack([v[i] for v in votes]) for i in range(3))
    return new, torch.stack(rows_out), n1s, noises, labels, tie, rng.counter, trng.counter


class FusedStep:
    """The compiled iteration bound to one training run's objects (see :func:`prepare`)."""

    def __init__(self, plan: Plan, teachers: LocalTeachers, nets: tuple, rng: CounterRNG):
        self.plan, self.teachers, self.rng = plan, teachers, rng
        (self.gen, self.g_opt), (self.student, self.s_opt) = nets
        t, gen, student = teachers, self.gen, self.student
        self.data = (rng.keys, t.rng.keys, t.table, t.ids, t.parts, t.sizes)
        self.key = plan.key(tuple((tuple(x.shape), x.dtype) for x in self.data)
                            + (tuple(gen.flat.shape), tuple(student.flat.shape), tuple(t.params.flat.shape)))

    def __call__(self, active: torch.Tensor):
        """One iteration: updates the run's parameters, optimisers and streams in place and
        returns (rows (T, M, k, B), n1 (S, M, B), noise, labels (S, M, B)); None when the
        eager loop must take this iteration (a tie in a shuffle's keys, or no compiler)."""
        t, g, s = self.teachers, self.g_opt, self.s_opt
        base = torch.tensor(self.rng.counter, dtype=torch.int64)
        t_base = torch.tensor(t.rng.counter, dtype=torch.int64)
        state = (self.gen.flat.detach(), g.m, g.v, g.t, self.student.flat.detach(), s.m, s.v, s.t,
                 t.params.flat.detach(), t.opt.m, t.opt.v, t.opt.t, base, t_base, active)
        out = run_compiled(self.key, _iteration, self.plan, state, self.data)
        if out is None:
            return None
        new, rows, n1, noise, labels, tie, draws, t_draws = out
        if bool(tie):
            return None
        (gp, g.m, g.v, g.t, sp, s.m, s.v, s.t, tp, t.opt.m, t.opt.v, t.opt.t) = new
        self.gen.flat = gp.requires_grad_(True)
        self.student.flat = sp.requires_grad_(True)
        t.params.flat = tp.requires_grad_(True)
        self.rng.counter += int(draws)
        t.rng.counter += int(t_draws)
        return rows, n1, noise, labels

    def emit(self, it: int, cfg, out: tuple, sinks: tuple, first_rows, act_np: np.ndarray):
        """:func:`emit` for this run's teachers (the loop's :class:`~.loop.FastStep`)."""
        return emit(it, cfg, out, sinks, self.teachers, first_rows, act_np)


def prepare(cfg, nets, teachers, gen: Stacked, student: Stacked, g_opt, s_opt,
            rng: CounterRNG) -> FusedStep | None:
    """The fused step for this run when ``RAUDIT_COMPILE=step`` asks for it and the set-up is
    :func:`supported`; else None (the eager loop)."""
    if compiled.mode() != "step" or not supported(cfg, nets, teachers, gen.flat.device):
        return None
    layouts = (gen.layout, student.layout, teachers.params.layout)
    plan = Plan(cfg, nets, teachers, layouts, gen.flat.dtype)
    return FusedStep(plan, teachers, ((gen, g_opt), (student, s_opt)), rng)


def emit(it: int, cfg, out: tuple, sinks: tuple, teachers: LocalTeachers, first_rows,
         act_np: np.ndarray):
    """What the eager iteration hands the accountant and the observer (``sinks``), in its
    order, from the step's records ``out``; returns the first teacher batch (TeacherLoss's
    rows). The teachers' losses are read after the step: only the teacher rounds, which
    come first, move the teachers."""
    acct, observer = sinks
    rows, n1, noise, labels = out
    if observer is not None:
        for r in rows:
            first_rows = r if first_rows is None else first_rows
            rows_np = r.numpy()
            for t in range(cfg.k):
                observer(TeacherBatch(it, t, rows_np[:, t], act_np))
        if first_rows is not None:
            observer(TeacherLoss(it, teachers.losses_on(first_rows), act_np))
    for n1_np, noise_np, labels_np in zip(n1.numpy(), noise.numpy(), labels.numpy()):
        acct.compose(vote_event(cfg, n1_np, act_np))
        if observer is not None:
            observer(Votes(it, n1_np, cfg.k, cfg.noise_scale, noise_np, labels_np, act_np.copy(),
                           act_np, cfg.aggregation, cfg.noise))
    return first_rows
