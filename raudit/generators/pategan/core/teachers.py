"""Teacher ensembles of M models batched into G = M*k networks.

Each teacher trains on its part of a partition (:mod:`.partitions`: a (M, k, P) tensor of
row ids plus (M, k) sizes, drawn where the ports differ, so built outside and handed in).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from raudit.generators.teacher_loss import real_losses
from raudit.generators.nn.compiled import enabled, kernel
from raudit.generators.nn import mlp_grad, whole
from raudit.generators.nn.gathered import gathered_linear1
from raudit.generators.nn.optim import Adam
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core.partitions import distinct_rows, lowest_first


# the teachers' (and the PATE loop's student's and generator's) gradient by hand where it is
# autograd's to the bit (nn/mlp_grad.py, PateNets.generator_grad); RAUDIT_HAND_GRAD=0 keeps
# autograd, the reference the tests compare it with
HAND_GRAD = os.environ.get("RAUDIT_HAND_GRAD", "1") != "0"


def bce_logits(logits: torch.Tensor, target: torch.Tensor | float) -> torch.Tensor:
    """Per-group mean BCE, summed over groups (so group gradients never mix)."""
    if not torch.is_tensor(target):
        target = torch.full_like(logits, float(target))
    per = whole.bce_with_logits(logits, target)  # the same bits in any chunk (nn/whole.py)
    return per.flatten(1).mean(dim=1).sum()


def _joint_loss(flat: torch.Tensor, table: torch.Tensor, ids: torch.Tensor, fake: torch.Tensor,
                net: tuple, shared: int) -> torch.Tensor:
    """The teachers' joint loss on their real batches (rows ``ids`` of ``table``) and ``fake``,
    as :meth:`LocalTeachers.step` computes it; ``net`` = (layout items, widths, activations).
    A pure function of tensors and constants, so that RAUDIT_COMPILE=fused can compile it."""
    layout, widths, activations = net
    p, mlp = Stacked(flat, dict(layout)), MLP(list(widths), list(activations))
    real = F.embedding(ids, table)
    return (bce_logits(mlp(p, real, logits=True), 1.0)
            + bce_logits(mlp(p, fake, logits=True, shared=shared), 0.0))


_fused_joint_loss = kernel(_joint_loss, exact=False)  # eager unless RAUDIT_COMPILE=fused


def _logistic_joint_loss(flat: torch.Tensor, table: torch.Tensor, ids: torch.Tensor,
                         fake: torch.Tensor, net: tuple, shared: int) -> torch.Tensor:
    """:func:`_joint_loss` for a logistic teacher (one width-1 layer) on CPU, its real half
    computed in cache-sized blocks (:mod:`raudit.generators.nn.gathered`): the same bits."""
    layout, widths, activations = net
    p, mlp = Stacked(flat, dict(layout)), MLP(list(widths), list(activations))
    v = p.views()
    return (bce_logits(gathered_linear1(v["w0"], v["b0"], ids, table), 1.0)
            + bce_logits(mlp(p, fake, logits=True, shared=shared), 0.0))


def _joint_loss_for(net: tuple, device: torch.device):
    """The fastest exact form of the teachers' joint loss, or the compiled one under fused."""
    if enabled(exact=False) or device.type != "cpu" or len(net[1]) != 2 or net[1][1] != 1:
        return _fused_joint_loss
    return _logistic_joint_loss


def teacher_rng(seeds: list[int], k: int, *, first: int = 0, device=None, dtype=None) -> CounterRNG:
    """One random stream per (model, teacher): teacher t of seed s draws the same
    numbers whether all k teachers live in one process or are spread over workers."""
    keys = [s * 1_000_003 + first + t for s in seeds for t in range(k)]
    return CounterRNG(keys, purpose="teacher", device=device or "cpu",
                      dtype=dtype or torch.float32)


@dataclass(frozen=True)
class TeacherTraining:
    """How the teachers train: their real batch size, Adam's ``lr`` and ``betas``, how a
    batch is drawn (``sample``), ``update`` ("joint": one step on real + fake; "split")
    and whether a partition smaller than ``batch`` gives a partial batch."""

    batch: int
    lr: float = 1e-4
    betas: tuple[float, float] = (0.9, 0.999)
    sample: str = "with-replacement"
    update: str = "joint"
    partial_batch: bool = False


class LocalTeachers:
    """k persistent teacher networks per model, trained on their own partition.

    ``rng`` holds one stream per (model, teacher) (see :func:`teacher_rng`).
    ``sample="with-replacement"`` draws each batch i.i.d. from the partition
    (Algorithm 1, line 8); ``"first-shuffled"`` takes the first ``batch`` rows
    of a fresh shuffle of the partition (a torch DataLoader's first batch).
    """

    _first: tuple | None = None  # the kept shared first layer (see _shared_first)

    def __init__(self, net: MLP, rng: CounterRNG, x: torch.Tensor, parts: torch.Tensor,
                 sizes: torch.Tensor, training: TeacherTraining):
        batch, sample, update = training.batch, training.sample, training.update
        partial_batch = training.partial_batch
        if update not in ("joint", "split"):
            raise ValueError(f"update must be joint or split, got {update!r}")
        self.net, self.rng, self.x = net, rng, x
        self.models, self.k = parts.shape[0], parts.shape[1]
        self.parts = parts.reshape(self.models * self.k, -1)
        self.sizes = sizes.reshape(-1, 1)
        self.batch, self.sample = batch, sample
        self.update, self.partial_batch = update, partial_batch
        self.params = net.create(rng)
        self.opt = Adam(self.params, lr=training.lr, betas=training.betas)
        self.table, ids = distinct_rows(x)
        self.ids = torch.gather(ids, 1, parts.reshape(self.models, -1)).view_as(self.parts)

    def _positions(self) -> torch.Tensor:
        """Positions (M*k, B) in each teacher's partition of its next real batch."""
        if self.sample == "with-replacement":
            return self.rng.integers(self.sizes, self.batch)
        # first batch of a fresh shuffle: the lowest `batch` random keys
        keys = self.rng.open_uniform(self.parts.shape[1])
        cols = torch.arange(self.parts.shape[1], device=keys.device)[None, :]
        keys = torch.where(cols < self.sizes, keys, keys + 2.0)
        return torch.minimum(lowest_first(keys, self.batch), (self.sizes - 1).clamp(min=0))

    def step(self, fake, active: torch.Tensor | None) -> torch.Tensor:
        """One step of every teacher on its real batch (label 1) and ``fake`` (label 0).

        ``fake`` is (M, B, d), shared by the k teachers of a model, or (M*k, B, d), one
        batch per teacher (the ports draw a fresh fake batch inside their teacher loop),
        or a :class:`~raudit.generators.nn.mlp_grad.Blockwise` of models giving the latter
        for models lo..hi-1 (made block by block where the gradient is by hand, else whole).
        ``update="split"`` takes one optimiser step on the real batch, then one on the
        fake batch. Returns the rows used.
        """
        pos = self._positions()
        rows = torch.gather(self.parts, 1, pos).view(self.models, self.k, -1)
        m, k, b = rows.shape
        ids = torch.gather(self.ids, 1, pos)
        lazy = isinstance(fake, mlp_grad.Blockwise)
        if lazy and not self._by_hand():
            fake, lazy = fake.make(0, m), False  # made whole where autograd takes the step
        shared = 1 if lazy else k if fake.shape[0] == m else 1
        first = self._first
        self._first = None  # the parameters change in this step
        mask = None if active is None else active.repeat_interleave(k)
        self.opt.zero_grad()
        # the joint step of a plain MLP (any MLP subclass that keeps its forward) goes through
        # _joint_loss, which RAUDIT_COMPILE=fused compiles; eager it is the same ops as below
        if (self.update == "joint" and type(self.net).__call__ is MLP.__call__
                and not (self.partial_batch and self.sample == "first-shuffled")):
            net = (tuple(self.params.layout.items()), tuple(self.net.widths), tuple(self.net.activations))
            loss = _joint_loss_for(net, self.table.device)
            loss(self.params.flat, self.table, ids, fake.detach(), net, shared).backward()
            self.opt.step(mask)
            return rows
        if shared == 1 and self._by_hand():
            # the same gradient as the autograd lines below, bit for bit, without the graph;
            # the real rows (and lazy fakes) made per block of the gradient, where they are used
            real = mlp_grad.Blockwise(b, lambda lo, hi: F.embedding(ids[lo:hi], self.table))
            if lazy:
                made = fake.make
                fake = mlp_grad.Blockwise(fake.rows, lambda lo, hi: made(lo // k, hi // k))
            else:
                fake = fake.detach()
            halves = [(real, 1.0, self._real_weight(b)), (fake, 0.0, 1.0 / mlp_grad.rows_of(fake))]
            self.params.flat.grad = mlp_grad.bce_grad(self.net, self.params, halves, align=k)
            self.opt.step(mask)
            return rows
        real = F.embedding(ids, self.table)  # (M*k, B, d); fastest gather on CPU
        if self.update == "joint" and shared > 1 and first is None:
            first = self._shared_first()
        if self.update == "joint" and shared > 1 and first is not None:
            # fixed's joint critic: autograd's gradient by hand (pategan/fixed/grad.py)
            self.params.flat.grad = self.net.teacher_grad(
                self.params, (real, self._real_weight(b)), (fake.detach(), 1.0 / fake.shape[1]),
                k, first)
            self.opt.step(mask)
            return rows
        real_loss = self._real_loss(self.net(self.params, real, logits=True))
        if self.update == "split":
            real_loss.backward()
            self.opt.step(mask)
            self.opt.zero_grad()
            real_loss = 0.0
        loss = real_loss + bce_logits(self.net(self.params, fake.detach(), logits=True, shared=shared), 0.0)
        loss.backward()
        self.opt.step(mask)
        return rows

    def _by_hand(self) -> bool:
        """Whether a per-teacher joint step takes :mod:`~raudit.generators.nn.mlp_grad`'s
        gradient: not where :func:`_joint_loss` serves it (a plain MLP's full batches)."""
        via_joint_loss = (self.update == "joint" and type(self.net).__call__ is MLP.__call__
                          and not (self.partial_batch and self.sample == "first-shuffled"))
        return (not via_joint_loss and self.update == "joint" and HAND_GRAD
                and mlp_grad.supported(self.net, self.table.device))

    def _real_loss(self, logits: torch.Tensor) -> torch.Tensor:
        if not (self.partial_batch and self.sample == "first-shuffled"):
            return bce_logits(logits, 1.0)
        # a DataLoader's first batch holds min(batch, partition size) rows: average over those only
        per = whole.bce_with_logits(logits, torch.ones_like(logits))  # same bits in any chunk
        valid = (torch.arange(per.shape[1], device=per.device)[None, :] < self.sizes).to(per.dtype)
        return ((per.squeeze(-1) * valid).sum(1) / valid.sum(1).clamp(min=1)).sum()

    def _real_weight(self, b: int) -> torch.Tensor | float:
        """d(real loss)/d(per-row BCE) as autograd computes it for :meth:`_real_loss`."""
        if not (self.partial_batch and self.sample == "first-shuffled"):
            return 1.0 / b
        valid = (torch.arange(b, device=self.sizes.device)[None, :] < self.sizes).to(self.params.flat.dtype)
        count = valid.sum(1).clamp(min=1)
        per_model = torch.ones_like(count) / count  # the division's backward: grad / count
        return (per_model[:, None].expand(valid.shape) * valid).unsqueeze(-1)

    @torch.no_grad()
    def losses_on(self, rows: torch.Tensor) -> np.ndarray:
        """(M, k, k) BCE of every teacher j on the real rows (M, k, B) of teacher i (TeacherLoss)."""
        m, k, b = rows.shape
        n = self.x.shape[1]
        flat = (rows.reshape(m, k * b) + (torch.arange(m, device=rows.device) * n)[:, None]).reshape(-1)
        real = F.embedding(flat, self.x.reshape(m * n, -1)).view(m, k * b, -1)
        logits = self.net(self.params, real, logits=True, shared=self.k).view(m, k, k, b)
        return real_losses(logits)

    def _shared_first(self) -> tuple | None:
        """The teachers' first layer permuted for a batch shared by a model's k teachers, where
        the network has that fast path (fixed's joint critic, ``net.shared_first``); else None
        (and under RAUDIT_HAND_GRAD=0). :meth:`votes` keeps it in ``_first`` until the next
        :meth:`step`, which uses and drops it: only a step changes the parameters."""
        make = getattr(self.net, "shared_first", None)
        if make is None or not HAND_GRAD:
            return None
        return make(self.params, self.k, self.params.flat.device)

    @torch.no_grad()
    def votes(self, fake: torch.Tensor) -> torch.Tensor:
        """n1 (M, B): how many of each model's teachers call each fake sample real.

        For the hand-gradient teachers (smartnoise's) on CPU, in blocks of whole models of
        about :data:`mlp_grad.BLOCK_ROWS` rows a teacher: at M = 128 the first layer's output
        for all k teachers at once was 6.5 MB, written, copied to teacher-major order and read
        back. Each group's kernels see the same operands either way; only batches of a
        multiple of :data:`mlp_grad.ROW_MULTIPLE` rows are cut (see :func:`mlp_grad.bce_grad`
        for why), so a model's votes are the same bits in any block."""
        m, b, _ = fake.shape
        if self._first is None:
            self._first = self._shared_first()
        if self._first is not None:  # fixed's joint critic (pategan/fixed/grad.py)
            return self._tally(self.net.shared_forward(self.params, fake, self.k, self._first), m, b)
        size = m
        if b % mlp_grad.ROW_MULTIPLE == 0 and mlp_grad.supported(self.net, fake.device):
            size = max(1, mlp_grad.BLOCK_ROWS // (b * self.k))
        if size >= m:
            return self._votes(self.params, fake)
        flat, k = self.params.flat.detach(), self.k
        return torch.cat([self._votes(Stacked(flat[lo * k:(lo + size) * k], self.params.layout),
                                      fake[lo:lo + size]) for lo in range(0, m, size)])

    def _votes(self, params: Stacked, fake: torch.Tensor) -> torch.Tensor:
        m, b, _ = fake.shape
        if HAND_GRAD and mlp_grad.supported(self.net, fake.device):  # the same bits, fewer passes
            return self._tally(mlp_grad.probs_shared(self.net, params, fake, self.k), m, b)
        return self._tally(self.net(params, fake, shared=self.k), m, b)

    def _tally(self, p: torch.Tensor, m: int, b: int) -> torch.Tensor:
        """n1 (M, B) from the k teachers' probabilities p (M*k, B, 1)."""
        return (p.squeeze(-1) > 0.5).view(m, self.k, b).sum(dim=1)
