"""`gan`: the non-private GAN with the PATE-GAN paper's architecture (its tables' upper bound).

Generator {d, d/2, d} with ReLU hidden layers and a sigmoid output on [0, 1]^d,
z ~ U[0, 1)^d; discriminator of depth 3, widths {d, d, 1}, sigmoid output (the
paper's student, trained here on real rows). Per iteration: one discriminator step
on a batch of real rows (uniform, with replacement) and a batch of generated rows
(BCE), one non-saturating generator step. Adam lr 1e-4, batch 64, Xavier init (the
paper's). Iterations: 10,000 by default (the study's cap); nothing here is private,
and bounds are read off the records unless the metadata declares them public.
"""

from __future__ import annotations

import numpy as np
import torch

from raudit.generators.batched import BatchedGenerator, TrainBatch, Trained
from raudit.generators.capabilities import Capabilities
from raudit.generators.events import TeacherBatch
from raudit.generators.gan.common import finish, gather_rows, paper_discriminator, paper_generator, uniform_rows
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.encoding import MinMaxEncoder
from raudit.generators.pategan.options import positive
from raudit.generators.pategan.teachers import bce_logits
from raudit.errors import ConfigError


class VanillaGan(BatchedGenerator):
    name = "gan"
    description = "non-private GAN, the PATE-GAN paper's architecture (utility upper bound)"
    default_delta = 1e-5
    capabilities = Capabilities(device=True, progress=True, events=("teacher_batch",))

    def __init__(self, *, preset: str = "default", iterations: int = 10_000,
                 max_iter: int | None = None, batch: int = 64, lr: float = 1e-4,
                 device: str | None = None, dtype: str | None = None):
        if preset != "default":
            raise ConfigError(f"gan has one preset, 'default'; got {preset!r}")
        positive("iterations", iterations, integer=True)
        positive("max_iter", max_iter, integer=True, allow_none=True)
        positive("batch", batch, integer=True)
        positive("lr", lr)
        super().__init__(preset=preset, device=device, dtype=dtype, iterations=iterations,
                         max_iter=max_iter, batch=batch, lr=lr)

    def resolve(self, n_rows: int, n_cols: int) -> tuple:
        o = self.options
        return (min(o["iterations"], o["max_iter"] or o["iterations"]), o["batch"])

    def encoder(self) -> MinMaxEncoder:
        return MinMaxEncoder(eps=0.0, clip=True, integers="round", bounds="metadata")

    def train(self, batch: TrainBatch, hp, *, epsilon, delta, observer, progress) -> Trained:
        iters, b = hp
        d, m = batch.dim, batch.models
        rng = CounterRNG(batch.seeds, purpose="gan", device=batch.x.device, dtype=batch.x.dtype)
        g_net, d_net = paper_generator(d), paper_discriminator(d)
        gen, disc = g_net.create(rng), d_net.create(rng)
        g_opt, d_opt = Adam(gen, lr=self.options["lr"]), Adam(disc, lr=self.options["lr"])
        active = np.ones(m, dtype=bool)
        for it in range(iters):
            idx = uniform_rows(rng, batch.rows, b)
            if observer is not None:
                observer(TeacherBatch(it, -1, idx.cpu().numpy(), active))
            with torch.no_grad():
                fake = g_net(gen, rng.uniform(b, d))
            d_opt.zero_grad()
            (bce_logits(d_net(disc, gather_rows(batch.x, idx), logits=True), 1.0)
             + bce_logits(d_net(disc, fake, logits=True), 0.0)).backward()
            d_opt.step()
            g_opt.zero_grad()
            bce_logits(d_net(disc, g_net(gen, rng.uniform(b, d)), logits=True), 1.0).backward()
            g_opt.step()
            if progress is not None:
                progress(it + 1)
        return finish(gen, g_net, d, [iters] * m, [float("nan")] * m)
