"""Why does non-private G-PATE learn MNIST digits so slowly? Measurements inside the loop.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/gpate_diagnose.py gpate \
        --teachers 50 --batch 16 --steps 200 --every 25 [-o KEY=VALUE ...] [--aggregate mean]
    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/gpate_diagnose.py gan \
        --batch 64 --steps 300

``gpate`` trains ``gpate -o config=image -o conditional=true -o classes=10`` on ``mnist10``
(eps 1e6: every step taken) and, every ``--every`` steps, prints what the loop cannot:

- ``acc_real`` / ``acc_fake`` / ``acc_heldout``: the teachers' accuracy (D > 0.5 real, < 0.5
  fake) on the real batch they just trained on, on the generated batch, and on real test
  images no teacher holds: are the discriminators any good, and do they generalise;
- ``cos_teachers``: mean cosine between one teacher's image gradient and the mean over teachers
  (do the teachers agree on a direction);
- ``cos_agg``: cosine between DPGradAgg's aggregated gradient and the mean teacher gradient,
  per record (what the generator actually follows); ``cos_proj``: the same for the mean
  gradient projected and back-projected with an exact (unbinned, unclipped) 10-dimensional
  Gaussian projection, the loss due to projecting alone; ``cos_vote``: projection, clipping,
  binning and exact (noise-free) votes; ``sat``: the share of projected teacher values at or
  beyond the clip c; ``med_ratio``: median |projected value| / c.

``--aggregate mean`` swaps DPGradAgg's answer for the exact mean teacher gradient (the
reference code's ``--non_private`` aggregation; privacy accounting is then meaningless).

``gan`` trains the SAME generator with ONE discriminator of the teachers' architecture on all
56,000 training images (a plain conditional non-saturating GAN, Adam lr 1e-3, beta1 0.5,
gpate's), to ask whether the architecture learns digits at all in that many steps. Both end
with the paper's evaluation on ``--samples`` synthetic images (CNN, 10-class accuracy on the
real test split; a constant classifier scores 0.1125). A throwaway measuring tool: it patches
the loop's ``aggregate`` and the teachers' step for the run it makes.
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np
import torch
import torch.nn.functional as F

from raudit import data, generators
from raudit.generators.gpate import chunked, loop
from raudit.generators.gpate.dpgradagg import Aggregated, vote_counts
from raudit.generators.gpate.nets import ClassImageNets
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.nets import draw_z
from raudit.utility.cnn import cnn_accuracy

CLASSES = 10


def _cos(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a * b).sum(-1) / (a.norm(dim=-1) * b.norm(dim=-1) + 1e-30)


class Probe:
    """State of the measurements: the step counter, what to print, the held-out images."""

    def __init__(self, every: int, heldout: torch.Tensor, mode: str, k_proj: int, clip: float,
                 bins: int):
        self.every, self.heldout, self.mode = every, heldout, mode
        self.k_proj, self.clip, self.bins = k_proj, clip, bins
        self.it, self.row = 0, {}
        self.gen = torch.Generator().manual_seed(123)

    def due(self) -> bool:
        return self.it % self.every == 0

    def teachers(self, teachers, fake: torch.Tensor, rows: torch.Tensor) -> None:
        with torch.no_grad():
            m, k, b = rows.shape
            real = torch.stack([teachers.x[i][rows[i].reshape(-1)] for i in range(m)])
            real = real.view(m * k, b, -1)
            p_real = teachers.net(teachers.params, real)
            p_fake = teachers.net(teachers.params, fake, shared=k)
            held = self.heldout[None].expand(m, -1, -1)
            p_held = teachers.net(teachers.params, held, shared=k)
            self.row.update(acc_real=float((p_real > 0.5).double().mean()),
                            acc_fake=float((p_fake < 0.5).double().mean()),
                            acc_heldout=float((p_held > 0.5).double().mean()))

    def aggregate(self, grads: torch.Tensor, agg: Aggregated) -> Aggregated:
        px = slice(0, 784)
        mean = grads.mean(dim=1)  # (M, B, d)
        if self.due():
            g, gbar = grads[..., px].double(), mean[..., px].double()
            proj = torch.randn(g.shape[2], 784, self.k_proj, generator=self.gen,
                               dtype=torch.float64) / math.sqrt(self.k_proj)
            back = torch.einsum("mbq,bdq->mbd", torch.einsum("mbd,bdq->mbq", gbar, proj), proj)
            vals = torch.einsum("mkbd,bdq->mkbq", g, proj)
            counts = vote_counts(vals, self.clip, self.bins)  # (M, B, q, bins)
            edges = torch.linspace(-self.clip, self.clip, self.bins + 1, dtype=torch.float64)
            choice = counts.argmax(-1)
            voted = torch.einsum("mbq,bdq->mbd", (edges[choice] + edges[choice + 1]) / 2, proj)
            self.row.update(
                cos_teachers=float(_cos(g, gbar[:, None]).mean()),
                cos_agg=float(_cos(agg.grad[..., px].double(), gbar).mean()),
                cos_proj=float(_cos(back, gbar).mean()), cos_vote=float(_cos(voted, gbar).mean()),
                sat=float((vals.abs() >= self.clip).double().mean()),
                med_ratio=float(vals.abs().median() / self.clip),
                answered=float(agg.answered.double().mean()),
                gbar_norm=float(gbar.norm(dim=-1).mean()))
            print(json.dumps({"step": self.it, **{k: round(v, 4) for k, v in self.row.items()}}),
                  flush=True)
        self.row = {}
        self.it += 1
        if self.mode == "mean":  # the reference code's --non_private: the plain mean
            return Aggregated(mean.to(agg.grad.dtype), agg.counts, agg.answered, agg.choice,
                              agg.thresh_noise)
        return agg


def run_gpate(ds, a, heldout: torch.Tensor):
    opts = dict(config="image", conditional=True, classes=CLASSES, teachers=a.teachers,
                max_iter=a.steps, batch=a.batch, z_dim=a.z_dim)
    for kv in a.option:
        key, _, value = kv.partition("=")
        try:
            opts[key] = json.loads(value)
        except json.JSONDecodeError:
            opts[key] = value
    gen = generators.get("gpate")(**opts)
    probe = Probe(a.every, heldout, a.aggregate, opts.get("k_proj", 10), opts.get("clip", 1e-4),
                  opts.get("bins", 10))
    orig_agg, orig_step = loop.aggregate, chunked.ChunkedTeachers.step

    def agg(grads, cfg, rng):
        return probe.aggregate(grads, orig_agg(grads, cfg, rng))

    def step(self, fake, active):
        rows = orig_step(self, fake, active)
        if probe.due():
            probe.teachers(self, fake, rows)
        return rows

    loop.aggregate, chunked.ChunkedTeachers.step = agg, step
    try:
        fitted = gen.fit_many([ds.train], epsilon=1e6, seeds=[a.seed])[0]
    finally:
        loop.aggregate, chunked.ChunkedTeachers.step = orig_agg, orig_step
    syn = fitted.sample(a.samples, seed=a.seed + 1)
    label = ds.train.columns[-1]
    return syn.drop(columns=label).to_numpy(), syn[label].to_numpy()


def run_gan(ds, a, heldout: torch.Tensor):
    """The gpate generator against ONE discriminator of the teachers' architecture, all data."""
    label = ds.train.columns[-1]
    x = torch.as_tensor(ds.train.drop(columns=label).to_numpy(np.float32) / 255.0)
    y = torch.as_tensor(ds.train[label].to_numpy(np.float32) / (CLASSES - 1))[:, None]
    table = torch.cat([x, y], 1)
    nets = ClassImageNets(785, CLASSES, a.z_dim)
    rng = CounterRNG([a.seed], purpose="gan-probe")
    g = nets.generator.create(rng)
    d = nets.teacher.create(rng)
    g_opt, d_opt = Adam(g, lr=a.lr, betas=(0.5, 0.999)), Adam(d, lr=a.lr, betas=(0.5, 0.999))
    pick = torch.Generator().manual_seed(a.seed)
    for it in range(a.steps):
        real = table[torch.randint(0, len(table), (a.batch,), generator=pick)][None]
        fake = nets.generate(g, draw_z(rng, nets.z_kind, a.batch, nets.z_dim))
        d_opt.zero_grad()
        lr_, lf = nets.teacher(d, real, logits=True), nets.teacher(d, fake.detach(), logits=True)
        (F.softplus(-lr_).mean() + F.softplus(lf).mean()).backward()
        d_opt.step()
        g_opt.zero_grad()
        F.softplus(-nets.teacher(d, fake, logits=True)).mean().backward()
        g_opt.step()
        if it % a.every == 0:
            with torch.no_grad():
                held = nets.teacher(d, heldout[None])
            print(json.dumps({"step": it, "acc_real": round(float((lr_ > 0).double().mean()), 4),
                              "acc_fake": round(float((lf < 0).double().mean()), 4),
                              "acc_heldout": round(float((held > 0.5).double().mean()), 4)}),
                  flush=True)
    with torch.no_grad():
        out = []
        for i in range(0, a.samples, 1000):
            n = min(1000, a.samples - i)
            out.append(nets.generate(g, draw_z(rng, nets.z_kind, n, nets.z_dim))[0])
        s = torch.cat(out).numpy()
    return s[:, :784] * 255.0, np.rint(s[:, 784] * (CLASSES - 1)).astype(np.int64)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["gpate", "gan"])
    ap.add_argument("--teachers", type=int, default=50)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--z-dim", type=int, default=50)
    ap.add_argument("--every", type=int, default=25)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--lr", type=float, default=1e-3, help="gan: both Adam learning rates")
    ap.add_argument("--aggregate", choices=["dpgradagg", "mean"], default="dpgradagg")
    ap.add_argument("-o", "--option", action="append", default=[])
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    ds = data.load("mnist10")
    label = ds.test.columns[-1]
    held = ds.test.sample(64, random_state=a.seed)
    heldout = torch.cat([torch.as_tensor(held.drop(columns=label).to_numpy(np.float32) / 255.0),
                         torch.as_tensor(held[label].to_numpy(np.float32) / (CLASSES - 1))[:, None]], 1)
    t0 = time.process_time()
    sx, sy = (run_gpate if a.what == "gpate" else run_gan)(ds, a, heldout)
    train_s = time.process_time() - t0
    score = cnn_accuracy(sx, sy, ds.test.drop(columns=label).to_numpy(), ds.test[label].to_numpy(),
                         classes=CLASSES, epochs=a.epochs, seed=a.seed)
    print(json.dumps({"what": a.what, "seed": a.seed, "accuracy": round(score.accuracy, 4),
                      "train_cpu_s": round(train_s, 1),
                      "total_cpu_s": round(time.process_time() - t0, 1)}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
