"""One event hierarchy: what a generator did, as frozen values (dp_accounting's ``DpEvent`` style).

Generators emit these; accountants (:mod:`raudit.accountants`) consume the privacy events;
the results store (:mod:`raudit.results.events`) writes the training events; the
inspector reads them. No class here computes a privacy claim: an accountant turns events
into moments / RDP / eps, never the training loop.

* :class:`Event`, the base of all, has two branches:
* :class:`PrivacyEvent`: a mechanism an accountant can analyse. Every one covers the M
  models trained together in one batched call; ``mask`` (M,) bool says which models the
  step was charged to (``None``: all of them).

  - :class:`PateVote`: teachers labelled B generated samples; ``n1`` (M, B) teachers voted
    "real" out of ``k``, with ``noise_kind`` noise of scale ``noise_scale`` (Laplace b or
    Gaussian sigma), ``aggregation`` argmax (one noise per class) or threshold (one noise
    on n1, compared with k/2).
  - :class:`GaussianStep`: ``count`` steps of a Gaussian mechanism with noise multiplier z
    (sigma / L2 sensitivity), each on a Poisson subsample of rate q (DP-SGD, DPGAN).
  - :class:`GNMaxThreshold`, :class:`GNMaxAnswer`: the two Gaussian steps of PATE's
    confident GNMax (Papernot et al. 2018): the threshold check on the largest vote count
    (L2 sensitivity 1) and the noisy argmax answer (L2 sensitivity sqrt 2).
  - :class:`ConfidentGNMax`: Q Confident-GNMax queries per model WITH their vote histograms
    (G-PATE's per-coordinate gradient votes), for the data-dependent RDP bound.
  - :class:`NoisyLabels`: ``count`` labels of L2/L1 sensitivity 1 released with Gaussian or
    Laplace noise.
  - :class:`UnsupportedEvent`: a release no accountant can bound, with what it was (as
    dp_accounting's ``UnsupportedDpEvent``); every accountant refuses it by name.

* :class:`TrainingEvent`: what a generator observed itself doing, emitted to an optional
  :data:`Observer` (built only when one is attached, so they cost nothing in audits). Every
  array has a leading model axis of size M; ``active`` marks the models still training. A
  training event that released something (:class:`Releasing`: :class:`Votes`,
  :class:`LabelNoise`, :class:`GradientVotes`, :class:`DpSgdStep`) says what with
  ``released()``, the privacy event of everything it released whatever the generator's
  own accountant charged; the event and its rule stay together, so a new kind of release
  needs no translator elsewhere.

Names: ``noise_kind`` is the distribution ("laplace", "gaussian"), ``noise_scale`` its scale
and ``drawn`` the noise actually drawn (an array), on every event that has them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, TypeVar

import numpy as np
import numpy.typing as npt

from raudit.errors import ConfigError

__all__ = ["AGGREGATIONS", "NOISE_KINDS", "RELEASES_PER_QUERY", "AccountantStep",
           "ConfidentGNMax", "DpSgdStep", "Event", "EventLog", "GNMaxAnswer", "GNMaxThreshold",
           "GaussianStep", "GradientVotes", "LabelNoise", "NoisyLabels", "Observer", "PateVote",
           "PrivacyEvent", "RealRowsRead", "Releasing", "TeacherBatch", "TeacherContributions", "TeacherLoss",
           "TrainingEvent", "UnsupportedEvent", "Votes"]

Ints = npt.NDArray[np.int64]
Floats = npt.NDArray[np.float64]
Bools = npt.NDArray[np.bool_]
MechanismKey = tuple[str, float, float]  # (noise kind, scale at sensitivity 1, sampling rate)

NOISE_KINDS = ("laplace", "gaussian")
AGGREGATIONS = ("argmax", "threshold")
# Noisy draws one query of a PATE vote releases: the noisy histogram of the two classes
# (argmax: a noise per class) or n1 plus one noise (threshold at k/2).
RELEASES_PER_QUERY = {"argmax": 2, "threshold": 1}


class Event:
    """The base of every event (module docstring)."""


class PrivacyEvent(Event):
    """A mechanism an accountant can analyse (or :class:`UnsupportedEvent`)."""

    mask: Bools | None


class TrainingEvent(Event):
    """What a generator observed itself doing (module docstring)."""

    iteration: int
    active: Bools


class Releasing(TrainingEvent):
    """A training event that released something to the generator (module docstring)."""

    def released(self) -> PrivacyEvent:
        raise NotImplementedError


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}")


def _count(value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"count must be an integer >= 1, got {value!r}")


def _noise_kind(value: str) -> None:
    if value not in NOISE_KINDS:
        raise ConfigError(f"noise_kind must be one of {', '.join(NOISE_KINDS)}, got {value!r}")


def _mask(mask: object, models: int | None = None) -> None:
    if mask is None:
        return
    if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.ndim != 1:
        raise ConfigError(f"mask must be a 1-d bool array, got {type(mask).__name__}")
    if models is not None and mask.shape[0] != models:
        raise ConfigError(f"mask has {mask.shape[0]} entries for {models} models")


# --- privacy events: what an accountant consumes ---------------------------------------

@dataclass(frozen=True, eq=False)
class PateVote(PrivacyEvent):
    """B queries answered by a noisy vote of ``k`` teachers, for each of M models."""

    n1: Ints  # (M, B): teachers voting "real"
    k: int
    noise_kind: str = "laplace"
    noise_scale: float = 1e3  # Laplace b (= 1/lambda for the inverse reading) or Gaussian sigma
    aggregation: str = "argmax"
    mask: Bools | None = None

    def __post_init__(self) -> None:
        n1 = np.asarray(self.n1)
        if n1.ndim != 2:
            raise ConfigError(f"n1 must have shape (models, queries), got {n1.shape}")
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k must be an integer >= 1, got {self.k!r}")
        _noise_kind(self.noise_kind)
        if self.aggregation not in AGGREGATIONS:
            raise ConfigError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, "
                              f"got {self.aggregation!r}")
        _positive("noise_scale", self.noise_scale)
        _mask(self.mask, n1.shape[0])
        object.__setattr__(self, "n1", n1)

    @property
    def models(self) -> int:
        return int(self.n1.shape[0])

    @property
    def releases(self) -> int:
        """Noisy draws each model's queries released (one or two per query)."""
        return RELEASES_PER_QUERY[self.aggregation] * int(self.n1.shape[1])


@dataclass(frozen=True)
class GaussianStep(PrivacyEvent):
    """``count`` steps of a Poisson-subsampled Gaussian mechanism (rate 1: no subsampling)."""

    noise_multiplier: float
    sampling_rate: float = 1.0
    count: int = 1
    mask: Bools | None = None

    def __post_init__(self) -> None:
        _positive("noise_multiplier", self.noise_multiplier)
        if not 0.0 < self.sampling_rate <= 1.0:
            raise ConfigError(f"sampling_rate must lie in (0, 1], got {self.sampling_rate!r}")
        _count(self.count)
        _mask(self.mask)

    def key(self) -> MechanismKey:
        return ("gaussian", float(self.noise_multiplier), float(self.sampling_rate))


@dataclass(frozen=True)
class _GNMaxEvent(PrivacyEvent):
    """A GNMax step with noise N(0, sigma^2), ``count`` times, for the models in ``mask``."""

    sigma: float
    count: int = 1
    mask: Bools | None = None

    def __post_init__(self) -> None:
        _positive("sigma", self.sigma)
        _count(self.count)
        _mask(self.mask)


@dataclass(frozen=True)
class GNMaxThreshold(_GNMaxEvent):
    """Confident GNMax's check max_j n_j + N(0, sigma^2) >= T (L2 sensitivity 1)."""

    def key(self) -> MechanismKey:
        return ("gaussian", float(self.sigma), 1.0)


@dataclass(frozen=True)
class GNMaxAnswer(_GNMaxEvent):
    """GNMax's noisy argmax with N(0, sigma^2) per class: L2 sensitivity sqrt 2, z = sigma/sqrt 2.

    Accounted data-independently (the data-dependent bound of Papernot et al. 2018
    needs the vote counts: :class:`ConfidentGNMax`).
    """

    def key(self) -> MechanismKey:
        return ("gaussian", float(self.sigma) / math.sqrt(2.0), 1.0)


@dataclass(frozen=True)
class NoisyLabels(PrivacyEvent):
    """``count`` labels of sensitivity 1 released with Gaussian (sigma) or Laplace (b) noise."""

    noise_kind: str
    noise_scale: float
    count: int = 1
    mask: Bools | None = None

    def __post_init__(self) -> None:
        _noise_kind(self.noise_kind)
        _positive("noise_scale", self.noise_scale)
        _count(self.count)
        _mask(self.mask)

    def key(self) -> MechanismKey:
        return (self.noise_kind, float(self.noise_scale), 1.0)


@dataclass(frozen=True, eq=False)
class ConfidentGNMax(PrivacyEvent):
    """Q Confident-GNMax queries for each of M models, with the votes they were run on.

    ``counts`` (M, Q, C): votes per bin; ``answered`` (M, Q): whether the noisy threshold
    check passed (GNMax is charged only then); ``threshold`` T, ``sigma1`` (threshold
    noise) and ``sigma2`` (GNMax noise).
    """

    counts: Ints
    answered: Bools
    threshold: float
    sigma1: float
    sigma2: float
    mask: Bools | None = None

    def __post_init__(self) -> None:
        counts, answered = np.asarray(self.counts), np.asarray(self.answered)
        if counts.ndim != 3 or counts.shape[2] < 2:
            raise ConfigError(f"counts must have shape (models, queries, bins >= 2), got {counts.shape}")
        if answered.dtype != bool or answered.shape != counts.shape[:2]:
            raise ConfigError(f"answered must be a bool array of shape {counts.shape[:2]}, "
                              f"got {answered.dtype} {answered.shape}")
        if np.any(counts < 0):
            raise ConfigError("vote counts must be >= 0")
        _positive("threshold", self.threshold)
        _positive("sigma1", self.sigma1)
        _positive("sigma2", self.sigma2)
        _mask(self.mask, counts.shape[0])
        object.__setattr__(self, "counts", counts)
        object.__setattr__(self, "answered", answered)

    @property
    def models(self) -> int:
        return int(self.counts.shape[0])


@dataclass(frozen=True)
class UnsupportedEvent(PrivacyEvent):
    """A release no accountant can bound; ``what`` says what it was (the refusal names it)."""

    what: str
    mask: Bools | None = None


# --- training events: what a generator observed itself doing ---------------------------

@dataclass(frozen=True)
class TeacherBatch(TrainingEvent):
    """Rows of the training table that entered one teacher (or discriminator) step."""

    iteration: int
    teacher: int
    rows: Ints  # (M, B): row ids into the training table
    active: Bools  # (M,)
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
    n1: Ints  # (M, B): teachers voting "real"
    k: int  # teachers
    noise_scale: float  # Laplace/Gaussian scale actually used
    drawn: Floats  # (M, B) or (M, B, 2): the noise drawn
    labels: Floats  # (M, B) the labels released to the student
    charged: Bools  # (M,): whether the accountant was charged for them
    active: Bools  # (M,)
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
class AccountantStep(TrainingEvent):
    """The accountant's state after an iteration."""

    iteration: int
    eps_hat: Floats  # (M,)
    moments: Floats  # (M, L)
    active: Bools  # (M,)


@dataclass(frozen=True)
class LabelNoise(Releasing):
    """Noise added to real/fake labels by the discriminator-only ports (original, turing)."""

    iteration: int
    sigma: float
    active: Bools
    drawn: Floats | None = None  # (M, 2B): the draws added to the labels (Gaussian unless noise="laplace")

    def released(self) -> UnsupportedEvent:
        """Nothing an accountant can bound: the noise is on the discriminator's labels, and
        a record's influence reaches the generator through the gradients around it."""
        return UnsupportedEvent("noise on the discriminator's labels (bounds no record's "
                                "influence)", mask=np.asarray(self.active, dtype=bool))


@dataclass(frozen=True)
class GradientVotes(Releasing):
    """G-PATE's private gradient aggregation (DPGradAgg) over one batch of generated records.

    Each record's teacher gradients are projected to ``q`` coordinates and each coordinate
    is a Confident-GNMax query on a histogram of ``bins`` bins.
    """

    iteration: int
    counts: Ints  # (M, B, q, bins): teachers voting for each bin
    k: int  # teachers
    threshold: float  # T, in votes
    sigma1: float  # threshold noise
    sigma2: float  # GNMax noise
    threshold_noise: Floats  # (M, B, q) the N(0, sigma1^2) drawn for the check
    answered: Bools  # (M, B, q): the noisy max crossed T
    choice: Ints  # (M, B, q): the released bin, -1 where not answered
    charged: Bools  # (M,): charged and applied (False: the step would exceed eps)
    active: Bools  # (M,)

    def released(self) -> ConfidentGNMax:
        """Every query with its histogram, for the models that applied the step (one that
        G-PATE computed but did not apply released nothing)."""
        m, bins = self.counts.shape[0], self.counts.shape[-1]
        return ConfidentGNMax(self.counts.reshape(m, -1, bins), self.answered.reshape(m, -1),
                              float(self.threshold), float(self.sigma1), float(self.sigma2),
                              mask=np.asarray(self.active & self.charged, dtype=bool))


@dataclass(frozen=True)
class TeacherContributions(TrainingEvent):
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
    values: Floats  # (M, k, B, q)
    active: Bools  # (M,)


@dataclass(frozen=True)
class TeacherLoss(TrainingEvent):
    """Cross entropy of every teacher on every teacher's first real batch (the study's figure 3).

    ``losses[m, j, i]``: mean BCE (label "real") of teacher j of model m on the rows
    teacher i saw in its first step. ``losses[:, i, i]`` is teacher i on its own data,
    the other entries of column i the rest of the ensemble on the same rows.
    """

    iteration: int
    losses: Floats  # (M, k, k)
    active: Bools  # (M,)


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
    active: Bools  # (M,)

    def released(self) -> GaussianStep:
        return GaussianStep(float(self.noise_multiplier), float(self.sampling_rate),
                            int(self.steps), mask=np.asarray(self.active, dtype=bool))


@dataclass(frozen=True)
class RealRowsRead(Releasing):
    """A network that shapes the generator trained on real rows with no noise at all
    (synthcity's critic, a plain GAN's discriminator): the generator's updates are then a
    function of those rows, so nothing an accountant models bounds the run, whatever its
    votes cost."""

    iteration: int
    who: str  # "the critic", "the discriminator"
    active: Bools  # (M,)

    def released(self) -> UnsupportedEvent:
        return UnsupportedEvent(f"{self.who} trains on real rows with no noise",
                                mask=np.asarray(self.active, dtype=bool))


Observer = Callable[[TrainingEvent], None]
E = TypeVar("E", bound=Event)


class EventLog:
    """An observer that keeps every event (for tests and `raudit inspect`)."""

    def __init__(self) -> None:
        self.events: list[TrainingEvent] = []

    def __call__(self, event: TrainingEvent) -> None:
        self.events.append(event)

    def of(self, kind: type[E]) -> list[E]:
        return [e for e in self.events if isinstance(e, kind)]
