"""The G-PATE training loop on the batched engine (M models in lockstep).

Per iteration (the reference code's ``train_together`` with d_step = g_step = 1):

1. draw z and generate a batch x = G(z);
2. every teacher takes ``teacher_steps`` steps on a real batch from its own partition
   (label 1) and x (label 0);
3. every teacher's gradient of its generator loss, ``-d/dx mean BCE(D_t(x), 1)``, per record;
4. DPGradAgg (:mod:`.dpgradagg`) aggregates them privately per record;
5. the accountant is asked what eps would be after this step's queries: a model whose eps
   would exceed its budget stops here, without charging or applying the step (the
   reference code exits before the update and reports the previous eps);
6. otherwise the step is charged and G regresses G(z) onto x + aggregated gradient (sum of
   squares, as the reference code's ``g_loss``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from raudit.accountants import create
from raudit.events import ConfidentGNMax
from raudit.accountants.gnmax import eps_from_rdp, rdp_gnmax_independent, rdp_threshold_independent
from raudit.generators.batch_types import TrainBatch, Trained
from raudit.events import (AccountantStep, GradientVotes, Observer, TeacherBatch,
                           TeacherContributions)
from raudit.generators.gpate.chunked import ChunkedTeachers
from raudit.generators.gpate.dpgradagg import AggConfig, aggregate
from raudit.generators.gpate.slots import (SlotSharedAdam, share_initialisation, slot_count,
                                          slot_members)
from raudit.generators.nn import whole
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.nets import draw_z
from raudit.generators.pategan.core.teachers import LocalTeachers, TeacherTraining, teacher_rng
from raudit.generators.pategan.core.partitions import shuffled_partition


@dataclass(frozen=True)
class GPateConfig:
    k: int
    batch: int  # generated records per iteration
    teacher_batch: int  # real rows per teacher step
    agg: AggConfig
    max_iter: int | None
    lr: float = 1e-3
    beta1: float = 0.5
    teacher_steps: int = 1
    accountant: str = "gnmax"  # gnmax (data-dependent) | gnmax-independent
    orders: tuple[float, ...] | None = None
    teacher_chunk: int | None = None  # teachers per block (:mod:`.chunked`); None: all at once
    teacher_lr: float | None = None  # the teachers' Adam lr; None: ``lr`` (the reference code)
    teacher_decay: float = 0.0  # L2 on the teachers' weights (Adam's weight_decay); 0: none
    # the authors' recipe (issue 47): "sequential" real batches (the whole partition when the
    # batch is its size); each teacher's generated batch G(z, its real batch's labels)
    teacher_sample: str = "with-replacement"
    teacher_labels: bool = False
    # the authors' slots and their two privacy bugs (:mod:`.slots`), off by default
    slot_teachers: int = 40
    shared_state: bool = False
    shared_init: bool = False


def teacher_gradients(teachers: LocalTeachers, fake: torch.Tensor) -> torch.Tensor:
    """Each teacher's ``-d/dx`` of its generator loss mean_b BCE(D_t(x_b), 1): (M, k, B, d).

    The all-at-once reference of :meth:`.chunked.ChunkedTeachers.generator_gradients`.

    The batch is copied to every teacher so that one backward pass gives each
    teacher's gradient separately (teacher t of model m is group m*k + t).
    """
    m, b, d = fake.shape
    x = fake.detach().repeat_interleave(teachers.k, dim=0).requires_grad_(True)
    logits = teachers.net(teachers.params, x, logits=True)
    # BCE with target 1, per group; whole blocks: the same bits in any chunk (nn/whole.py)
    loss = whole.softplus(-logits).flatten(1).mean(dim=1).sum()
    (g,) = torch.autograd.grad(loss, x)
    return (-g).view(m, teachers.k, b, d)


def _labels_of(x: torch.Tensor, rows: torch.Tensor, classes: int) -> torch.Tensor:
    """The class indices (M, k, B) of rows (M, k, B) of the encoded tables x (M, N, d),
    whose last column holds the label as y / (classes - 1)."""
    m, k, b = rows.shape
    v = torch.gather(x[..., -1], 1, rows.reshape(m, k * b))
    return torch.round(v * (classes - 1)).long().clamp_(0, classes - 1).view(m, k, b)


def _eps_independent(queries: np.ndarray, answered: np.ndarray, agg: AggConfig, orders,
                     delta) -> np.ndarray:
    """eps of the same queries under the data-independent curves (for comparison)."""
    rdp = (queries[:, None] * rdp_threshold_independent(agg.sigma1, orders)[None, :]
           + answered[:, None] * rdp_gnmax_independent(agg.sigma2, orders)[None, :])
    deltas = np.broadcast_to(np.asarray(delta, dtype=np.float64), queries.shape)
    return np.array([eps_from_rdp(r, orders, float(d)) for r, d in zip(rdp, deltas)])


def train_gpate(batch: TrainBatch, cfg: GPateConfig, nets, *, epsilon: float, delta,
                observer: Observer | None = None,
                progress: Callable[[int], None] | None = None) -> Trained:
    m, dev, dtype = batch.models, batch.x.device, batch.x.dtype
    rng = CounterRNG(batch.seeds, purpose="gpate", device=dev, dtype=dtype)
    agg_rng = CounterRNG(batch.seeds, purpose="gpate-agg", device=dev, dtype=torch.float64)
    gen = nets.generator.create(rng)
    parts, sizes = shuffled_partition(rng, batch.rows, batch.x.shape[1], cfg.k)
    trng = teacher_rng(batch.seeds, cfg.k, device=dev, dtype=dtype)
    t_lr = cfg.teacher_lr or cfg.lr
    teachers = ChunkedTeachers(nets.teacher, trng, batch.x, parts, sizes,
                               TeacherTraining(cfg.teacher_batch, t_lr, betas=(cfg.beta1, 0.999),
                                               sample=cfg.teacher_sample),
                               chunk=cfg.teacher_chunk)
    slots = slot_count(cfg.k, cfg.slot_teachers)
    if cfg.shared_init:  # upstream bug (off by default): a slot's teachers start equal
        share_initialisation(teachers.params, m, cfg.k, slots)
    reach: list[tuple[int, ...]] = [()] * cfg.k  # the teacher alone
    if cfg.shared_state:  # upstream bug (off by default): one Adam state per slot
        teachers.opt = SlotSharedAdam(teachers.params, models=m, k=cfg.k, slots=slots, lr=t_lr,
                                      betas=(cfg.beta1, 0.999))
        # a row's gradient enters its slot's moments, which step every teacher of the slot
        # from then on: its votes move all of them (the events say so, and eps_true counts it)
        members = [slot_members(j, cfg.k, slots) for j in range(slots)]  # one tuple per slot
        reach = [members[t % slots] for t in range(cfg.k)]
    if cfg.teacher_labels and cfg.batch != cfg.teacher_batch:
        raise ValueError(f"per-teacher generated labels need batch == teacher_batch, got "
                         f"{cfg.batch} and {cfg.teacher_batch}")
    # a teacher of a few rows in many dimensions separates them perfectly and its weights
    # then grow along that margin, away from the direction its classes' means differ in;
    # L2 keeps a linear teacher near that direction (lab/learning.md)
    teachers.opt.weight_decay = cfg.teacher_decay
    g_opt = Adam(gen, lr=cfg.lr, betas=(cfg.beta1, 0.999))
    acct = create(cfg.accountant, models=m, orders=cfg.orders)
    active = np.ones(m, dtype=bool)
    stopped = np.array(["max_iter"] * m, dtype=object)
    iters = np.zeros(m, dtype=np.int64)
    eps_hat = acct.eps(delta)
    it = 0
    while (cfg.max_iter is None or it < cfg.max_iter) and active.any():
        upd = None if active.all() else torch.as_tensor(active, device=dev)
        z = draw_z(rng, nets.z_kind, cfg.batch, nets.z_dim)
        fake = nets.generate(gen, z)  # kept with its graph for the generator step
        for _ in range(cfg.teacher_steps):
            shown = fake.detach()
            if cfg.teacher_labels:
                with torch.no_grad():
                    shown = nets.generate_for(gen, z, _labels_of(batch.x, teachers.next_rows(),
                                                                 nets.classes))
            rows = teachers.step(shown, upd)
            if observer is not None:
                rows_np = rows.cpu().numpy()
                for t in range(cfg.k):
                    observer(TeacherBatch(it, t, rows_np[:, t], active.copy(), reach[t]))
        grads = teachers.generator_gradients(fake)
        with torch.no_grad():
            agg = aggregate(grads, cfg.agg, agg_rng)
        counts = agg.counts.cpu().numpy()
        answered = agg.answered.cpu().numpy()
        event = ConfidentGNMax(counts.reshape(m, -1, cfg.agg.bins), answered.reshape(m, -1),
                               cfg.agg.threshold, cfg.agg.sigma1, cfg.agg.sigma2, mask=active.copy())
        ok = active & (acct.eps_if(event, delta) <= epsilon)
        stopped[active & ~ok] = "epsilon"
        acct.compose(ConfidentGNMax(event.counts, event.answered, event.threshold, event.sigma1,
                                    event.sigma2, mask=ok))
        if observer is not None and it == 0:  # the data-free generator's step (see the event)
            observer(TeacherContributions(it, agg.values.to(torch.float64).cpu().numpy(),
                                          active.copy()))
        if observer is not None:
            observer(GradientVotes(it, counts, cfg.k, cfg.agg.threshold, cfg.agg.sigma1,
                                   cfg.agg.sigma2, agg.thresh_noise.cpu().numpy(), answered,
                                   agg.choice.cpu().numpy(), ok.copy(), active.copy()))
        if ok.any():
            g_opt.zero_grad()
            target = (fake + agg.grad).detach()
            ((fake - target) ** 2).flatten(1).sum(dim=1).sum().backward()
            g_opt.step(None if ok.all() else torch.as_tensor(ok, device=dev))
        iters += ok
        active = ok
        eps_hat = acct.eps(delta)
        if observer is not None:
            observer(AccountantStep(it, eps_hat.copy(), acct.rdp.copy(), ok.copy()))
        it += 1
        if progress is not None:
            progress(it)
    eps_ind = _eps_independent(acct.queries, acct.answered, cfg.agg, acct.orders, delta)
    extra = [{"stopped": str(stopped[i]), "queries": int(acct.queries[i]),
              "answered": int(acct.answered[i]),
              "answered_fraction": float(acct.answered[i] / max(1, acct.queries[i])),
              "eps_data_independent": float(eps_ind[i]),
              "eps_note": ("data-dependent RDP released without smooth sensitivity"
                           if cfg.accountant == "gnmax" else "data-independent RDP")}
             for i in range(m)]

    def sample_fn(p, srng: CounterRNG, n: int) -> torch.Tensor:
        return nets.generate(p, draw_z(srng, nets.z_kind, n, nets.z_dim))

    return Trained(gen, sample_fn, iters.tolist(), [float(e) for e in eps_hat], extra)
