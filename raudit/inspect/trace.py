"""What one instrumented training did, read off its event log (model 0 of the call).

:class:`Trace` is the only thing the event-based checks see: plain arrays built once
from :class:`raudit.events.EventLog`, so every check is a small pure
function of it. Only events of steps where the model was still active count.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from raudit.events import (
    AccountantStep,
    DpSgdStep,
    EventLog,
    GradientVotes,
    LabelNoise,
    TeacherBatch,
    TeacherContributions,
    TeacherLoss,
    Votes,
)

__all__ = ["Trace", "trace_of"]


@dataclass
class Trace:
    """One model's training as the inspector sees it.

    ``teachers_seen``: teacher id -> sorted distinct row ids it read (id -1: the rows a
    critic / student read directly, the convention of the ports that have one);
    ``first_seen``: teacher id -> iteration at which each of those rows first appeared.
    ``votes``: (iteration, n1 (B,), noise (flat), charged, aggregation, noise_kind,
    noise_scale, k) per aggregation. ``accountant``: iteration -> (eps_hat, moments (L,)).
    ``label_noise``: (iteration, sigma, draws or None). ``losses``: iteration -> (k, k).
    """

    events: int = 0
    teachers_seen: dict[int, np.ndarray] = field(default_factory=dict)
    teacher_steps: dict[int, int] = field(default_factory=dict)
    votes: list[tuple] = field(default_factory=list)
    accountant: dict[int, tuple[float, np.ndarray]] = field(default_factory=dict)
    label_noise: list[tuple] = field(default_factory=list)
    losses: dict[int, np.ndarray] = field(default_factory=dict)
    # G-PATE's aggregations of teacher gradients: (iteration, queries, answered, charged,
    # threshold-noise draws, sigma1, sigma2, k)
    gradient_votes: list[tuple] = field(default_factory=list)
    # DP-SGD on real rows: (iteration, steps, noise multiplier, clip, sampling rate)
    dp_sgd: list[tuple] = field(default_factory=list)
    # each teacher's input to the first aggregation, (k, ...) (TeacherContributions), or None
    contributions: np.ndarray | None = None
    iterations: int = 0

    @property
    def teacher_ids(self) -> list[int]:
        return sorted(t for t in self.teachers_seen if t >= 0)

    def eps_series(self) -> tuple[np.ndarray, np.ndarray]:
        """(iterations, eps_hat) of the accountant steps, in order."""
        its = np.array(sorted(self.accountant), dtype=np.int64)
        return its, np.array([self.accountant[i][0] for i in its], dtype=np.float64)

    def moments(self) -> np.ndarray:
        """(iterations, L) running moments as the generator's accountant reported them."""
        its = sorted(self.accountant)
        return np.stack([self.accountant[i][1] for i in its]) if its else np.zeros((0, 0))

    def charged_queries(self) -> list[tuple[int, np.ndarray]]:
        """(iteration, n1) of every vote the accountant was charged for."""
        return [(v[0], v[1]) for v in self.votes if v[3]]


def trace_of(log: EventLog, model: int = 0) -> Trace:
    """Summarise ``log`` for model ``model`` of the batched call."""
    tr = Trace(events=len(log.events))
    seen: dict[int, list[np.ndarray]] = {}
    last_it = -1
    for ev in log.events:
        active = np.asarray(ev.active, dtype=bool)
        if active.ndim and not active[model]:
            continue
        last_it = max(last_it, int(ev.iteration))
        if isinstance(ev, TeacherBatch):
            rows = np.asarray(ev.rows[model]).ravel()
            seen.setdefault(int(ev.teacher), []).append(rows[rows >= 0])
            tr.teacher_steps[int(ev.teacher)] = tr.teacher_steps.get(int(ev.teacher), 0) + 1
        elif isinstance(ev, Votes):
            tr.votes.append((int(ev.iteration), np.asarray(ev.n1[model]),
                             np.asarray(ev.drawn[model], dtype=np.float64).ravel(),
                             bool(np.asarray(ev.charged)[model]), ev.aggregation, ev.noise_kind,
                             float(ev.noise_scale), int(ev.k)))
        elif isinstance(ev, AccountantStep):
            tr.accountant[int(ev.iteration)] = (float(ev.eps_hat[model]),
                                                np.asarray(ev.moments[model], dtype=np.float64))
        elif isinstance(ev, LabelNoise):
            draws = None if ev.drawn is None else np.asarray(ev.drawn[model], dtype=np.float64)
            tr.label_noise.append((int(ev.iteration), float(ev.sigma), draws))
        elif isinstance(ev, TeacherLoss):
            tr.losses[int(ev.iteration)] = np.asarray(ev.losses[model], dtype=np.float64)
        elif isinstance(ev, DpSgdStep):
            tr.dp_sgd.append((int(ev.iteration), int(ev.steps), float(ev.noise_multiplier),
                              float(ev.clip), float(ev.sampling_rate)))
        elif isinstance(ev, TeacherContributions) and tr.contributions is None:
            tr.contributions = np.asarray(ev.values[model], dtype=np.float64)
        elif isinstance(ev, GradientVotes):
            answered = np.asarray(ev.answered[model], dtype=bool)
            tr.gradient_votes.append((int(ev.iteration), int(answered.size), int(answered.sum()),
                                      bool(np.asarray(ev.charged)[model]),
                                      np.asarray(ev.threshold_noise[model], dtype=np.float64).ravel(),
                                      float(ev.sigma1), float(ev.sigma2), int(ev.k)))
    tr.teachers_seen = {t: np.unique(np.concatenate(v)) if v else np.zeros(0, np.int64)
                        for t, v in sorted(seen.items())}
    tr.iterations = last_it + 1
    return tr
