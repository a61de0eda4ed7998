"""A generator's mechanism without training: the releases one model makes at a budget.

A transcript-level audit and the summary's ``eps_true`` need what a run RELEASES, not a
trained model. Where that is a function of the options, the table's shape and the
budget (a data-independent schedule), the generator says so itself through
:meth:`raudit.generators.base.Generator.mechanism`, as the privacy events
(:mod:`raudit.events`) of one model of a run it did not have to train.
Where the releases depend on the votes (the ports' data-dependent stopping, G-PATE,
Confident-GNMax) it returns None and one run's observed events give them.

Knowledge of a generator's schedule lives here, in the generator (its planner, its
stopping rule, its preset's iteration cap), never in the audit as ``if impl == ...``.
"""

from __future__ import annotations

from dataclasses import dataclass

from raudit.events import GaussianStep, PateVote
from raudit.errors import ConfigError

__all__ = ["DryRun", "table_shape", "vote_releases"]


@dataclass(frozen=True)
class DryRun:
    """The releases of ONE model of a run, known without training it.

    ``events``: one accountant event (a :class:`PateVote` with the vote count of every
    query, or a :class:`GaussianStep` with the DP-SGD steps); ``source``: how they were
    obtained, printed beside eps_true; ``uncovered``: releases of the run the events
    leave out (e.g. a DP-bounds pre-pass)."""

    events: tuple[PateVote | GaussianStep, ...]
    source: str
    uncovered: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.events) != 1:
            raise ConfigError(f"a dry run holds one event (one noise kind and scale), got "
                              f"{len(self.events)}")


def table_shape(name: str, table) -> tuple[int, int]:
    """(rows, columns) of the table a dry run is for: its size fixes the schedule."""
    if table is None:
        raise ConfigError(f"{name}'s dry-run schedule needs the training table (its size "
                          "fixes the schedule)")
    return len(table), int(table.shape[1])


def vote_releases(noise: str, scale: float, queries: int, aggregation: str) -> PateVote:
    """``queries`` noisy-vote queries of one model (the vote counts do not matter to eps)."""
    import numpy as np

    if queries < 1:
        raise ConfigError(f"a dry run needs at least one query, got {queries}")
    return PateVote(np.zeros((1, int(queries)), dtype=np.int64), 2, noise, float(scale),
                    aggregation)
