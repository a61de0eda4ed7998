"""Training events: what a generator did, emitted to an optional observer.

Generators never compute privacy claims about themselves for the inspector; they
report what they did (which rows each teacher saw, which votes were cast with what
noise, what the accountant said) and ``raudit.inspect`` measures the rest.

Every array has a leading model axis of size M (the models trained together in one
batched call); ``active`` marks the models still training at that step. Events are
only built when an observer is attached, so they cost nothing in audits.

An event that released something (:class:`Releasing`) says what, as the privacy event
an accountant consumes (:mod:`raudit.accountants.events`): ``released()``, whatever the
generator's own accountant charged for it, or :class:`UnsupportedEventError` naming the
event when no accountant can bound it. The event and its rule stay together, so a new
kind of release needs no translator elsewhere.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Union

import numpy as np

from raudit.accountants.errors import UnsupportedEventError
from raudit.accountants.events import (RELEASES_PER_QUERY, ConfidentGNMax, GaussianStep, PateVote,
                                       PrivacyEvent)

if TYPE_CHECKING:  # torch is only needed by the loops that build TeacherLoss
    import torch


class Releasing:
    """An observed event that released something to the generator (module docstring)."""

    def released(self) -> PrivacyEvent:
        raise NotImplementedError


@dataclass(frozen=True)
class TeacherBatch:
    """Rows of the training table that entered one teacher (or discriminator) step."""

    iteration: int
    teacher: int
    rows: np.ndarray  # (M, B) int: row ids into the training table
    active: np.ndarray  # (M,) bool
    # Every teacher whose votes these rows move, ``teacher`` included; () is ``teacher``
    # alone. State shared across teachers widens it: G-PATE's shared_teacher_state steps a
    # slot's teachers through one Adam state, so a row of one moves every teacher of the slot.
    reach: tuple[int, ...] = ()

    @property
    def reached(self) -> tuple[int, ...]:
        """The teachers whose votes these rows move (``reach``, or the teacher alone)."""
        return self.reach or (self.teacher,)


@dataclass(frozen=True)
class Votes(Releasing):
    """One aggregation of teacher votes over a batch of generated samples."""

    iteration: int
    n1: np.ndarray  # (M, B) int: teachers voting "real"
    k: int  # teachers
    noise_scale: float  # Laplace/Gaussian scale actually used
    noise: np.ndarray  # (M, B) or (M, B, 2): the noise drawn
    labels: np.ndarray  # (M, B) the labels released to the student
    charged: np.ndarray  # (M,) bool: whether the accountant was charged for them
    active: np.ndarray  # (M,) bool
    # How many noisy draws each query released: "argmax" one noise per class (two),
    # "threshold" one noise on n1 compared with k/2 (one). No default: a port that
    # forgot to say was once counted as two releases per query (eps_true doubled).
    aggregation: str
    noise_kind: str = "laplace"

    @property
    def draws_per_query(self) -> int:
        return RELEASES_PER_QUERY[self.aggregation]

    def released(self) -> PateVote:
        """The vote of every active model at the noise scale actually drawn, charged or not:
        an uncharged vote still labels the student's samples (synthcity leaves 81 of 170
        batches uncharged)."""
        return PateVote(np.asarray(self.n1), int(self.k), self.noise_kind, float(self.noise_scale),
                        self.aggregation, mask=np.asarray(self.active, dtype=bool))


@dataclass(frozen=True)
class AccountantStep:
    """The accountant's state after an iteration."""

    iteration: int
    eps_hat: np.ndarray  # (M,)
    moments: np.ndarray  # (M, L)
    active: np.ndarray  # (M,) bool


@dataclass(frozen=True)
class LabelNoise(Releasing):
    """Noise added to real/fake labels by the discriminator-only ports (original, turing)."""

    iteration: int
    sigma: float
    active: np.ndarray
    noise: np.ndarray | None = None  # (M, 2B): the draws added to the labels (Gaussian unless noise="laplace")

    def released(self) -> PrivacyEvent:
        """Nothing an accountant can bound: the noise is on the discriminator's labels, and
        a record's influence reaches the generator through the gradients around it."""
        raise UnsupportedEventError("noise on the discriminator's labels (bounds no record's "
                                    "influence)")


@dataclass(frozen=True)
class GradientVotes(Releasing):
    """G-PATE's private gradient aggregation (DPGradAgg) over one batch of generated records.

    Each record's teacher gradients are projected to ``q`` coordinates and each coordinate
    is a Confident-GNMax query on a histogram of ``bins`` bins.
    """

    iteration: int
    counts: np.ndarray  # (M, B, q, bins) int: teachers voting for each bin
    k: int  # teachers
    threshold: float  # T, in votes
    sigma1: float  # threshold noise
    sigma2: float  # GNMax noise
    threshold_noise: np.ndarray  # (M, B, q) the N(0, sigma1^2) drawn for the check
    answered: np.ndarray  # (M, B, q) bool: the noisy max crossed T
    choice: np.ndarray  # (M, B, q) int: the released bin, -1 where not answered
    charged: np.ndarray  # (M,) bool: charged and applied (False: the step would exceed eps)
    active: np.ndarray  # (M,) bool

    def released(self) -> ConfidentGNMax:
        """Every query with its histogram, for the models that applied the step (one that
        G-PATE computed but did not apply released nothing)."""
        m, bins = self.counts.shape[0], self.counts.shape[-1]
        return ConfidentGNMax(self.counts.reshape(m, -1, bins), self.answered.reshape(m, -1),
                              float(self.threshold), float(self.sigma1), float(self.sigma2),
                              mask=np.asarray(self.active & self.charged, dtype=bool))


@dataclass(frozen=True)
class TeacherContributions:
    """Each teacher's own input to a private aggregation, before clipping and binning (G-PATE:
    its projected gradient per generated record and coordinate), for the check that a
    teacher's votes are a function of its own partition (:mod:`raudit.inspect.partition`).

    Emitted for the FIRST aggregation only: there the generator is still its data-free
    initialisation, so each teacher's input may depend on its own partition and public
    draws alone; from the second step on the generator has learned from every partition
    and all inputs legitimately depend on all of them (and k x B x q values a step would
    be the largest event by far).
    """

    iteration: int
    values: np.ndarray  # (M, k, B, q) float64
    active: np.ndarray  # (M,) bool




def real_losses(logits: "torch.Tensor", ok: "torch.Tensor | None" = None) -> np.ndarray:
    """(M, k, k) TeacherLoss matrix from logits (M, j=k, i=k, R) of every teacher j on
    teacher i's first rows, labelled real; ``ok`` (M, 1 or k, i=k, R) masks padding rows."""
    import torch

    per = torch.nn.functional.softplus(-logits.double())
    if ok is None:
        return per.mean(-1).cpu().numpy()
    w = ok.to(per.dtype).expand_as(per)
    return ((per * w).sum(-1) / w.sum(-1).clamp(min=1)).cpu().numpy()


@dataclass(frozen=True)
class TeacherLoss:
    """Cross entropy of every teacher on every teacher's first real batch (the study's figure 3).

    ``losses[m, j, i]``: mean BCE (label "real") of teacher j of model m on the rows
    teacher i saw in its first step. ``losses[:, i, i]`` is teacher i on its own data,
    the other entries of column i the rest of the ensemble on the same rows.
    """

    iteration: int
    losses: np.ndarray  # (M, k, k)
    active: np.ndarray  # (M,) bool


@dataclass(frozen=True)
class DpSgdStep(Releasing):
    """DP-SGD steps of a model that reads real rows directly (a DP-GAN critic): each step
    clips per-sample gradients to ``clip`` and adds N(0, (noise_multiplier clip)^2),
    on a Poisson sample of rate ``sampling_rate``."""

    iteration: int
    steps: int
    noise_multiplier: float
    clip: float
    sampling_rate: float
    active: np.ndarray  # (M,) bool

    def released(self) -> GaussianStep:
        return GaussianStep(float(self.noise_multiplier), float(self.sampling_rate),
                            int(self.steps), mask=np.asarray(self.active, dtype=bool))


Event = Union[TeacherBatch, Votes, AccountantStep, LabelNoise, TeacherLoss, GradientVotes,
              DpSgdStep, TeacherContributions]
Observer = Callable[[Event], None]


class EventLog:
    """An observer that keeps every event (for tests and `raudit inspect`)."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]
