"""Privacy events: what a mechanism did, as frozen values an accountant consumes.

A generator describes every privacy-relevant step it takes as one of these and
hands it to its accountant (:mod:`raudit.accountants.accountant`); the accountant,
never the training loop, turns the events into moments / RDP / eps. Every event
covers the M models trained together in one batched call: ``mask`` (M,) bool says
which models the step was charged to (``None``: all of them).

* :class:`PateVote`: teachers labelled B generated samples; ``n1`` (M, B) teachers
  voted "real" out of ``k``; ``noise`` is the noise kind and ``scale`` its scale
  (Laplace b or Gaussian sigma), ``aggregation`` argmax (one noise per class) or
  threshold (one noise on n1, compared with k/2).
* :class:`GaussianStep`: ``count`` steps of a Gaussian mechanism with noise
  multiplier z (sigma / L2 sensitivity), each on a Poisson subsample of rate q
  (DP-SGD, DPGAN).
* :class:`GNMaxThreshold`, :class:`GNMaxAnswer`: the two Gaussian steps of PATE's
  confident GNMax (Papernot et al. 2018): the threshold check on the largest vote
  count (L2 sensitivity 1) and the noisy argmax answer (L2 sensitivity sqrt 2).
* :class:`ConfidentGNMax`: Q Confident-GNMax queries per model WITH their vote histograms
  (G-PATE's per-coordinate gradient votes), for the data-dependent RDP bound.
* :class:`LabelNoise`: ``count`` draws of Gaussian or Laplace noise on labels of
  L2/L1 sensitivity 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Union

import numpy as np

from raudit.errors import ConfigError

__all__ = ["ConfidentGNMax", "GNMaxAnswer", "GNMaxThreshold", "GaussianStep", "LabelNoise", "PateVote",
           "PrivacyEvent", "NOISE_KINDS", "AGGREGATIONS", "RELEASES_PER_QUERY"]

NOISE_KINDS = ("laplace", "gaussian")
AGGREGATIONS = ("argmax", "threshold")
# Noisy draws one query of a PATE vote releases: the noisy histogram of the two classes
# (argmax: a noise per class) or n1 plus one noise (threshold at k/2).
RELEASES_PER_QUERY = {"argmax": 2, "threshold": 1}


def _positive(name: str, value: float) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.floating, np.integer)) \
            or not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{name} must be a finite number > 0, got {value!r}")


def _count(value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"count must be an integer >= 1, got {value!r}")


def _mask(mask, models: int | None = None) -> None:
    if mask is None:
        return
    if not isinstance(mask, np.ndarray) or mask.dtype != bool or mask.ndim != 1:
        raise ConfigError(f"mask must be a 1-d bool array, got {type(mask).__name__}")
    if models is not None and mask.shape[0] != models:
        raise ConfigError(f"mask has {mask.shape[0]} entries for {models} models")


@dataclass(frozen=True, eq=False)
class PateVote:
    """B queries answered by a noisy vote of ``k`` teachers, for each of M models."""

    n1: np.ndarray  # (M, B) int: teachers voting "real"
    k: int
    noise: str = "laplace"
    scale: float = 1e3  # Laplace b (= 1/lambda for the inverse reading) or Gaussian sigma
    aggregation: str = "argmax"
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        n1 = np.asarray(self.n1)
        if n1.ndim != 2:
            raise ConfigError(f"n1 must have shape (models, queries), got {n1.shape}")
        if isinstance(self.k, bool) or not isinstance(self.k, (int, np.integer)) or self.k < 1:
            raise ConfigError(f"k must be an integer >= 1, got {self.k!r}")
        if self.noise not in NOISE_KINDS:
            raise ConfigError(f"noise must be one of {', '.join(NOISE_KINDS)}, got {self.noise!r}")
        if self.aggregation not in AGGREGATIONS:
            raise ConfigError(f"aggregation must be one of {', '.join(AGGREGATIONS)}, "
                              f"got {self.aggregation!r}")
        _positive("scale", self.scale)
        _mask(self.mask, n1.shape[0])
        object.__setattr__(self, "n1", n1)

    @property
    def models(self) -> int:
        return self.n1.shape[0]

    @property
    def releases(self) -> int:
        """Noisy draws each model's queries released (one or two per query)."""
        return RELEASES_PER_QUERY[self.aggregation] * int(self.n1.shape[1])


@dataclass(frozen=True)
class GaussianStep:
    """``count`` steps of a Poisson-subsampled Gaussian mechanism (rate 1: no subsampling)."""

    noise_multiplier: float
    sampling_rate: float = 1.0
    count: int = 1
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        _positive("noise_multiplier", self.noise_multiplier)
        if not 0.0 < self.sampling_rate <= 1.0:
            raise ConfigError(f"sampling_rate must lie in (0, 1], got {self.sampling_rate!r}")
        _count(self.count)
        _mask(self.mask)

    def key(self) -> tuple:
        return ("gaussian", float(self.noise_multiplier), float(self.sampling_rate))


@dataclass(frozen=True)
class _GNMaxEvent:
    """A GNMax step with noise N(0, sigma^2), ``count`` times, for the models in ``mask``."""

    sigma: float
    count: int = 1
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        _positive("sigma", self.sigma)
        _count(self.count)
        _mask(self.mask)


@dataclass(frozen=True)
class GNMaxThreshold(_GNMaxEvent):
    """Confident GNMax's check max_j n_j + N(0, sigma^2) >= T (L2 sensitivity 1)."""

    def key(self) -> tuple:
        return ("gaussian", float(self.sigma), 1.0)


@dataclass(frozen=True)
class GNMaxAnswer(_GNMaxEvent):
    """GNMax's noisy argmax with N(0, sigma^2) per class: L2 sensitivity sqrt 2, z = sigma/sqrt 2.

    Accounted data-independently (the data-dependent bound of Papernot et al. 2018
    needs the vote counts and is not implemented here).
    """

    def key(self) -> tuple:
        return ("gaussian", float(self.sigma) / math.sqrt(2.0), 1.0)


@dataclass(frozen=True)
class LabelNoise:
    """``count`` labels of sensitivity 1 released with Gaussian (sigma) or Laplace (b) noise."""

    noise: str
    scale: float
    count: int = 1
    mask: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.noise not in NOISE_KINDS:
            raise ConfigError(f"noise must be one of {', '.join(NOISE_KINDS)}, got {self.noise!r}")
        _positive("scale", self.scale)
        _count(self.count)
        _mask(self.mask)

    def key(self) -> tuple:
        return (self.noise, float(self.scale), 1.0)


@dataclass(frozen=True, eq=False)
class ConfidentGNMax:
    """Q Confident-GNMax queries for each of M models, with the votes they were run on.

    ``counts`` (M, Q, C): votes per bin; ``answered`` (M, Q): whether the noisy threshold
    check passed (GNMax is charged only then); ``threshold`` T, ``sigma1`` (threshold
    noise) and ``sigma2`` (GNMax noise).
    """

    counts: np.ndarray
    answered: np.ndarray
    threshold: float
    sigma1: float
    sigma2: float
    mask: np.ndarray | None = None

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
        return self.counts.shape[0]


PrivacyEvent = Union[PateVote, GaussianStep, GNMaxThreshold, GNMaxAnswer, LabelNoise, ConfidentGNMax]
