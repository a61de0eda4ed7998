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

Rates are cached per set-up and machine (:mod:`.chunk_cache`). For callers that plan
work (an estimate before any work starts): :func:`cached_rate` reads a rate without
measuring, :func:`measure_rate` measures one and caches it, and :func:`observe` drops
a cached rate that a finished run contradicts (by more than ``STALE_FACTOR``), so the
next run measures again instead of being steered by it forever.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from raudit import data, generators

CAL_ITERS = 20
AUTO_ITERS = 5  # iterations per calibration fit when choosing M (rates settle fast)
AUTO_BUDGET_S = 10.0  # no larger M is tried once a set-up's calibration took this long
CPU_CANDIDATES = (1, 8, 32, 128)  # the batched engine keeps gaining up to ~128 on one core
GPU_CANDIDATES = (32, 128, 512)
# A run's observed rate this many times above or below the cached one makes the entry
# stale. Wide on purpose: a calibration of AUTO_ITERS iterations carries set-up a long
# run spreads thinner, and the observed rate includes sampling; a load-skewed entry is
# off by 2-5x (the "M=1: 4, M=8: 19 model-it/s").
STALE_FACTOR = 2.0


@dataclass(frozen=True)
class Calibration:
    m: int
    s_per_model_iter: float  # wall seconds per model-iteration
    iterations: int | None  # per model, when known
    lower_bound: bool  # iterations unknown: the estimate counts CAL_ITERS per model
    cpu_s_per_model_iter: float | None = None  # this process's CPU seconds, the same work
    load: float | None = None  # the machine's 1-minute load average when measured

    @property
    def cpu_rate(self) -> float:
        """Model-iterations per CPU-second (per wall second where CPU time was not read)."""
        return 1.0 / (self.cpu_s_per_model_iter or self.s_per_model_iter)


def fit_rate(impl: str, options: dict, dataset: str, epsilon: float, delta: float, m: int,
             label=None, bounds=None, device: str = "cpu", cap: int | None = CAL_ITERS
             ) -> Calibration:
    """Time ``m`` fits capped at ``cap`` iterations (one batched call; None: the full run)."""
    cls = generators.get(impl)
    opts = dict(options)
    capped = cap is not None and "max_iter" in cls.describe().option_names()
    wanted = opts.get("max_iter")
    if capped:
        opts["max_iter"] = min(int(wanted), cap) if wanted else cap
    if device != "cpu" and cls.describe().device:
        opts["device"] = device
    ds = data.load(dataset, label=label, bounds=bounds)
    gen = cls(**opts)
    from raudit.runs.chunk_cache import load_average

    load = load_average()
    t0, c0 = time.perf_counter(), time.process_time()
    models = gen.fit_many([ds.train] * m, epsilon=epsilon, delta=delta,
                          seeds=list(range(m)), columns=ds.columns)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    iters = [int(md.summary().get("iterations", 0) or 0) for md in models]
    done = sum(iters) or m
    per, per_cpu = wall / done, max(cpu, 1e-9) / done
    if not capped or max(iters) < opts["max_iter"]:
        # the full run, or stopped by its own (eps) rule before the cap: what models do
        its, lower = max(iters), False
    elif wanted:  # reached the cap: the job's max_iter (an upper bound if eps stops it first)
        its, lower = int(wanted), False
    else:
        its, lower = cap, True
    return Calibration(m, per, its, lower, per_cpu, load)


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


def estimate(job, cal: Calibration, workers: int) -> dict:
    """Models, model-iterations and wall time of a job on ``workers`` slots.

    The time is by CPU time (one core per worker, as the actors run): what the job
    takes on cores it has to itself, however busy the machine was when calibrated.
    """
    models = job.planned_models()
    iters = cal.iterations or CAL_ITERS
    model_iters = models * iters
    return {"models": models, "iterations_per_model": iters, "model_iterations": model_iters,
            "lower_bound": cal.lower_bound, "wall_s": model_iters / cal.cpu_rate / workers,
            "calibrated_m": cal.m}


def game_fit(g) -> tuple[str, dict, str, float, float, object, object]:
    """(impl, options, dataset, eps, delta, label, bounds) of the generator a game fits."""
    return g.impl, dict(g.options), g.dataset, g.epsilon, g.delta, g.label, g.bounds


def job_fit(job) -> tuple[str, dict, str, float, float, object, object]:
    """(impl, options, dataset, eps, delta, label, bounds) of the generator a job fits."""
    if job.kind == "audit":
        return game_fit(job.game)
    from raudit.utility import plan

    cfg, _ = next(((c, r) for c, r in plan.configs(job.req, job.ds) if r is None),
                  plan.configs(job.req, job.ds)[0])
    return (job.req.impl, dict(cfg["options"]), job.req.dataset, cfg["epsilon"], cfg["delta"],
            job.req.label, job.req.bounds)


def calibrate_chunk(spec: dict) -> dict:
    """Engine chunk: the rates of one generator set-up at the candidate M of the slot's
    device (the engine writes ``device``), so M is chosen where the chunks will run."""
    import torch

    device = spec.get("device", "cpu")
    rates, loads = {}, []
    t0 = time.perf_counter()
    impl, opts, dataset, eps, delta, label, bounds = spec["fit"]
    for m in spec.get("ms") or candidates(device):  # smallest first: a slow one stops early
        cal = fit_rate(impl, opts, dataset, eps, delta, m, label, bounds, device=device,
                       cap=AUTO_ITERS)
        rates[m] = cal.cpu_rate
        loads.append(cal.load)
        if time.perf_counter() - t0 > AUTO_BUDGET_S:
            break
    load = None if None in loads else max(loads)
    return {"device": device, "rates": rates, "load": load, "threads": torch.get_num_threads()}


def auto_chunk_sizes(jobs, engine, workers: int, notice=lambda m: None) -> dict[str, int]:
    """M for every audit job whose file says ``chunk_size: auto`` (see :func:`choose_m`):
    one calibration chunk per distinct generator set-up, run by ``engine`` on a slot of
    the pool (a GPU share when the cluster has GPUs)."""

    auto = [j for j in jobs if j.kind == "audit" and getattr(j, "auto_chunk", False)]
    fits = {}
    for job in auto:
        impl, opts, dataset, eps, delta, label, bounds = job_fit(job)
        fits[repr((impl, sorted(opts.items()), dataset, eps, delta, label, bounds))] = \
            (impl, opts, dataset, eps, delta, label, bounds)
    measured = measure_rates(fits, engine)
    out = {}
    for job in auto:
        impl, opts, dataset, eps, delta, label, bounds = job_fit(job)
        got = measured.get(repr((impl, sorted(opts.items()), dataset, eps, delta, label, bounds)))
        if not got or not got.get("rates"):
            notice(f"warning: {job.name}: the chunk-size calibration failed; keeping "
                   f"M = {job.req.chunk_size}")
            continue  # calibration failed: the job keeps the default M (its probe will say why)
        out[job.name] = choose_m(got["rates"], got["device"], 2 * job.req.shadow_models, workers)
        notice(f"{job.name}: chunk size {out[job.name]} from {_rates_line(got)}")
    return out


def _rates_line(got: dict) -> str:
    load = f", load {got['load']:.1f}" if got.get("load") is not None else ""
    return ("model-iterations per CPU-second " +
            ", ".join(f"M={m}: {r:,.0f}" for m, r in got["rates"].items())
            + (f" (cached{load})" if got.get("cached") else "") + f" on {got['device']}")


def _slot_device(engine) -> str:
    """The device the rates are measured and cached for (auto runs on CPU unless a GPU says)."""
    return "cpu" if engine.device in ("cpu", "auto") else engine.device


def measure_rates(fits: dict[str, tuple], engine) -> dict[str, dict]:
    """{key: {"device", "rates", "cached"}} for each fit set-up: from the on-disk cache
    (:mod:`.chunk_cache`), else measured by one calibration chunk on a slot of the pool."""
    from raudit.engine.driver import run_chunks
    from raudit.runs import chunk_cache

    device = _slot_device(engine)
    out, todo = {}, {}
    for k, fit in fits.items():
        entry = chunk_cache.lookup_entry(chunk_cache.key(fit, device))
        if entry:
            out[k] = {"device": device, "rates": entry.rates, "cached": True, "load": entry.load}
        else:
            todo[k] = fit

    def done(spec, result, error):
        if result and result.get("rates"):
            out[spec["key"]] = result
            chunk_cache.store(chunk_cache.key(spec["fit"], result["device"]), result["rates"],
                              load=result.get("load"), threads=result.get("threads"))

    if todo:
        run_chunks(calibrate_chunk, [{"key": k, "fit": f} for k, f in todo.items()],
                   config=engine, on_done=done)
    return out


def audit_chunk_size(req, engine, notice=lambda m: None, game=None) -> int:
    """M for ``raudit audit -M auto``: calibrated (or cached) for audits large enough
    to repay a calibration of a few seconds; DEFAULT_CHUNK for small ones. ``game``: the
    request's prepared game (its resolved dataset and delta), prepared here if not given."""
    from raudit.audit.runner import DEFAULT_CHUNK, prepare
    from raudit.runs import chunk_cache

    models = 2 * req.shadow_models
    fit = game_fit(game or prepare(req)[0])  # the resolved dataset and delta, as the chunks fit them
    if models < 400 and chunk_cache.lookup(chunk_cache.key(fit, _slot_device(engine))) is None:
        return DEFAULT_CHUNK
    got = measure_rates({"audit": fit}, engine).get("audit")
    if not got:
        notice(f"warning: the chunk-size calibration failed; using M = {DEFAULT_CHUNK}")
        return DEFAULT_CHUNK
    m = choose_m(got["rates"], got["device"], models, engine.planned_workers())
    redo = (f"; delete {chunk_cache.cache_dir() / chunk_cache.NAME} to re-measure"
            if got.get("cached") else "")
    notice(f"chunk size {m} from {_rates_line(got)}{redo}; -M N sets it")
    return m


def cached_rate(fit: tuple, device: str, m: int) -> float | None:
    """Model-iterations per CPU-second of set-up ``fit`` (:func:`game_fit`/:func:`job_fit`)
    at chunk size ``m`` on ``device`` from the cache, or None (not measured at that M, or
    dropped as stale). Reads only: nothing is measured."""
    from raudit.runs import chunk_cache

    rates = chunk_cache.lookup(chunk_cache.key(fit, device))
    return None if rates is None else rates.get(int(m))


def measure_rate(fit: tuple, device: str = "cpu", ms: Sequence[int] | None = None
                 ) -> dict[int, float]:
    """Measure (in this process) and cache {M: model-iterations per CPU-second} of ``fit``
    at the chunk sizes ``ms`` (default: the device's candidates, stopping early once the
    calibration has taken ``AUTO_BUDGET_S``)."""
    from raudit.runs import chunk_cache

    got = calibrate_chunk({"fit": fit, "device": device, "ms": list(ms) if ms else None})
    chunk_cache.store(chunk_cache.key(fit, device), got["rates"], load=got["load"],
                      threads=got["threads"])
    return got["rates"]


def observe(fit: tuple, device: str, m: int, model_iterations: float, cpu_s: float,
            notice=lambda msg: None) -> bool:
    """A finished run's training at chunk size ``m``: ``model_iterations`` in ``cpu_s`` CPU
    seconds. Drops the cached rates of ``fit`` when the run's rate is off the cached one at
    ``m`` by more than ``STALE_FACTOR`` either way (the next run measures again); True when
    it dropped them."""
    from raudit.runs import chunk_cache

    cached = cached_rate(fit, device, m)
    if cached is None or cpu_s <= 0 or model_iterations <= 0:
        return False
    seen = model_iterations / cpu_s
    if 1 / STALE_FACTOR <= seen / cached <= STALE_FACTOR:
        return False
    chunk_cache.drop(chunk_cache.key(fit, device))
    notice(f"the cached chunk-size rate at M={m} ({cached:,.0f} model-iterations per "
           f"CPU-second) disagrees with this run's ({seen:,.0f}); dropped, the next run "
           "measures again")
    return True


def observe_rows(fit: tuple, device: str, m: int, shadow, notice=lambda msg: None) -> bool:
    """:func:`observe` with a run's shadow rows (a DataFrame): its ok models trained in
    chunks of ``m`` that recorded their training CPU time (``train_cpu_s``)."""
    if shadow is None or "train_cpu_s" not in shadow or shadow.empty:
        return False
    ok = shadow[(shadow["status"] == "ok") & (shadow["chunk_models"] == m)
                & shadow["train_cpu_s"].notna()]
    return observe(fit, device, m, float(ok["iterations"].sum()), float(ok["train_cpu_s"].sum()),
                   notice)


def observe_audit(game, m: int, engine, shadow, notice=lambda msg: None) -> bool:
    """After ``raudit audit -M auto``: check the cached rate of ``game``'s set-up against
    the audit's shadow rows (trained in chunks of ``m``)."""
    return observe_rows(game_fit(game), _slot_device(engine), m, shadow, notice)


def observe_jobs(jobs, out, engine, notice=lambda msg: None) -> None:
    """After a campaign: check each ``chunk_size: auto`` audit job's cached rate against
    the job's rows (best effort: a job without rows checks nothing)."""
    from raudit.results.store import ResultStore

    for job in jobs:
        if job.kind == "audit" and getattr(job, "auto_chunk", False):
            rows = ResultStore(out, partition=job.partition).read("shadow")
            observe_rows(job_fit(job), _slot_device(engine), job.req.chunk_size, rows,
                         lambda msg, name=job.name: notice(f"{name}: {msg}"))
