"""`updated`: the 2021 PATE-GAN release of the authors' group (TensorFlow 1), ported faithfully.

Source read: github.com/vanderschaarlab/mlforhealthlabpub ``alg/pategan/pate_gan.py``
and ``main_pategan_experiment.py`` (commit 75beead), and the study's harness copy
``pate_gans/updated/updated_audit.py`` (spec section 2).

Per iteration, for every model:

1. k teachers: scikit-learn ``LogisticRegression()`` (L2, C = 1, intercept) REFIT FROM
   SCRATCH on s = int(N/k) real rows (label 1) plus s freshly generated rows (label 0).
   The loop reads ``x_partition[i]`` with ``i`` left over from the partitioning loop
   (i = k - 1): every teacher trains on the LAST partition; the other rows are never used.
2. ``student_steps`` (upstream n_s = 1) student steps: a batch of generated rows is
   labelled 1[(n1 + Lap(scale = lambda)) / k > 0.5] (scale lambda, while the accountant
   assumes 1/lambda) and every sample charges the L = 20 accountant (``updated``
   variant: the log can take a negative argument and give NaN). The student is a WGAN
   critic d -> d (ReLU) -> 1, loss -(mean(Y S) - mean((1 - Y) S)), RMSProp lr 1e-4,
   then its weights are clipped to +/-0.01.
3. one generator step on -mean(S(G(z))), RMSProp lr 1e-4; z ~ U(-1, 1)^d,
   G: d -> 4d (tanh) -> 4d (tanh) -> d (sigmoid); init N(0, 2/fan_in), zero biases.
4. eps_hat = min_l (alpha_l + log(1/delta)) / l AFTER the iteration (overshoot); the
   loop runs while eps_hat < eps: a NaN eps_hat ends training silently (``nan < eps``
   is False). raudit records it: the AccountantStep carries the NaN and the summary
   says ``stopped: "nan"``.

Deviations, each an option whose default is the upstream behaviour:

==================  ==============  ==================================================
option              default         alternative
==================  ==============  ==================================================
partition           "stale"         "disjoint" (teacher t trains on partition t)
noise_scale         "direct"        "inverse" (Lap(1/lambda), what the accountant assumes)
accountant          "updated"       any raudit accountant ("fixed-threshold", ...)
bounds              "data"          "metadata" (public bounds where declared)
lam                 1e-3 (study)    upstream's script default is 1.0
==================  ==============  ==================================================

Also ``student_steps=1`` (upstream n_s; the study's table 3 says 5, the code says 1),
``orders=20``, ``clip=0.01``, ``integers="round"`` (raudit's schema; upstream returns floats).

Preprocessing (the study's addition, as for borealis): MinMaxScaler(clip=True) fitted on
the training table (non-private bounds), outputs inverse-transformed.

Presets: ``default`` is the study's harness (k = max(2, N // 1000), batch min(64, N // k),
at most 10,000 iterations); ``paper`` is the paper's batch 64, n_S = 5 student steps and
no iteration cap, through updated's own code.

Not reproduced: TF1 runs the weight clip and the RMSProp update in one ``sess.run``
without an ordering constraint; raudit clips after the update (the WGAN order).
Upstream's experiment script retrains 50 times and keeps the best run by a logistic
regression's AUC on the real data (non-private model selection): not ported (the study
does not use it). Partition rows beyond k * int(N/k) are never used, as upstream.
"""

from __future__ import annotations


from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants import VARIANTS
from raudit.generators.batched import BatchedGenerator
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.events import TeacherBatch, TeacherLoss, Votes
from raudit.generators.nn.optim import RMSProp
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core.encoding import MinMaxEncoder
from raudit.generators.pategan.core.options import (PRESETS, check_pate_options, choice, pate_schedule,
                                                    positive)
from raudit.generators.pategan.ports.refit import (CAPABILITIES, QueryAccountant, RefitTeachers,
                                            account_iteration)
from raudit.generators.pategan.core.partitions import partition_from_order
from raudit.generators.pategan.ports.updated.options import UpdatedOptions
from raudit.generators.pategan.core.partitions import gather_rows


@dataclass(frozen=True)
class UpdatedHP:
    teachers: int
    batch: int
    lam: float
    orders: int
    max_iter: int | None
    lr: float
    student_steps: int
    clip: float


def updated_nets(d: int) -> tuple[MLP, MLP]:
    """(generator, student) as the TF1 code builds them."""
    gen = MLP([d, 4 * d, 4 * d, d], ["tanh", "tanh", "sigmoid"], init="he_normal")
    student = MLP([d, d, 1], ["relu", "linear"], init="he_normal")
    return gen, student


def stale_partition(rng: CounterRNG, rows: torch.Tensor, n_max: int, k: int, mode: str):
    """Teacher rows (M, k, P) and sizes (M,): one permutation cut into k chunks of int(N/k);
    ``"stale"`` gives every teacher the last chunk (upstream's loop variable)."""
    sizes = (rows // k)[:, None].expand(-1, k).contiguous()
    parts, _ = partition_from_order(rng.permutation(n_max, rows), rows, k, sizes)
    if mode == "stale":
        parts = parts[:, k - 1:k].expand(-1, k, -1)
    return parts, rows // k


class ScalerEncoder(MinMaxEncoder):
    """scikit-learn's MinMaxScaler(clip=True): a zero range is replaced by 1."""

    def fit(self, df, columns):
        super().fit(df, columns)
        self.hi = np.where(self.hi == self.lo, self.lo + 1.0, self.hi)
        return self


class UpdatedPateGan(BatchedGenerator):
    whole_blocks = True  # chunk-invariant at any batch (BatchedGenerator.whole_blocks)
    name = "updated"
    description = "PATE-GAN authors' 2021 release: refit logistic-regression teachers (faithful port, bugs on)"

    presets = PRESETS
    capabilities = CAPABILITIES  # its votes, for --threat-model transcript

    Options = UpdatedOptions

    def __init__(self, options: UpdatedOptions | None = None, *, preset: str = "default",
                 device: str | None = None, dtype: str | None = None, **overrides):
        """``options`` (default: the release's behaviour) with ``overrides`` by name, the
        form -o KEY=VALUE and campaign YAML arrive in."""
        o = UpdatedOptions.build(options, overrides, self.name)
        check_pate_options(preset, o.lam, o.orders, o.batch, o.max_iter)
        positive("teachers", o.teachers, integer=True, allow_none=True)
        positive("student_steps", o.student_steps, integer=True, allow_none=True)
        positive("lr", o.lr)
        positive("clip", o.clip)
        choice("accountant", o.accountant, tuple(VARIANTS.names()))  # the registry's set
        super().__init__(preset=preset, device=device, dtype=dtype, **o.as_dict())

    def resolve(self, n_rows: int, n_cols: int) -> UpdatedHP:
        o = self.options
        k, batch, max_iter = pate_schedule(self.preset, n_rows, teachers=o["teachers"],
                                           batch=o["batch"], max_iter=o["max_iter"])
        steps = o["student_steps"] or (5 if self.preset == "paper" else 1)
        return UpdatedHP(k, batch, o["lam"], o["orders"], max_iter, o["lr"], steps, o["clip"])

    def encoder(self, seed: int) -> ScalerEncoder:
        return ScalerEncoder(eps=0.0, clip=True, integers=self.options["integers"],
                               bounds=self.options["bounds"])

    def train(self, batch: TrainBatch, hp: UpdatedHP, *, epsilon, delta, observer, progress) -> Trained:
        o = self.options
        m, n_max, d = batch.x.shape
        k, dev = hp.teachers, batch.x.device
        rng = CounterRNG(batch.seeds, purpose="updated", device=dev, dtype=batch.x.dtype)
        g_net, s_net = updated_nets(d)
        student, gen = s_net.create(rng), g_net.create(rng)  # TF1 builds the student first
        s_opt, g_opt = RMSProp(student, lr=hp.lr), RMSProp(gen, lr=hp.lr)
        parts, size = stale_partition(rng, batch.rows, n_max, k, o["partition"])
        p = parts.shape[2]
        ok = (torch.arange(p, device=dev)[None, :] < size[:, None])  # (M, P) valid rows
        ok_k = ok[:, None, :].expand(-1, k, -1)
        rows_np = torch.where(ok_k, parts, -1).cpu().numpy()
        real = gather_rows(batch.x, parts.reshape(m, -1)).view(m, k, p, d)
        teachers = RefitTeachers(m, k)
        acct = QueryAccountant(o["accountant"], k=k, lam=hp.lam, orders=hp.orders, models=m)
        scale = hp.lam if o["noise_scale"] == "direct" else 1.0 / hp.lam
        deltas = np.full(m, float(delta))
        active = np.ones(m, dtype=bool)
        iters = np.zeros(m, dtype=np.int64)
        eps_hat = acct.eps(deltas)
        stopped = ["max_iter"] * m
        it = 0
        while bool(active.any()) and (hp.max_iter is None or it < hp.max_iter):
            act_t = torch.as_tensor(active, device=dev)
            upd = None if active.all() else act_t
            with torch.no_grad():  # 1. refit the k teachers (fresh fakes for each one)
                fake = g_net(gen, rng.uniform_range(-1.0, 1.0, k * p, d)).view(m, k, p, d)
            teachers.fit(real, ok_k, fake, ok_k)
            if observer is not None:
                for t in range(k):
                    observer(TeacherBatch(it, t, rows_np[:, t], active.copy()))
                observer(TeacherLoss(it, teachers.losses_on(real, ok_k), active.copy()))
            for _ in range(hp.student_steps):  # 2. student steps on noisy teacher labels
                with torch.no_grad():
                    fake = g_net(gen, rng.uniform_range(-1.0, 1.0, hp.batch, d))
                    n1 = teachers.votes(fake)
                    noise = rng.laplace(hp.batch, scale=scale)
                    labels = (n1.to(noise.dtype) + noise) / k > 0.5
                n1_np = n1.cpu().numpy()
                acct.charge(n1_np, np.broadcast_to(active[:, None], n1_np.shape))
                if observer is not None:
                    observer(Votes(it, n1_np, k, scale, noise.cpu().numpy(), labels.cpu().numpy(),
                                   active.copy(), active.copy(), "threshold"))
                y = labels.to(fake.dtype)[..., None]
                out = s_net(student, fake)
                s_opt.zero_grad()
                ((out * (1 - y)).mean((1, 2)) - (out * y).mean((1, 2))).sum().backward()
                s_opt.step(upd)
                with torch.no_grad():  # weight clipping, active models only
                    clipped = student.flat.clamp(-hp.clip, hp.clip)
                    student.flat.copy_(clipped if upd is None else torch.where(upd[:, None], clipped, student.flat))
            g_opt.zero_grad()  # 3. generator step
            z = rng.uniform_range(-1.0, 1.0, hp.batch, d)
            (-s_net(student, g_net(gen, z)).mean((1, 2))).sum().backward(inputs=[gen.flat])
            g_opt.step(upd)
            iters += active
            it += 1
            eps_hat = account_iteration(acct, deltas, epsilon, it, active, eps_hat, stopped,
                                        observer, progress)
        return _trained(gen, g_net, d, iters, eps_hat, stopped, acct, delta)


def _trained(gen: Stacked, g_net: MLP, d: int, iters, eps_hat, stopped, acct, delta) -> Trained:
    def sample_fn(p: Stacked, rng: CounterRNG, n: int) -> torch.Tensor:
        return g_net(p, rng.uniform_range(-1.0, 1.0, n, d))
    extra = [{"stopped": s, "charged_queries": int(q), "delta": float(delta)}
             for s, q in zip(stopped, acct.charged)]
    return Trained(gen, sample_fn, iters.tolist(), [float(e) for e in eps_hat], extra)
