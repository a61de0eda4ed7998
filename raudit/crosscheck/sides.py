"""The two sides of a cross-check: raudit's port (in process, batched) and the released
code (out of process through the exec adapter, one model at a time).

Both sides fit N models on the same training table with the same settings, model i
with the fit and sample seeds of key (CROSSCHECK, i); the seeds cannot make the two
sides draw the same numbers (different generators of randomness), they only make
each side reproducible. Each fitted model becomes a :class:`Run`: its stopping
iteration, its eps_hat trajectory (index t: after t iterations, t = 0 the floor before
any query), its synthetic table, and the wall times.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from raudit.accountants.pate import eps_from_moments
from raudit.errors import DataError
from raudit.events import AccountantStep, EventLog, Votes
from raudit.seeds import CROSSCHECK, FIT, SAMPLE, derive_seed


@dataclass
class Run:
    seed: int
    iterations: int
    trajectory: list[float]
    eps_hat: float
    synthetic: pd.DataFrame
    fit_s: float  # wall per model (the port: its batched call's wall / M)
    sample_s: float
    inner_fit_s: float | None = None  # the released code's own training time (no start-up)
    votes: list[tuple[int, np.ndarray]] = field(default_factory=list)  # (iteration, n1) per query batch
    moments: list[list[float]] = field(default_factory=list)  # released: at each eps check
    patched: dict | None = None


def seeds(root: int, n: int) -> list[tuple[int, int]]:
    return [(derive_seed(root, CROSSCHECK, i, FIT), derive_seed(root, CROSSCHECK, i, SAMPLE))
            for i in range(n)]


def port_trajectories(log: EventLog, models: int, floor: float) -> list[list[float]]:
    """eps_hat after 0, 1, ..., T iterations per model, from the AccountantStep events."""
    out = [[floor] for _ in range(models)]
    for step in log.of(AccountantStep):
        for m in range(models):
            if step.active[m]:
                out[m].append(float(step.eps_hat[m]))
    return out


def port_votes(log: EventLog, m: int) -> list[tuple[int, np.ndarray]]:
    return [(v.iteration, np.asarray(v.n1[m])) for v in log.of(Votes) if v.active[m]]


def run_port(cls, options: dict, train: pd.DataFrame, *, epsilon: float, delta: float,
             seed_pairs, columns=None, progress: Callable[[int], None] = lambda n: None) -> list[Run]:
    """All N models in one batched call (the port's way), with an observer for the events."""
    gen = cls(**options)
    log = EventLog()
    t0 = time.perf_counter()
    fitted = gen.fit_many([train] * len(seed_pairs), epsilon=epsilon, delta=delta,
                          seeds=[s for s, _ in seed_pairs], columns=columns, observer=log)
    fit_each = (time.perf_counter() - t0) / len(seed_pairs)
    orders = options.get("orders", 100)
    floor = float(eps_from_moments(np.zeros(orders), delta))
    trajectories = port_trajectories(log, len(seed_pairs), floor)
    runs = []
    for m, (model, (fs, ss)) in enumerate(zip(fitted, seed_pairs)):
        t1 = time.perf_counter()
        synth = model.sample(len(train), seed=ss)
        summary = model.summary_
        runs.append(Run(fs, int(summary["iterations"]), trajectories[m], float(summary["eps_hat"]),
                        synth, fit_each, time.perf_counter() - t1, votes=port_votes(log, m)))
        progress(1)
    return runs


def port_speed(cls, options: dict, train: pd.DataFrame, *, epsilon: float, delta: float,
               seed_pairs, sizes) -> dict[int, float]:
    """Seconds of training per model when M models train in one call, for each M."""
    out = {}
    for m in sizes:
        gen = cls(**options)
        t0 = time.perf_counter()
        gen.fit_many([train] * m, epsilon=epsilon, delta=delta, seeds=[s for s, _ in seed_pairs[:m]])
        out[m] = (time.perf_counter() - t0) / m
    return out


def released_run(summary: dict, *, seed: int, synth: pd.DataFrame, fit_s: float,
                 sample_s: float) -> Run:
    """A Run from what an entry script wrote (see raudit/upstream/entries)."""
    events = summary.get("events") or []
    checks = sorted((e for e in events if e.get("kind") == "accountant"), key=lambda e: e["iteration"])
    if not checks:
        raise DataError("the released code's entry wrote no accountant events; is it raudit's "
                        "entry script (raudit upstream setup ...)?")
    votes = [(int(e["iteration"]), np.asarray(e["n1"], dtype=np.int64))
             for e in events if e.get("kind") == "votes"]
    return Run(seed, int(summary["iterations"]), [float(e["eps_hat"]) for e in checks],
               float(summary["eps_hat"]), synth, fit_s, sample_s,
               inner_fit_s=summary.get("fit_seconds"), votes=votes,
               moments=[list(map(float, e["moments"])) for e in checks],
               patched=summary.get("patched"))


def run_released(cls, options: dict, train: pd.DataFrame, *, epsilon: float, delta: float,
                 seed_pairs, columns=None, progress: Callable[[int], None] = lambda n: None) -> list[Run]:
    """One model at a time, each fit and each sample a process of the released code."""
    runs = []
    for fs, ss in seed_pairs:
        gen = cls(**options)
        t0 = time.perf_counter()
        gen.fit(train, epsilon=epsilon, delta=delta, seed=fs, columns=columns)
        t1 = time.perf_counter()
        synth = gen.sample(len(train), seed=ss)
        t2 = time.perf_counter()
        runs.append(released_run(gen.summary_, seed=fs, synth=synth, fit_s=t1 - t0, sample_s=t2 - t1))
        progress(1)
    return runs
