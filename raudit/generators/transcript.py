"""What a run released, as privacy events: the input of eps_true and the transcript audits.

A run's observed events (:mod:`raudit.events`) say what the code did; each
one that released something says what, as a privacy event
(:meth:`~raudit.events.Releasing.released`: a vote -> :class:`PateVote`, a
DP-SGD step -> :class:`GaussianStep`, G-PATE's applied gradient votes ->
:class:`ConfidentGNMax`). :func:`privacy_events` collects them; a release no accountant
can bound (an :class:`UnsupportedEvent`: noise on a discriminator's real/fake labels) is
listed in ``unsupported`` and eps_true is then infinite.

The record's sensitivity is read off the :class:`TeacherBatch` events: the most
distinct teachers any row reached (1 for a partition; a teacher's ``reach`` counts every
teacher its state moves, e.g. G-PATE's shared optimiser state). Steps a generator takes
outside its observer (a DP bounds pre-pass) are not events and not included.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from raudit.accountants.true_curve import TrueEps, eps_true
from raudit.events import Releasing, TeacherBatch, UnsupportedEvent

__all__ = ["ModelEvents", "Transcript", "privacy_events", "run_eps_true", "teachers_per_record"]


@dataclass(frozen=True)
class Transcript:
    """The privacy events of a run (M models), and what could not be translated."""

    events: tuple
    unsupported: tuple[str, ...]
    sensitivity: tuple[int, ...]  # per model: distinct teachers a row reached over the run
    sensitivity_per_iteration: tuple[int, ...] = ()  # ... within one iteration

    @property
    def empty(self) -> bool:
        return not self.events and not self.unsupported


def teachers_per_record(observed, model: int = 0, *, per_iteration: bool = False) -> int:
    """The most distinct teachers any one row of ``model`` reached (1 if none emitted),
    over the whole run or (``per_iteration``) within one iteration: the teachers of every
    batch it entered, with their ``reach``.

    Teacher ids < 0 (a student's own batches) are not teachers."""
    # a row keeps the reach tuples it entered (few: one per slot), united once at the end
    owners: dict[tuple[int, int], set[tuple[int, ...]]] = {}
    for e in observed:
        if isinstance(e, TeacherBatch) and e.teacher >= 0 and e.active[model]:
            it = int(e.iteration) if per_iteration else 0
            reached = e.reached
            for r in np.unique(np.asarray(e.rows[model]).ravel()):
                if r >= 0:
                    owners.setdefault((it, int(r)), set()).add(reached)
    return max((_count(v) for v in owners.values()), default=1)


def _count(reaches: set[tuple[int, ...]]) -> int:
    """Distinct teachers in a row's reach tuples."""
    return len(next(iter(reaches))) if len(reaches) == 1 else len(set().union(*reaches))


def privacy_events(observed) -> Transcript:
    """Translate a run's observed events (module docstring)."""
    observed = list(observed)
    out, unsupported, models = [], set(), None
    for e in observed:
        active = getattr(e, "active", None)
        if active is not None:
            models = len(active)
        if isinstance(e, Releasing):
            released = e.released()
            if isinstance(released, UnsupportedEvent):
                unsupported.add(released.what)
            else:
                out.append(released)
    sens = tuple(teachers_per_record(observed, m) for m in range(models or 0))
    per_it = tuple(teachers_per_record(observed, m, per_iteration=True) for m in range(models or 0))
    return Transcript(tuple(out), tuple(sorted(unsupported)), sens, per_it)


def run_eps_true(observed, *, delta: float, model: int = 0,
                 neighbours: str = "add-remove") -> TrueEps:
    """eps_true of model ``model`` of a run from its observed events.

    The sensitivity is the most teachers a row reached over the whole run: a valid
    bound whatever the teachers remember. Where a row reaches fewer teachers within
    one iteration (a port that re-draws its partition), the note also gives eps_true
    for teachers refit from scratch each iteration (synthcity's logistic regressions
    are; the number then applies)."""
    tr = privacy_events(observed)
    sens = tr.sensitivity[model] if tr.sensitivity else 1
    per_it = tr.sensitivity_per_iteration[model] if tr.sensitivity_per_iteration else sens
    return _eps_true(tr.events, tr.unsupported, (sens, per_it), delta=delta, model=model,
                     neighbours=neighbours)


def _eps_true(events, unsupported, sensitivity: tuple[int, int], *, delta: float, model: int,
              neighbours: str) -> TrueEps:
    sens, per_it = sensitivity
    if unsupported:
        note = "; ".join(unsupported)
        composed: dict[str, int] = {}
        if events:  # what the rest would cost alone: the number a port's own claim rests on
            part = eps_true(events, delta=delta, model=model, sensitivity=sens,
                            neighbours=neighbours)
            note += f"; its bounded releases alone: eps {part.eps:.4g} ({part.method})"
            composed = part.releases
        return TrueEps(math.inf, delta, "none", sens, composed, note)
    out = eps_true(events, delta=delta, model=model, sensitivity=sens, neighbours=neighbours)
    if per_it < sens and out.method == "pld":
        fresh = eps_true(events, delta=delta, model=model, sensitivity=per_it,
                         neighbours=neighbours)
        out = dataclasses.replace(out, note=(
            f"rows reach {sens} teachers over the run but {per_it} within an iteration: with "
            f"teachers refit each iteration eps_true = {fresh.eps:.6g}"))
    return out


class ModelEvents:
    """An observer that keeps what eps_true needs of ONE model of a batched run, so that a
    chunk can keep one shadow model's log while it trains (no retraining): that model's
    privacy events (every array cut to its row, translated as :func:`privacy_events`
    does) and, instead of every :class:`TeacherBatch`, the most teachers one of its rows
    entered, over the run and within an iteration. Memory grows with the model's votes,
    never with the chunk's size."""

    def __init__(self, model: int) -> None:
        self.model = int(model)
        self.events: list = []
        self.unsupported: set[str] = set()
        self._owners: dict[int, set[tuple[int, ...]]] = {}  # row -> reaches over the run
        self._iteration, self._now = None, {}  # the current iteration's row -> reaches
        self._per_it = 1

    def __call__(self, event) -> None:
        m, active = self.model, getattr(event, "active", None)
        if active is not None and not bool(np.asarray(active)[m]):
            return
        if isinstance(event, TeacherBatch):
            if event.teacher >= 0:
                self._rows(event)
            return
        if not isinstance(event, Releasing):
            return  # accountant states and losses say nothing about what was released
        tr = privacy_events([_one_model(event, m, len(active))])
        self.events += tr.events
        self.unsupported |= set(tr.unsupported)

    def _rows(self, e: TeacherBatch) -> None:
        if e.iteration != self._iteration:
            self._fold()
            self._iteration = e.iteration
        reached = e.reached
        for r in np.unique(np.asarray(e.rows[self.model]).ravel()):
            if r >= 0:
                self._owners.setdefault(int(r), set()).add(reached)
                self._now.setdefault(int(r), set()).add(reached)

    def _fold(self) -> None:
        self._per_it = max([self._per_it, *(_count(v) for v in self._now.values())])
        self._now = {}

    def eps_true(self, *, delta: float, neighbours: str = "add-remove") -> TrueEps:
        """eps_true of the model (as :func:`run_eps_true` of its full log would give)."""
        self._fold()
        sens = max((_count(v) for v in self._owners.values()), default=1)
        return _eps_true(self.events, tuple(sorted(self.unsupported)), (sens, self._per_it),
                         delta=delta, model=0, neighbours=neighbours)


def _one_model(event, m: int, models: int):
    """``event`` with every per-model array cut to model ``m`` (a leading axis of one)."""
    cut = {f.name: v[m:m + 1] for f in dataclasses.fields(event)
           if isinstance(v := getattr(event, f.name), np.ndarray) and v.ndim and v.shape[0] == models}
    return dataclasses.replace(event, **cut)
