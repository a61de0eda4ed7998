"""How long a campaign will take, and which chunk size M to use, from a quick calibration.

A calibration fits M models of a job's generator on its data in this process, capped
at ``CAL_ITERS`` iterations, and times it: CPU seconds per model-iteration at that M
(the process's own CPU time, so a busy machine slows the clock it is read with less
than it slows the wall clock), with the wall seconds and the machine's load beside.
Iterations per model come from the job (an explicit ``max_iter``), else from the
calibration models if they stopped on their own before the cap (the eps stopping
rule), else they are unknown and the estimate is a lower bound (printed with ">=").

The chunk size for a job with ``chunk_size: auto`` is :func:`choose_m`: the smallest
M within ``slack`` of the best measured throughput, on the device the actors use (a
GPU keeps gaining up to large M, a CPU core saturates early), and no larger than
leaves every worker two chunks of the job.

Rates are cached per set-up and machine (:mod:`.chunk_cache`); choosing M for a run,
reading and checking the cached rates: :mod:`raudit.runs.chunk_size`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import torch

from raudit import data, generators
from raudit.generators.plugin_process import cpu_seconds
from raudit.runs.chunk_cache import Fit

CAL_ITERS = 20
LOW = 2  # the lower cap of a split calibration (fit_rate's Probe.split; costs.LOW the same)
AUTO_ITERS = 5  # iterations per calibration fit when choosing M (rates settle fast)
AUTO_BUDGET_S = 10.0  # no larger M is tried once a set-up's calibration took this long
CPU_CANDIDATES = (1, 8, 32, 128)  # the batched engine keeps gaining up to ~128 on one core
GPU_CANDIDATES = (32, 128, 512)
# An estimate's calibration fits at most this many columns, the label included (probe_table):
# on epileptic's 179, synthcity's encoder alone (a Bayesian mixture per column, ~0.4 CPU-s
# each on its 9,200 rows) kept a dry run silent for over 10 minutes.
PROBE_COLS = 24
# ... and its full-width fits at most this many cells (rows x columns; at least
# PROBE_MIN_ROWS rows, as a DP-SGD batch of 64 must be a sample of them): width_factor
PROBE_CELLS = 250_000
PROBE_MIN_ROWS = 256


@dataclass(frozen=True)
class Calibration:
    m: int
    s_per_model_iter: float  # wall seconds per model-iteration
    iterations: int | None  # per model, when known
    lower_bound: bool  # iterations unknown: the estimate counts CAL_ITERS per model
    cpu_s_per_model_iter: float | None = None  # this process's CPU seconds, the same work
    load: float | None = None  # the machine's 1-minute load average when measured
    warm_s: float = 0.0  # wall seconds of RAUDIT_COMPILE=step's compile before the timed fit
    model_s: float = 0.0  # CPU seconds a model pays besides its iterations (fit_rate's Probe.split)
    scale: float = 1.0  # a probe's columns scaled up to the table's (probe_table); 1: the table

    @property
    def cpu_rate(self) -> float:
        """Model-iterations per CPU-second (per wall second where CPU time was not read)."""
        return 1.0 / (self.cpu_s_per_model_iter or self.s_per_model_iter)


def warm_compiled(make: Callable[[int], Any], ds: Any, m: int, epsilon: float,
                  delta: float) -> float:
    """Under RAUDIT_COMPILE=step, one throwaway one-iteration fit of ``m`` models
    (``make(max_iter)`` builds the generator) and its wall seconds; else nothing, 0.

    Why: the set-up's graph is compiled (or loaded) on its first fit. A timed fit that pays
    it is not a training rate, and the difference of two timed fits then says iterations
    cost nothing (the estimate printed 10^12 model-iterations/s)."""
    from raudit.generators.nn import compiled

    if compiled.mode() != "step":
        return 0.0
    t0 = time.perf_counter()
    make(1).fit_many([ds.train] * m, epsilon=epsilon, delta=delta, seeds=list(range(m)),
                     columns=ds.columns)
    return time.perf_counter() - t0


def planned_iterations(opts: Mapping[str, Any], impl: str | None = None) -> int | None:
    """A plan of T iterations fixed before training (``fixed``'s and ``dpgan``'s
    ``iterations``): the option where given, else the generator's default for it (a
    `fixed` utility run with no ``-o iterations`` runs its default 100, and was counted at
    the study's 10,000-iteration cap); None for generators without the option."""
    if opts.get("iterations"):
        return int(opts["iterations"])
    if impl is None:
        return None
    default = {o.name: o.default for o in generators.get(impl).describe().options or ()}
    return int(default["iterations"]) if default.get("iterations") else None


def explicit_iterations(opts: Mapping[str, Any], impl: str | None = None) -> int | None:
    """The set-up's explicit iteration count: ``max_iter`` (a cap) and the planned
    ``iterations`` (:func:`planned_iterations`) where given; with both, the run stops at the
    smaller (a utility run's study cap of 10,000 beside ``-o iterations=1000`` counted 10x
    too many)."""
    given = [int(opts["max_iter"])] if opts.get("max_iter") else []
    plan = planned_iterations(opts, impl)
    given += [plan] if plan else []
    return min(given) if given else None


def is_cap(opts: Mapping[str, Any], impl: str | None = None) -> bool:
    """Whether the explicit count is a cap the models may stop before (``max_iter``
    binds), not a plan they run to the end."""
    explicit = explicit_iterations(opts, impl)
    return explicit is not None and explicit != planned_iterations(opts, impl)


def probe_table(ds: Any, cols: int = PROBE_COLS) -> tuple[Any, float]:
    """``ds`` (a :class:`raudit.data.Dataset`) cut to at most ``cols`` columns, the label
    kept, and the table's feature columns over the cut's (1: nothing cut). The features
    kept are evenly spaced, so the mix of kinds (discrete, continuous) stays; every row is
    kept, as the batches and the teachers' partitions are drawn from them."""
    n = ds.train.shape[1]
    if n <= cols:
        return ds, 1.0
    feats = list(ds.train.columns[:-1])
    pick = sorted({int(round(i)) for i in np.linspace(0, len(feats) - 1, cols - 1)})
    keep = [feats[i] for i in pick] + [ds.label]
    cut = replace(ds, train=ds.train[keep], test=ds.test[keep],
                  columns=tuple(c for c in ds.columns if c.name in set(keep)))
    return cut, len(feats) / len(pick)


def probe_rows(ds: Any, rows: int) -> Any:
    """``ds`` with ``rows`` of its training rows, evenly spaced (all where it has fewer)."""
    n = len(ds.train)
    if n <= rows:
        return ds
    pick = np.unique(np.linspace(0, n - 1, rows).round().astype(int))
    return replace(ds, train=ds.train.iloc[pick])


def is_cut(ds: Any) -> bool:
    """Whether an estimate's probe (``fit_rate``'s ``Probe.cut``) fits ``ds`` cut, not whole."""
    rows, cols = ds.train.shape
    return bool(cols > PROBE_COLS and rows * cols > PROBE_CELLS)


def full_width_rows(ds: Any) -> int:
    """The rows :func:`width_factor` fits the table's full width on (see PROBE_CELLS)."""
    return min(len(ds.train), max(PROBE_MIN_ROWS, PROBE_CELLS // int(ds.train.shape[1])))


def width_factor(cls: Any, opts: dict[str, Any], ds: Any, m: int, epsilon: float,
                 delta: float, capped: bool) -> float:
    """How much dearer a model-iteration is on all of ``ds``'s columns than on the
    :data:`PROBE_COLS` of :func:`probe_table`: the ratio of two ``AUTO_ITERS``-capped fits
    on :func:`full_width_rows` of its rows, one with every column and one with the cut's.

    Why the full width and not a law fitted to two cuts: a cost that is a fixed per-step
    overhead at 12 and 24 columns grows with the square of the width at 179 (networks as
    wide as their input), and the cuts' growth read 1 where the table's is ~2 (dpgan's
    estimate 3.4x too fast on epileptic, 18.5x on isolet). Why fewer rows: what grows with
    the rows (teachers, one per 50 of them; encoders fitted on every row) is in the cut's
    all-rows fit, which the factor multiplies (a cost of rows x width: exact).

    A set-up that cannot train on so few rows (gpate at eps 0.5 needs 2,385 of epileptic's
    rows for a single step) is scaled linearly in the width instead (:func:`probe_table`'s
    ratio), as a fit of every row at the full width is what the probe must not be."""
    from raudit.errors import ConfigError

    few = probe_rows(ds, full_width_rows(ds))
    narrow, linear = probe_table(few)
    o = {**opts, "max_iter": min(int(opts["max_iter"]), AUTO_ITERS)} if capped else opts
    try:
        wide_t, narrow_t = (_timed(cls, o, d, m, epsilon, delta, capped, False)
                            for d in (few, narrow))
    except ConfigError:  # NoStep included: too few rows for this set-up's first step
        return linear
    (wide_cpu, wide_its), (narrow_cpu, narrow_its) = wide_t.runs[-1], narrow_t.runs[-1]
    return max(1.0, (wide_cpu / wide_its) / (narrow_cpu / narrow_its))


@dataclass(frozen=True)
class Probe:
    """How :func:`fit_rate` times: ``split`` and ``cut`` (its docstring)."""

    split: bool = False
    cut: bool = False


#: an estimate's calibration: the set-up apart, a wide table cut
ESTIMATE = Probe(split=True, cut=True)


def fit_rate(impl: str, options: Mapping[str, Any], dataset: str, epsilon: float,
             delta: float, m: int, label: Any = None, bounds: Any = None,
             cap: int | None = CAL_ITERS, how: Probe = Probe()) -> Calibration:
    """Time ``m`` fits capped at ``cap`` iterations (one batched call; None: the full run).
    ``how.split``: a second, ``LOW``-capped fit first, so that the set-up a model pays besides
    its iterations (encoders, DP bounds, teachers' partitions: ~2 CPU-s a model for
    `fixed` on cervical, against ~0.01 an iteration) is :attr:`Calibration.model_s`, not
    counted as the iterations' (one 20-iteration fit made a 7-minute run "2.2 h").
    ``how.cut``: a table wider than :data:`PROBE_COLS` and larger than :data:`PROBE_CELLS`
    is not fitted whole (an estimate's calibration: seconds, not minutes) but cut
    (:func:`probe_table`) to ``PROBE_COLS`` columns and all rows, and its times multiplied by
    :func:`width_factor` (held at least 1: a cut never costs more than the table)."""
    cls = generators.get(impl)
    opts = dict(options)
    capped = cap is not None and "max_iter" in cls.describe().option_names()
    wanted = opts.get("max_iter")
    if capped:
        opts["max_iter"] = min(int(wanted), cap) if wanted else cap
    ds = data.load(dataset, label=label, bounds=bounds)
    scale = 1.0
    if how.cut and is_cut(ds):
        scale = width_factor(cls, opts, ds, m, epsilon, delta, capped)
        ds, _ = probe_table(ds)
    t = _timed(cls, opts, ds, m, epsilon, delta, capped, how.split)
    per_cpu, model_s = split_cpu(t.runs, m)
    per_cpu, model_s = per_cpu * scale, model_s * scale
    per = per_cpu * t.wall / t.runs[-1][0]  # the wall clock in the same proportion
    iters = t.iters
    if not capped or max(iters) < opts["max_iter"]:
        # the full run, or stopped by its own (eps) rule before the cap: what models do
        its, lower = max(iters), False
    elif wanted or planned_iterations(options, impl):
        # reached the cap: the job's max_iter or its smaller planned ``iterations``
        its, lower = explicit_iterations(options, impl), False  # (an upper bound if eps stops it first)
    else:
        its, lower = cap, True
    return Calibration(m, per, its, lower, per_cpu, t.load, t.warm, model_s, scale)


@dataclass(frozen=True)
class _Timing:
    runs: list[tuple[float, int]]  # (CPU-s, model-iterations) per capped fit, lower cap first
    iters: list[int]  # iterations per model of the last fit
    wall: float  # wall seconds of the last fit
    warm: float
    load: float | None


def _timed(cls: Any, opts: dict[str, Any], ds: Any, m: int, epsilon: float, delta: float,
           capped: bool, split: bool) -> _Timing:
    """:func:`fit_rate`'s timed fits of ``m`` models on ``ds`` (``capped``: at
    ``opts["max_iter"]``; ``split``: a ``LOW``-capped fit first)."""
    from raudit.runs.chunk_cache import load_average

    warm = 0.0
    if capped:
        warm = warm_compiled(lambda it: cls(**{**opts, "max_iter": it}), ds, m, epsilon, delta)
    load = load_average()
    caps: list[int | None] = ([LOW, opts["max_iter"]] if split and capped
                              and opts["max_iter"] > LOW else [None])
    runs: list[tuple[float, int]] = []
    wall, iters = 0.0, [0]
    with one_thread():
        for c in caps:
            gen = cls(**(opts if c is None else {**opts, "max_iter": c}))
            t0, c0 = time.perf_counter(), cpu_seconds()  # exec:'s program included
            models = gen.fit_many([ds.train] * m, epsilon=epsilon, delta=delta,
                                  seeds=list(range(m)), columns=ds.columns)
            wall, cpu = time.perf_counter() - t0, cpu_seconds() - c0
            iters = [int(md.summary().get("iterations", 0) or 0) for md in models]
            runs.append((max(cpu, 1e-9), sum(iters) or m))
    return _Timing(runs, iters, wall, warm, load)


@contextmanager
def one_thread() -> Iterator[None]:
    """torch on one thread for the block, the process's threads restored after. Timings are
    taken so because the actors and the local backend train on one core each, and because
    with more threads OpenMP's waiting threads spin on a busy machine and the CPU clock reads
    up to ~10x the work (a 5-minute `fixed` utility run was once estimated at 2.2 h)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def split_cpu(runs: list[tuple[float, int]], m: int) -> tuple[float, float]:
    """(CPU-s per model-iteration, CPU-s per model besides its iterations) from fits of ``m``
    models at two caps, ``runs`` = [(CPU-s, iterations summed over the models), ...] the
    lower cap first. Where the difference is lost (no iteration past the lower cap, or the
    clock's noise: a tiny max_iter once read as 10^12 model-iterations/s), the higher fit's
    time is all iterations, an upper bound."""
    (cpu_lo, its_lo), (cpu_hi, its_hi) = runs[0], runs[-1]
    if len(runs) == 2 and its_hi > its_lo and cpu_hi > cpu_lo:
        iter_s = (cpu_hi - cpu_lo) / (its_hi - its_lo)
    else:
        iter_s = cpu_hi / max(its_hi, 1)
    return iter_s, max(0.0, (cpu_hi - iter_s * its_hi) / m)


def choose_m(rates: dict[int, float], device: str, models: int, workers: int,
             slack: float = 0.1) -> int:
    """The chunk size for a job: ``rates`` maps M -> model-iterations per second.

    The smallest M within ``slack`` of the best rate (bigger chunks cost latency,
    memory and lost work when a worker dies), capped so that the job's ``models``
    split into at least two chunks per worker (or one model per chunk). On a GPU
    the cap is not applied below the best measured M: a GPU slot idles on small M.
    """
    if not rates:
        raise ValueError("no calibration rates")
    best = max(rates.values())
    m = min(k for k, r in rates.items() if r >= (1 - slack) * best)
    balance = max(1, models // max(1, 2 * workers))
    if device == "cuda":
        return m
    return max(1, min(m, balance))


def candidates(device: str) -> tuple[int, ...]:
    return GPU_CANDIDATES if device == "cuda" else CPU_CANDIDATES


def estimate(job: Any, cal: Calibration, workers: int) -> dict[str, Any]:
    """Models, model-iterations and wall time of a job on ``workers`` slots.

    The time is by CPU time (one core per worker, as the actors run): what the job
    takes on cores it has to itself, however busy the machine was when calibrated.
    """
    models = job.planned_models()
    iters = cal.iterations or CAL_ITERS
    model_iters = models * iters
    return {"models": models, "iterations_per_model": iters, "model_iterations": model_iters,
            "lower_bound": cal.lower_bound,
            "wall_s": (model_iters / cal.cpu_rate + models * cal.model_s) / workers,
            "calibrated_m": cal.m}


def game_fit(g: Any) -> Fit:
    """(impl, options, dataset, eps, delta, label, bounds) of the generator a game fits."""
    return g.impl, dict(g.options), g.dataset, g.epsilon, g.delta, g.label, g.bounds


def job_fit(job: Any) -> Fit:
    """(impl, options, dataset, eps, delta, label, bounds) of the generator a job fits."""
    if job.kind == "audit":
        return game_fit(job.game)
    from raudit.utility import plan

    points = plan.configs(job.req, job.ds)
    cfg, _ = next(((c, r) for c, r in points if r is None), points[0])
    return (job.req.impl, dict(cfg["options"]), job.req.dataset, cfg["epsilon"], cfg["delta"],
            job.req.label, job.req.bounds)


def calibrate_chunk(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Engine chunk: the rates of one generator set-up at the candidate M of the slot's
    device (the engine writes ``device``), so M is chosen where the chunks will run."""

    device = spec.get("device", "cpu")
    rates: dict[int, float] = {}
    loads: list[float | None] = []
    t0, warm = time.perf_counter(), 0.0  # warm: RAUDIT_COMPILE=step's compiles, not counted
    impl, opts, dataset, eps, delta, label, bounds = spec["fit"]
    for m in spec.get("ms") or candidates(device):  # smallest first: a slow one stops early
        cal = fit_rate(impl, on_device(impl, opts, device), dataset, eps, delta, m, label,
                       bounds, cap=AUTO_ITERS)
        rates[m] = cal.cpu_rate
        loads.append(cal.load)
        warm += cal.warm_s
        if time.perf_counter() - t0 - warm > AUTO_BUDGET_S:
            break
    known = [x for x in loads if x is not None]
    load = max(known) if known and len(known) == len(loads) else None
    return {"device": device, "rates": rates, "load": load, "threads": torch.get_num_threads()}


def on_device(impl: str, options: dict[str, Any], device: str) -> dict[str, Any]:
    """``options`` with ``device`` where the generator takes one and it is not the CPU."""
    if device != "cpu" and generators.get(impl).describe().device:
        return {**options, "device": device}
    return options


def slot_device(engine: Any) -> str:
    """The device the rates are measured and cached for (auto runs on CPU unless a GPU says)."""
    return "cpu" if engine.device in ("cpu", "auto") else engine.device


