"""One WGAN-GP iteration (`original`, `turing`) as one compiled graph (``RAUDIT_COMPILE=step``).

The counterpart of :mod:`raudit.generators.pategan.core.fused_step` for the discriminator-only
loop of :mod:`raudit.generators.wgan.gp`: per iteration ``teachers`` critic steps
(row draw, generator forward, noisy labels, the critic's loss with its gradient penalty,
whose input gradient is a second differentiation, and Adam), then the generator's step,
compiled once per process and set-up. The observer gets the rows and label noise after the
call, in the eager order. Same draws, float rounding apart (see fused_step's docstring).

Covered: CPU, the unconditional networks, either partition. Anything else stays eager.
"""

from __future__ import annotations

import torch

from raudit.events import LabelNoise, TeacherBatch
from raudit.generators.nn import compiled
from raudit.generators.nn.optim import adam_update
from raudit.generators.nn.stacked import Stacked
from raudit.generators.nn.fused import StepRNG, run_compiled
from raudit.generators.wgan.label_noise import noisy_labels
from raudit.generators.pategan.core.partitions import gather_rows, lowest_valid
from raudit.generators.pategan.core.nets import draw_z


class Plan:
    """The constants one compiled graph bakes in."""

    def __init__(self, hp, nets, sigma: float, layouts: tuple, dtype: torch.dtype):
        self.hp, self.nets, self.sigma, self.layouts, self.dtype = hp, nets, sigma, layouts, dtype

    def key(self, shapes: tuple) -> tuple:
        return ("wgan", self.hp.teachers, self.hp.batch, self.hp.lr, self.hp.gp_coef, self.hp.noise,
                self.hp.partition, self.hp.generator_widths, self.sigma, self.dtype, shapes)


def _critic_loss(plan: Plan, flat, real, fake, labels, e):
    """gp.critic_loss (unconditional) with the penalty's input gradient by torch.func."""
    nets, layout = plan.nets, plan.layouts[0]
    d = Stacked(flat, layout)
    out = nets.critic(d, torch.cat([real, fake], dim=1)).squeeze(-1)
    loss = ((1 - labels) * out).mean(1) - (labels * out).mean(1)
    inter = e * real + (1 - e) * fake
    grad = torch.func.grad(lambda xi: nets.critic(d, xi).sum())(inter)
    norm = torch.sqrt((grad ** 2 + 1e-8).sum(-1))
    return (loss + plan.hp.gp_coef * ((norm - 1) ** 2).mean(1)).sum()


def _iteration(plan: Plan, state: tuple, data: tuple) -> tuple:
    d_p, d_m, d_v, d_t, g_p, g_m, g_v, g_t, base = state
    keys, x, valid, parts, sizes = data
    hp, nets = plan.hp, plan.nets
    rng = StepRNG(keys, base, plan.dtype)
    ones = torch.ones(keys.shape[0], dtype=torch.bool)
    betas = (0.5, 0.999)
    gen = Stacked(g_p.detach(), plan.layouts[1])
    rows_out, noise_out = [], []
    for t in range(hp.teachers):
        z = draw_z(rng, "uniform-sym", hp.batch, nets.z_dim)
        if parts is None:
            rows = lowest_valid(rng.open_uniform(x.shape[1]), valid, hp.batch)
        else:
            part, size = parts[:, t], sizes[:, t]
            rows = torch.gather(part, 1, lowest_valid(rng.open_uniform(part.shape[1]), size, hp.batch))
        real = gather_rows(x, rows)
        fake = nets.generate(gen, z, None)
        labels, drawn = noisy_labels(rng, hp.batch, plan.sigma, hp.noise, with_noise=True)
        e = rng.uniform(hp.batch, 1)
        grad = torch.func.grad(lambda p: _critic_loss(plan, p, real, fake, labels, e))(d_p)
        d_p, d_m, d_v, d_t = adam_update(d_p, grad, d_m, d_v, d_t, ones, hp.lr, betas)
        rows_out.append(rows)
        noise_out.append(drawn)
    z = draw_z(rng, "uniform-sym", hp.batch, nets.z_dim)
    critic = Stacked(d_p.detach(), plan.layouts[0])

    def generator_loss(flat):
        fake = nets.generate(Stacked(flat, plan.layouts[1]), z, None)
        return (-nets.critic(critic, fake).squeeze(-1).mean(1)).sum()

    grad = torch.func.grad(generator_loss)(g_p)
    g_p, g_m, g_v, g_t = adam_update(g_p, grad, g_m, g_v, g_t, ones, hp.lr, betas)
    return (d_p, d_m, d_v, d_t, g_p, g_m, g_v, g_t), torch.stack(rows_out), torch.stack(noise_out), rng.counter


class WganStep:
    """The compiled iteration bound to one training run (see :func:`prepare`)."""

    def __init__(self, plan: Plan, nets: tuple, rng, data: tuple):
        self.plan, self.rng, self.data = plan, rng, data
        (self.critic, self.d_opt), (self.gen, self.g_opt) = nets
        shapes = tuple(None if t is None else (tuple(t.shape), t.dtype) for t in data)
        self.key = plan.key(shapes + (tuple(self.critic.flat.shape), tuple(self.gen.flat.shape)))

    def __call__(self):
        """One iteration in place; returns (rows (T, M, B), label noise (T, M, 2B)), or None
        when the eager loop must take it (no working compiler)."""
        d, g = self.d_opt, self.g_opt
        state = (self.critic.flat.detach(), d.m, d.v, d.t, self.gen.flat.detach(), g.m, g.v, g.t,
                 torch.tensor(self.rng.counter, dtype=torch.int64))
        out = run_compiled(self.key, _iteration, self.plan, state, self.data)
        if out is None:
            return None
        new, rows, noise, draws = out
        cp, d.m, d.v, d.t, gp, g.m, g.v, g.t = new
        self.critic.flat = cp.requires_grad_(True)
        self.gen.flat = gp.requires_grad_(True)
        self.rng.counter += int(draws)
        return rows, noise


def prepare(hp, nets, batch, sampler, models: tuple, rng, sigma: float) -> WganStep | None:
    """The fused step when ``RAUDIT_COMPILE=step`` asks for it and the set-up is covered;
    ``models`` = ((critic, its Adam), (generator, its Adam))."""
    if compiled.mode() != "step" or hp.conditional or batch.x.device.type != "cpu":
        return None
    (critic, _), (gen, _) = models
    plan = Plan(hp, nets, float(sigma), (critic.layout, gen.layout), batch.x.dtype)
    sizes = None if sampler.parts is None else sampler.sizes
    return WganStep(plan, models, rng, (rng.keys, batch.x, batch.rows, sampler.parts, sizes))


def emit(it: int, out: tuple, observer, sigma: float, active) -> None:
    """The eager loop's observer events of one iteration, in its order."""
    if observer is None:
        return
    rows, noise = out
    every = tuple(range(rows.shape[0]))  # the "teachers" are steps of one critic (gp.py)
    for t, (r, z) in enumerate(zip(rows.numpy(), noise.numpy())):
        observer(TeacherBatch(it, t, r, active, every))
        observer(LabelNoise(it, sigma, active, z))
