"""Teacher-parallel training: one generator whose teacher shards live on Ray actors.

For a large k, or data that should stay on workers, the k teachers of one
PATE-GAN are split over ``workers`` actors. Each actor receives only the rows
of its own teachers' partitions (once, at start) and from then on sees only
generated batches: the driver sends each fake batch, the actors step their
teachers or return vote counts, and the driver sums the votes.

Every teacher keeps the random stream it would have in one process
(``teacher_rng`` is keyed by teacher index), so teacher-parallel training
gives the same model as local training, up to float summation order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd
import ray
import torch

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError
from raudit.generators.base import Generator
from raudit.generators.batch_types import TrainBatch
from raudit.generators.batched import BatchedGenerator
from raudit.events import Observer
from raudit.generators.nn.stacked import MLP
from raudit.generators.pategan.core.nets import LoopConfig
from raudit.generators.pategan.core.teachers import LocalTeachers, TeacherTraining, teacher_rng


class TeacherShard:
    """Teachers ``first .. first+k-1`` of one model, with their rows only."""

    def __init__(self, x: np.ndarray, parts: np.ndarray, sizes: np.ndarray, rows: np.ndarray,
                 seed: int, first: int, net: MLP, training: TeacherTraining, dtype: str):
        torch.set_num_threads(1)
        dt = getattr(torch, dtype)
        self.rows = torch.as_tensor(rows)  # shard-local row -> global row id
        rng = teacher_rng([seed], parts.shape[0], first=first, dtype=dt)
        self.teachers = LocalTeachers(net, rng, torch.as_tensor(x, dtype=dt)[None],
                                      torch.as_tensor(parts)[None], torch.as_tensor(sizes)[None],
                                      training)

    def step(self, fake: np.ndarray, active: bool) -> np.ndarray:
        mask = None if active else torch.zeros(1, dtype=torch.bool)
        local = self.teachers.step(torch.as_tensor(fake), mask)
        return self.rows[local].numpy()

    def votes(self, fake: np.ndarray) -> np.ndarray:
        return self.teachers.votes(torch.as_tensor(fake)).numpy()


class RayTeachers:
    """Driver-side stand-in for LocalTeachers whose teachers are Ray actors."""

    def __init__(self, actors: list[Any]):
        self.actors = actors

    def step(self, fake: torch.Tensor, active: torch.Tensor | None) -> torch.Tensor:
        on = True if active is None else bool(active[0])
        ref = ray.put(fake.detach().cpu().numpy())
        rows = ray.get([a.step.remote(ref, on) for a in self.actors])
        return torch.as_tensor(np.concatenate(rows, axis=1))

    def votes(self, fake: torch.Tensor) -> torch.Tensor:
        ref = ray.put(fake.detach().cpu().numpy())
        return torch.as_tensor(sum(ray.get([a.votes.remote(ref) for a in self.actors])))


def _spawn_shards(workers: int, seed: int, dtype: torch.dtype
                  ) -> Callable[[TrainBatch, torch.Tensor, torch.Tensor, LoopConfig, MLP], RayTeachers]:
    def make(batch: TrainBatch, parts: torch.Tensor, sizes: torch.Tensor, cfg: LoopConfig,
             net: MLP) -> RayTeachers:
        k = parts.shape[1]
        if workers > k:
            raise ConfigError(f"--workers {workers} is more than the {k} teachers; use at most {k}")
        remote = ray.remote(num_cpus=1)(TeacherShard)
        actors = []
        for group in np.array_split(np.arange(k), workers):
            first, last = int(group[0]), int(group[-1]) + 1
            p, s = parts[0, first:last].cpu().numpy(), sizes[0, first:last].cpu().numpy()
            used = np.unique(np.concatenate([p[t, : s[t]] for t in range(len(s))]))
            local = np.searchsorted(used, p)  # global row id -> shard row
            x = batch.x[0, used].cpu().numpy()
            training = TeacherTraining(cfg.batch, cfg.teacher_rate, sample=cfg.teacher_sample)
            actors.append(remote.remote(x, local, s, used, seed, first, net, training,
                                        str(dtype).replace("torch.", "")))
        return RayTeachers(actors)
    return make


def fit_teacher_parallel(gen: BatchedGenerator, table: pd.DataFrame, *, epsilon: float,
                         delta: float | None, seed: int, columns: Sequence[ColumnMeta] | None,
                         workers: int = 2, progress: Callable[[int], None] | None = None,
                         observer: Observer | None = None) -> Generator:
    """Fit ``gen`` on ``table`` with its teachers on ``workers`` Ray actors."""
    if not gen.describe().teachers_on_ray:
        raise ConfigError(f"{gen.name} has no teacher ensemble to spread; --parallel teachers "
                          "works for the PATE generators (paper, ...)")
    if workers < 1:
        raise ConfigError(f"--workers must be at least 1, got {workers}")
    started = not ray.is_initialized()
    if started:
        address = os.environ.get("RAY_ADDRESS")
        ray.init(address=address or None, num_cpus=None if address else workers,
                 include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        return gen.fit_many([table], epsilon=epsilon, delta=delta, seeds=[seed], columns=columns,
                            progress=progress, observer=observer,
                            train_options={"make_teachers": _spawn_shards(workers, seed, gen.dtype)})[0]
    finally:
        if started:
            from raudit.engine.ray_start import shutdown

            shutdown()
