"""What the PATE-GAN loop (:mod:`.loop`) trains with, besides the teachers: its
configuration (:class:`LoopConfig`) and the privacy event its votes release
(:func:`vote_event`), the three networks (:class:`PateNets`, which the ports override),
the latent draws and the fake batches the teachers and the votes see.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from raudit.events import ConfidentGNMax, GNMaxAnswer, PateVote
from raudit.errors import ConfigError
from raudit.generators.nn import mlp_grad
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP, Stacked
from raudit.generators.pategan.core.aggregation import ConfidentVotes


# models per block of the generator's step by hand (PateNets.generator_grad): at
# smartnoise's 64 rows of latent 64 a model's activations are ~0.5 MB, so 16 models keep a
# block's in L2 and L3 rather than memory. Measured at M = 128 (one thread, a loaded host,
# least of 20 steps): whole 39.1 ms, blocks of 32 36.0, 16 34.0, 8 40.2, 4 51.4 (below
# that the Python per block costs more than the cache saves)
GENERATOR_BLOCK = 16


class EpsilonTooSmall(ConfigError):
    """The accountant's floor log(1/delta)/L is already above eps (smartnoise raises this)."""


@dataclass(frozen=True)
class LoopConfig:
    """Everything the loop needs to know besides the networks."""

    k: int
    batch: int
    lam: float
    noise_scale: float  # the Laplace scale actually used in aggregation
    aggregation: str = "argmax"  # argmax (two noises) | threshold (one noise at k/2)
    accountant: str = "paper"
    orders: int = 100
    teacher_steps: int = 5
    student_steps: int = 5
    check: str = "after"  # after | top | planned (the budget is fixed in advance: never stop on eps)
    max_iter: int | None = None
    z_dim: int = 1
    z_train: str = "uniform"  # uniform [0,1) | uniform-sym (-1,1) | normal
    generator_loss: str = "saturating"  # saturating log(1-S) | non-saturating BCE(S, 1)
    teacher_sample: str = "with-replacement"
    lr: float = 1e-4
    teacher_fakes: str = "shared"  # shared (one fake batch per round) | per-teacher (a fresh one each)
    teacher_update: str = "joint"  # joint (one step on real+fake) | split (a step on each)
    partial_batch: bool = False  # first-shuffled: a partition smaller than batch gives a short batch
    noise: str = "laplace"  # laplace (PATE moments accountants) | gaussian (GNMax, dp_accounting)
    student_batch: int | None = None  # queries per student round (None: ``batch``)
    control: str | None = None  # "coin": labels are fair coins (the utility's data-free control)
    confident: ConfidentVotes | None = None  # Confident-GNMax instead of ``noise``
    teacher_lr: float | None = None  # the teachers' Adam lr (None: ``lr``)

    @property
    def teacher_rate(self) -> float:
        """The teachers' Adam lr: ``teacher_lr``, else ``lr`` (local and Ray teachers alike)."""
        return self.lr if self.teacher_lr is None else self.teacher_lr


def vote_event(cfg: LoopConfig, n1: np.ndarray, active: np.ndarray, answered=None):
    """The privacy event of one batch of votes: every query is charged (Confident-GNMax:
    the check on every query, GNMax on the answered ones)."""
    if cfg.confident is not None:
        c = cfg.confident
        return ConfidentGNMax(np.stack([cfg.k - n1, n1], axis=-1), answered, c.threshold,
                              c.sigma1, c.sigma2, mask=active)
    if cfg.noise == "gaussian":
        return GNMaxAnswer(cfg.noise_scale, count=int(n1.shape[1]), mask=active)
    return PateVote(n1, cfg.k, "laplace", cfg.noise_scale, cfg.aggregation, active)


def draw_z(rng: CounterRNG, kind: str, n: int, dim: int) -> torch.Tensor:
    if kind == "uniform":  # latent noise: 32 bits are plenty, and half the hashing in float64
        return rng.uniform(n, dim, bits=32)
    if kind == "uniform-sym":
        return rng.uniform_range(-1.0, 1.0, n, dim)
    if kind == "normal":
        return rng.normal(n, dim)
    raise ValueError(f"unknown noise distribution {kind!r}")


class PateNets:
    """The three network families of a PATE-GAN; ports override the defaults.

    ``block_elements``: generate the fakes the teachers and votes see (no gradients) in
    blocks of models whose latent draw holds about this many numbers, so that each block's
    noise and activations stay in the core's cache (see :func:`fakes`); None: all models at
    once. Only for generators whose models share nothing, so that a model's rows do not
    depend on its block (:class:`Stacked` networks; tests/ports check it bit for bit).
    """

    def __init__(self, generator: MLP, student: MLP, teacher: MLP, *,
                 block_elements: int | None = None):
        self.generator, self.student, self.teacher = generator, student, teacher
        self.block_elements = block_elements

    def generate(self, p: Stacked, z: torch.Tensor) -> torch.Tensor:
        return self.generator(p, z)

    def generator_grad(self, gen: Stacked, judge: Stacked, z: torch.Tensor) -> torch.Tensor | None:
        """The (G, P) gradient of the non-saturating generator loss, the per-model mean of
        BCE(S(G(z)), 1) with the student ``judge`` fixed, by hand, or None where autograd
        computes it. By hand only where the student's input gradient
        (:func:`mlp_grad.bce_input_grad`) and the generator's backward (a ``hand_grad`` of
        its own, e.g. smartnoise's ResidualGenerator) reproduce autograd's bits, and
        ``generate`` is this class's."""
        hand = getattr(self.generator, "hand_grad", None)
        if (hand is None or type(self).generate is not PateNets.generate
                or not mlp_grad.supported(self.student, z.device)):
            return None
        weight = 1.0 / z.shape[1]  # the mean over a model's B rows, as autograd's mean backward

        def head(x: torch.Tensor, lo: int, hi: int) -> torch.Tensor:
            return mlp_grad.bce_input_grad(self.student, Stacked(judge.flat[lo:hi], judge.layout),
                                           x, 1.0, weight)
        # in blocks only for batches of whole SIMD row blocks, as mlp_grad.bce_grad (the
        # student's logit sum): then each kernel gives a model's bits in any block
        block = GENERATOR_BLOCK if z.shape[1] % mlp_grad.ROW_MULTIPLE == 0 else None
        return hand(gen, z, head, block)


@torch.no_grad()
def fakes(nets: PateNets, gen: Stacked, rng: CounterRNG, cfg: LoopConfig, n: int) -> torch.Tensor:
    """n generated rows per model, without gradients: ``nets.generate(gen, draw_z(...))``,
    block by block over the models when ``nets.block_elements`` asks for it (CPU only).

    smartnoise's teachers see 5 x k x 64 fresh rows per model and iteration: at M = 32 the
    float64 latent draw alone is 5 MB and every generator layer another, more than a core's
    L2 cache, and that pass was 2/3 of the step. Each model's noise comes from its own
    stream at the same counter and its rows from its own parameters, so the rows are the
    same bits either way (the random streams and the determinism across M guarantee it).
    """
    m, block = rng.models, nets.block_elements
    size = max(1, block // max(1, n * cfg.z_dim)) if block else m
    if size >= m or rng.device.type != "cpu":
        return nets.generate(gen, draw_z(rng, cfg.z_train, n, cfg.z_dim))
    flat, out = gen.flat.detach(), []
    for lo in range(0, m, size):
        part = rng.part(lo, lo + size)
        z = draw_z(part, cfg.z_train, n, cfg.z_dim)
        out.append(nets.generate(Stacked(flat[lo:lo + size], gen.layout), z))
    rng.counter = part.counter
    return torch.cat(out)


class TeacherFakes:
    """One round's per-teacher fakes, ``(lo, hi) ->`` models lo..hi-1's (k*(hi-lo), B, d):
    what ``fakes(nets, gen, rng, cfg, k*B)`` gives those models (each block draws from the
    streams at the round's counter; ``counter`` is where the round leaves it). The teachers'
    step makes them block by block where it uses them (teachers.LocalTeachers.step)."""

    def __init__(self, nets: PateNets, gen: Stacked, rng: CounterRNG, cfg: LoopConfig):
        self.nets, self.gen, self.rng, self.cfg = nets, gen, rng, cfg
        self.counter: int | None = None

    def __call__(self, lo: int, hi: int) -> torch.Tensor:
        part, cfg = self.rng.part(lo, hi), self.cfg
        block = Stacked(self.gen.flat.detach()[lo:hi], self.gen.layout)
        out = fakes(self.nets, block, part, cfg, cfg.k * cfg.batch)
        self.counter = part.counter
        return out.reshape((hi - lo) * cfg.k, cfg.batch, -1)
