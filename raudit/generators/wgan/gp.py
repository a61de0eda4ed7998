"""The discriminator-only WGAN-GP loop shared by `original` and `turing` (spec sections 1, 4).

Neither port has PATE: one critic D, trained ``teachers`` times per iteration on
a fresh batch of real rows (drawn from ALL the data) and a batch of generated
rows, with the real/fake labels perturbed by noise and thresholded; then one
generator step. Per critic step, per model::

    all  = concat(real batch, fake batch)
    M    = ([1]*B + [0]*B + N(0, sigma)) > 0.5
    loss = mean((1 - M) * D(all)) - mean(M * D(all)) + gp_coef * GP
    GP   = mean((sqrt(sum(grad_x D(x_hat)^2 + 1e-8)) - 1)^2),  x_hat = e*real + (1-e)*fake, e ~ U(0,1)

and G minimises -mean(D(G(z))), z ~ U(-1, 1). Adam(lr, beta1=0.5, beta2=0.999)
for both. There is no accountant: the run is a fixed number of iterations.

All M models train in lockstep. Losses are summed over models and the critic
has no cross-sample layers, so the input gradient of the summed output is each
sample's own gradient and parameter gradients never mix models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch

from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities
from raudit.events import LabelNoise, Observer, TeacherBatch
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.wgan import step as wgan_step
from raudit.generators.wgan.label_noise import label_noise_sigma, noisy_labels
from raudit.generators.pategan.core.options import PRESETS, check_preset, choice, positive, teachers_for
from raudit.generators.pategan.core.partitions import gather_rows, lowest_valid, shuffled_partition
from raudit.generators.pategan.core.nets import draw_z


@dataclass(frozen=True)
class WganGpHP:
    """Resolved hyperparameters of one training call (models with equal HP train together)."""

    teachers: int  # critic steps per iteration (upstream `num_teachers`)
    batch: int
    max_iter: int
    lr: float
    gp_coef: float
    noise: str
    delta_bug: str
    partition: str  # "none": every step draws from all rows | "disjoint": step t from chunk t
    conditional: bool
    generator_widths: str  # "d,d,d" (the ports) | "d,d/2,d" (the paper)
    shuffle_output: bool


class WganNets:
    """G: [z, (y)] -> h (tanh) -> h or h/2 (tanh) -> dx (sigmoid); D: [x, (y)] -> h (ReLU) -> h (ReLU) -> 1.

    ``d`` is the encoded width; in conditional mode its last column is the label y,
    so the networks model dx = d - 1 features and take y as an extra input.
    Weights N(0, 1/(fan_in/2)) (the TF1 code's `xavier_init`), zero biases.
    """

    def __init__(self, d: int, *, conditional: bool, widths: str):
        self.c = 1 if conditional else 0
        self.dx = d - self.c
        self.z_dim = max(1, self.dx // 4)  # int(d/4); upstream would build a 0-wide input for d < 4
        mid = max(1, self.dx // 2) if widths == "d,d/2,d" else self.dx
        self.generator = MLP([self.z_dim + self.c, self.dx, mid, self.dx], ["tanh", "tanh", "sigmoid"],
                             init="he_normal")
        self.critic = MLP([self.dx + self.c, self.dx, self.dx, 1], ["relu", "relu", "linear"],
                          init="he_normal")

    def generate(self, g: Stacked, z: torch.Tensor, y: torch.Tensor | None) -> torch.Tensor:
        """Encoded rows (M, B, d): G's features, then y unchanged in conditional mode."""
        if y is None:
            return self.generator(g, z)
        return torch.cat([self.generator(g, torch.cat([z, y], dim=-1)), y], dim=-1)


class RowSampler:
    """Which rows a critic (or conditional generator) step reads, without replacement."""

    def __init__(self, rng: CounterRNG, rows: torch.Tensor, n_max: int, hp: WganGpHP):
        self.rows, self.n_max, self.b = rows, n_max, hp.batch
        self.parts = None
        if hp.partition == "disjoint":  # an ablation: shuffle once, step t owns chunk t
            self.parts, self.sizes = shuffled_partition(rng, rows, n_max, hp.teachers)

    def draw(self, rng: CounterRNG, step: int | None) -> torch.Tensor:
        if self.parts is None or step is None:
            return lowest_valid(rng.open_uniform(self.n_max), self.rows, self.b)
        part, size = self.parts[:, step], self.sizes[:, step]
        return torch.gather(part, 1, lowest_valid(rng.open_uniform(part.shape[1]), size, self.b))


def critic_loss(nets: WganNets, d: Stacked, real: torch.Tensor, fake: torch.Tensor,
                labels: torch.Tensor, e: torch.Tensor, gp_coef: float) -> torch.Tensor:
    """The critic loss of every model, summed over models."""
    out = nets.critic(d, torch.cat([real, fake], dim=1)).squeeze(-1)  # (M, 2B)
    loss = ((1 - labels) * out).mean(1) - (labels * out).mean(1)
    dx = nets.dx
    inter = (e * real[..., :dx] + (1 - e) * fake[..., :dx]).detach().requires_grad_(True)
    y = real[..., dx:]  # empty unless conditional; the gradient is taken w.r.t. x only, as upstream
    # unconditional: y has no columns, and the concatenation would only copy inter (and
    # its gradients, twice over with create_graph); the same values either way
    x_inter = torch.cat([inter, y], dim=-1) if y.shape[-1] else inter
    grad, = torch.autograd.grad(nets.critic(d, x_inter).sum(), inter, create_graph=True)
    norm = torch.sqrt((grad ** 2 + 1e-8).sum(-1))
    return (loss + gp_coef * ((norm - 1) ** 2).mean(1)).sum()


def train_wgan_gp(batch: TrainBatch, hp: WganGpHP, *, sigma: float, observer: Observer | None = None,
                  progress: Callable[[int], None] | None = None) -> Trained:
    """Train the M models of ``batch`` for exactly ``hp.max_iter`` iterations."""
    m, n_max, d = batch.x.shape
    rng = CounterRNG(batch.seeds, purpose="wgan-gp", device=batch.x.device, dtype=batch.x.dtype)
    nets = WganNets(d, conditional=hp.conditional, widths=hp.generator_widths)
    critic, gen = nets.critic.create(rng), nets.generator.create(rng)  # TF builds D first
    d_opt = Adam(critic, lr=hp.lr, betas=(0.5, 0.999))
    g_opt = Adam(gen, lr=hp.lr, betas=(0.5, 0.999))
    sampler = RowSampler(rng, batch.rows, n_max, hp)
    active = np.ones(m, dtype=bool)  # fixed iteration count: every model trains to the end
    cond = nets.dx if hp.conditional else None
    fused = wgan_step.prepare(hp, nets, batch, sampler, ((critic, d_opt), (gen, g_opt)), rng, sigma)
    for it in range(hp.max_iter):
        out = fused() if fused is not None else None  # RAUDIT_COMPILE=step
        if out is not None:
            wgan_step.emit(it, out, observer, sigma, active)
        else:
            for t in range(hp.teachers):
                z = draw_z(rng, "uniform-sym", hp.batch, nets.z_dim)
                rows = sampler.draw(rng, t)
                real = gather_rows(batch.x, rows)
                with torch.no_grad():
                    fake = nets.generate(gen, z, None if cond is None else real[..., cond:])
                labels = noisy_labels(rng, hp.batch, sigma, hp.noise, with_noise=observer is not None)
                if observer is not None:
                    labels, drawn = labels
                e = rng.uniform(hp.batch, 1)
                d_opt.zero_grad()
                critic_loss(nets, critic, real, fake, labels, e, hp.gp_coef).backward(inputs=[critic.flat])
                d_opt.step()
                if observer is not None:
                    # every "teacher" is a step of the one critic: a row moves them all,
                    # whatever ``partition`` says (a disjoint partition of ONE network's steps)
                    observer(TeacherBatch(it, t, rows.cpu().numpy(), active,
                                          tuple(range(hp.teachers))))
                    observer(LabelNoise(it, sigma, active, drawn.cpu().numpy()))
            z = draw_z(rng, "uniform-sym", hp.batch, nets.z_dim)
            y = None  # the conditional generator step reads the labels of a random real batch
            if cond is not None:
                y = gather_rows(batch.x, sampler.draw(rng, None))[..., cond:]
            g_opt.zero_grad()
            fake = nets.generate(gen, z, y)
            (-nets.critic(critic, fake).squeeze(-1).mean(1)).sum().backward(inputs=[gen.flat])
            g_opt.step()
        if progress is not None:
            progress(it + 1)
    return _trained(gen, nets, batch, hp, sigma)


def _trained(gen: Stacked, nets: WganNets, batch: TrainBatch, hp: WganGpHP, sigma: float) -> Trained:
    m = batch.models
    params = gen
    if hp.conditional:
        # Sampling conditions on the model's own training labels, so they travel with
        # the generator's parameters (FittedBatch selects models by slicing them).
        labels, rows = batch.labels, batch.rows.to(batch.x.dtype)[:, None]
        layout = dict(gen.layout)
        p = gen.flat.shape[1]
        layout["labels"] = (p, (labels.shape[1],))
        layout["rows"] = (p + labels.shape[1], (1,))
        params = Stacked(torch.cat([gen.flat.detach(), labels, rows], dim=1), layout)

    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        z = draw_z(rng, "uniform-sym", n, nets.z_dim)
        y = None
        if hp.conditional:  # the training labels in order, repeated if n > N (upstream: n = N)
            idx = torch.arange(n, device=z.device)[None, :] % p["rows"].long()
            y = torch.gather(p["labels"], 1, idx)[..., None]
        x = nets.generate(p, z, y)
        if hp.shuffle_output:  # turing permutes the decoded rows
            x = gather_rows(x, rng.permutation(n))
        return x

    extra = {"label_noise_sigma": sigma, "discriminator_steps": hp.teachers}
    return Trained(params, sample_fn, [hp.max_iter] * m, [float("nan")] * m, [dict(extra) for _ in range(m)])


class WganGpGenerator(BatchedGenerator):
    """What `original` and `turing` share: option checks, presets and the training call.

    Subclasses set ``default_max_iter``, ``default_gp_coef`` (None: the number
    of critic steps, turing's choice), ``delta_bugs`` (allowed sigma rules) and
    ``encoder(seed)``; their constructors list every option explicitly.
    """
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)

    presets = PRESETS
    capabilities = Capabilities(device=True, progress=True, events=("teacher_batch", "label_noise"))
    default_max_iter: ClassVar[int] = 10_000
    default_gp_coef: ClassVar[float | None] = 10.0
    delta_bugs: ClassVar[tuple[str, ...]] = ("xor", "correct")
    shuffle_output: ClassVar[bool] = False

    def _check(self, o: dict[str, Any]) -> None:
        check_preset(o["preset"])
        for name in ("teachers", "batch", "max_iter"):
            positive(name, o[name], integer=True, allow_none=True)
        positive("lr", o["lr"])
        positive("gp_coef", o["gp_coef"], allow_none=True)
        choice("noise", o["noise"], ("gaussian", "laplace"))
        choice("delta_bug", o["delta_bug"], self.delta_bugs)
        choice("partition", o["partition"], ("none", "disjoint"))
        choice("bounds", o["bounds"], ("data", "metadata"))
        choice("integers", o["integers"], ("round", "truncate", "none"))
        if o["generator_widths"] is not None:
            choice("generator_widths", o["generator_widths"], ("d,d,d", "d,d/2,d"))

    def resolve(self, n_rows: int, n_cols: int) -> WganGpHP:
        o = self.options
        k = teachers_for(n_rows, o["teachers"])
        if self.preset == "paper":  # the paper's batch and generator widths (table 3, column 1)
            batch = o["batch"] or min(64, n_rows)
            widths = o["generator_widths"] or "d,d/2,d"
        else:  # the study's harness: batch = min(128, N // k)
            batch = o["batch"] or max(1, min(128, n_rows // k))
            widths = o["generator_widths"] or "d,d,d"
        limit = n_rows // k if o["partition"] == "disjoint" else n_rows
        if batch > limit:
            raise ConfigError(f"batch {batch} is larger than the {limit} rows a critic step can draw "
                              f"from (batches are drawn without replacement); use --option batch={limit}")
        gp = o["gp_coef"] if o["gp_coef"] is not None else (self.default_gp_coef or float(k))
        return WganGpHP(k, batch, o["max_iter"] or self.default_max_iter, o["lr"], float(gp),
                        o["noise"], o["delta_bug"], o["partition"], bool(o.get("conditional", False)),
                        widths, bool(o.get("shuffle", self.shuffle_output)))

    def train(self, batch: TrainBatch, hp: WganGpHP, *, epsilon, delta, observer, progress) -> Trained:
        sigma = label_noise_sigma(epsilon, delta, hp.delta_bug)
        return train_wgan_gp(batch, hp, sigma=sigma, observer=observer, progress=progress)
