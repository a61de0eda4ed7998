"""`gan`: the non-private GAN baseline (the PATE-GAN paper's tables' upper bound).

Network widths are the paper's: generator {d, d/2, d} with ReLU hidden layers,
discriminator of depth 3, widths {d, d, 1}, Xavier init. Per iteration: one
discriminator step on a batch of real rows (uniform, with replacement) and a batch
of generated rows (BCE on logits), one non-saturating generator step; Adam lr 1e-4,
batch 64, 10,000 iterations by default (the study's cap). Nothing here is private,
and bounds are read off the records unless the metadata declares them public.

Why the default is not the paper's literal GAN (``preset="paper"`` keeps it):
measured on cervical (seed 1, 4,000 iterations), the literal version collapses.
With z ~ U[0, 1)^d and a sigmoid output, the generated columns' standard deviation
starts at 0.02 (the real table's: 0.18) and falls to 0.01; the 6 % positive label
column comes out near 0.03 for every row, so every decoded label is 0 (utility
undefined). Neither a normal z, Adam beta1 0.5, leaky ReLU, nor lr 10^-5..10^-3 fixed
it alone. Two changes did, together (LR on the synthetic rows, scored on the real
test split: AUC 0.98 after 4,000 iterations):

* ``output="linear"`` with ``z="normal"``: a linear last layer and z ~ N(0, I)
  keep the generator's output spread (std 0.14-0.24); decoding clips to the bounds.
* ``conditional=True``: the label is drawn from the training table's label
  marginal (non-private, like everything here), fed to the generator next to z
  and written as the row's label; the discriminator sees whole rows as before.
  An imbalanced binary column generated as one continuous output rounds to the
  majority class for every row (the second collapse above).
"""

from __future__ import annotations

import numpy as np
import torch

from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.generators.capabilities import Capabilities
from raudit.events import RealRowsRead, TeacherBatch
from raudit.generators.gan.common import critic_of, gather_rows, paper_discriminator, uniform_rows
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core.encoding import MinMaxEncoder
from raudit.generators.pategan.core.options import choice, positive
from raudit.generators.pategan.core.teachers import bce_logits

PRESETS = {  # the non-collapsing default, and the paper's GAN taken literally
    "default": {"conditional": True, "output": "linear", "z": "normal"},
    "paper": {"conditional": False, "output": "sigmoid", "z": "uniform"},
}


def label_marginal(batch: TrainBatch) -> torch.Tensor:
    """(M, 3): the encoded values of the two label classes and the share of the upper one
    (the label is binary by the dataset contract; its encoding depends on the bounds)."""
    rows = torch.arange(batch.x.shape[1], device=batch.x.device)[None, :] < batch.rows[:, None]
    y = batch.x[..., -1]
    lo = torch.where(rows, y, torch.inf).amin(1)
    hi = torch.where(rows, y, -torch.inf).amax(1)
    share = ((y > (lo + hi)[:, None] / 2) & rows).sum(1) / batch.rows
    return torch.stack([lo, hi, share.to(y.dtype)], 1)


class VanillaGan(BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "gan"
    description = "non-private GAN, the PATE-GAN paper's widths (utility upper bound)"
    presets = tuple(PRESETS)
    capabilities = Capabilities(device=True, progress=True, critic=True, events=("teacher_batch",))

    def __init__(self, *, preset: str = "default", iterations: int = 10_000,
                 max_iter: int | None = None, batch: int = 64, lr: float = 1e-4,
                 conditional: bool | None = None, output: str | None = None,
                 z: str | None = None, device: str | None = None, dtype: str | None = None):
        if preset not in PRESETS:
            raise ConfigError(f"gan presets: {', '.join(PRESETS)}; got {preset!r}")
        positive("iterations", iterations, integer=True)
        positive("max_iter", max_iter, integer=True, allow_none=True)
        positive("batch", batch, integer=True)
        positive("lr", lr)
        base = PRESETS[preset]
        conditional = base["conditional"] if conditional is None else conditional
        if not isinstance(conditional, bool):
            raise ConfigError(f"conditional must be true or false, got {conditional!r}")
        output = choice("output", output or base["output"], ("linear", "sigmoid"))
        z = choice("z", z or base["z"], ("normal", "uniform"))
        super().__init__(preset=preset, device=device, dtype=dtype, iterations=iterations,
                         max_iter=max_iter, batch=batch, lr=lr, conditional=conditional,
                         output=output, z=z)

    def resolve(self, n_rows: int, n_cols: int) -> tuple:
        o = self.options
        return (min(o["iterations"], o["max_iter"] or o["iterations"]), o["batch"])

    def encoder(self, seed: int) -> MinMaxEncoder:
        return MinMaxEncoder(eps=0.0, clip=True, integers="round", bounds="metadata")

    def generator_net(self, d: int) -> MLP:
        """The paper's widths; a conditional generator takes the label as one more input
        and writes the d - 1 feature columns."""
        c = int(self.options["conditional"])
        return MLP([d + c, d, max(1, d // 2), d - c], ["relu", "relu", self.options["output"]])

    def train(self, batch: TrainBatch, hp, *, epsilon, delta, observer, progress) -> Trained:
        iters, b = hp
        d, m = batch.dim, batch.models
        o = self.options
        rng = CounterRNG(batch.seeds, purpose="gan", device=batch.x.device, dtype=batch.x.dtype)
        g_net, d_net = self.generator_net(d), paper_discriminator(d)
        gen, disc = g_net.create(rng), d_net.create(rng)
        marginal = label_marginal(batch) if o["conditional"] else None
        generate = _generator(g_net, d, o["z"], marginal)
        g_opt, d_opt = Adam(gen, lr=o["lr"]), Adam(disc, lr=o["lr"])
        active = np.ones(m, dtype=bool)
        for it in range(iters):
            idx = uniform_rows(rng, batch.rows, b)
            if observer is not None:
                observer(TeacherBatch(it, -1, idx.cpu().numpy(), active))
                observer(RealRowsRead(it, "the discriminator", active.copy()))
            with torch.no_grad():
                fake = generate(gen, rng, b)
            d_opt.zero_grad()
            (bce_logits(d_net(disc, gather_rows(batch.x, idx), logits=True), 1.0)
             + bce_logits(d_net(disc, fake, logits=True), 0.0)).backward()
            d_opt.step()
            g_opt.zero_grad()
            bce_logits(d_net(disc, generate(gen, rng, b), logits=True), 1.0).backward()
            g_opt.step()
            if progress is not None:
                progress(it + 1)
        if marginal is not None:  # the marginal travels with the weights (sampling selects models)
            weights = {n: t.detach() for n, t in gen.views().items()}
            gen = Stacked.create({**g_net.shapes(), "label": (3,)}, {**weights, "label": marginal})
        sample_fn = _generator(g_net, d, o["z"], None if marginal is None else "stored")
        return Trained(gen, sample_fn, [iters] * m, [float("nan")] * m, critic=critic_of(d_net, disc))


def _generator(net: MLP, d: int, z_kind: str, marginal):
    """G(p, rng, n) -> (M, n, d) encoded rows. ``marginal`` None: unconditional;
    a tensor (M, 3): labels drawn from it; "stored": read it from p["label"]."""
    z_dim = net.widths[0] - (marginal is not None)

    def gen(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        z = rng.normal(n, z_dim) if z_kind == "normal" else rng.uniform(n, z_dim)
        if marginal is None:
            return net(p, z)
        lab = p["label"] if isinstance(marginal, str) else marginal
        lo, hi, share = (lab[:, i, None, None] for i in range(3))
        y = torch.where(rng.uniform(n, 1) < share, hi, lo)
        return torch.cat([net(p, torch.cat([z, y], -1)), y], -1)
    return gen
