"""The plain types the batched engine passes around: a model's :class:`Encoder`, the
:class:`TrainBatch` a generator's ``train`` receives, what it returns (:class:`Trained`,
its :class:`Critic` and :class:`WhiteBoxView`), and :class:`FittedBatch`, the trained
models that sample. The base class that uses them is :mod:`raudit.generators.batched`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch

from raudit.data.dataset import ColumnMeta
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import Stacked


class Encoder:
    """Maps one training table to the network's space and back (fit per model).

    ``shareable``: the fit is a function of (table, columns) alone (no seed, no noise)
    and nothing changes the encoder after it, so the models of a chunk that train on
    the same table may share one fitted encoder (an audit chunk is M copies of one
    table). Seeded encoders (a DP preprocessing step per model) keep the default False.
    """

    shareable: bool = False

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "Encoder":
        raise NotImplementedError

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        raise NotImplementedError

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        raise NotImplementedError

    def declared_bounds(self) -> dict[str, tuple[float, float]] | None:
        """The output range per column, when it came from public metadata or a DP release
        (never read off the records): what ``inspect`` holds the output to. None: the
        encoder makes no such claim (the output is held to the records' range)."""
        return None


@dataclass
class TrainBatch:
    """M encoded training tables padded to a common row count."""

    x: torch.Tensor  # (M, N_max, d)
    rows: torch.Tensor  # (M,) int64: valid rows per model
    seeds: list[int]
    labels: torch.Tensor | None = None  # (M, N_max) raw label column, for conditional modes

    @property
    def models(self) -> int:
        return self.x.shape[0]

    @property
    def dim(self) -> int:
        return self.x.shape[2]


@dataclass(frozen=True)
class Critic:
    """A trained student/discriminator of M models: ``score(params, x)`` -> (M, n) logits
    at encoded rows ``x`` (M, n, d). Kept only so the white-box threat model
    (:mod:`raudit.audit.whitebox`) can read it inside the chunk; it never leaves the worker."""

    params: Stacked
    score: Callable[[Stacked, torch.Tensor], torch.Tensor]


@dataclass
class Trained:
    """What one batched training call produced for its M models."""

    generator: Stacked  # (M, ...) generator parameters
    sample_fn: Callable[[Stacked, CounterRNG, int], torch.Tensor]  # -> (M, n, d) encoded rows
    iterations: list[int]
    eps_hat: list[float]
    extra: list[dict] = field(default_factory=list)
    critic: Critic | None = None  # the student/discriminator where the loop keeps it


@dataclass(frozen=True)
class WhiteBoxView:
    """What a white-box attacker reads off one trained model (:meth:`BatchedGenerator.white_box_many`):
    ``samples`` decoded rows, and where the critic is reachable its logit at the target
    and at each sample (both in the model's own encoding)."""

    samples: pd.DataFrame
    target_logit: float | None = None
    sample_logits: np.ndarray | None = None


class FittedBatch:
    """Trained models plus their encoders; samples any subset in one forward pass."""

    def __init__(self, trained: Trained, encoders: list[Encoder], device: torch.device,
                 dtype: torch.dtype):
        self.trained, self.encoders, self.device, self.dtype = trained, encoders, device, dtype

    @torch.no_grad()
    def sample(self, index: Sequence[int], n: int, seeds: Sequence[int]) -> list[pd.DataFrame]:
        x = self.sample_encoded(index, n, seeds).cpu().numpy()
        return [self.encoders[i].inverse(x[j]) for j, i in enumerate(index)]

    @torch.no_grad()
    def sample_encoded(self, index: Sequence[int], n: int, seeds: Sequence[int]) -> torch.Tensor:
        """(len(index), n, d) rows in the models' encoding (what the critic reads)."""
        idx = torch.as_tensor(list(index), dtype=torch.long, device=self.device)
        params = self.trained.generator.select(idx)
        rng = CounterRNG(seeds, purpose="sample", device=self.device, dtype=self.dtype)
        return self.trained.sample_fn(params, rng, n).detach()

    @torch.no_grad()
    def critic_logits(self, index: Sequence[int], x: torch.Tensor) -> np.ndarray | None:
        """The critic's logits (len(index), n) at encoded rows ``x``; None without a critic."""
        critic = self.trained.critic
        if critic is None:
            return None
        idx = torch.as_tensor(list(index), dtype=torch.long, device=self.device)
        out = critic.score(critic.params.select(idx), x.to(self.device, self.dtype))
        return out.detach().reshape(len(index), x.shape[1]).cpu().numpy().astype(float)
