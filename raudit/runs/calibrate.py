"""How long a campaign will take, and which chunk size M to use, from a quick calibration.

A calibration fits M models of a job's generator on its data in this process, capped
at ``CAL_ITERS`` iterations, and times it: seconds per model-iteration at that M.
Iterations per model come from the job (an explicit ``max_iter``), else from the
calibration models if they stopped on their own before the cap (the eps stopping
rule), else they are unknown and the estimate is a lower bound (printed with ">=").

The chunk size for a job with ``chunk_size: auto`` is :func:`choose_m`: the smallest
M within ``slack`` of the best measured throughput, on the device the actors use (a
GPU keeps gaining up to large M, a CPU core saturates early), and no larger than
leaves every worker two chunks of the job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from raudit import data, generators

CAL_ITERS = 20
AUTO_ITERS = 5  # iterations per calibration fit when choosing M (rates settle fast)
AUTO_BUDGET_S = 10.0  # no larger M is tried once a set-up's calibration took this long
CPU_CANDIDATES = (1, 8, 32, 128)  # the batched engine keeps gaining up to ~128 on one core
GPU_CANDIDATES = (32, 128, 512)


@dataclass(frozen=True)
class Calibration:
    m: int
    s_per_model_iter: float
    iterations: int | None  # per model, when known
    lower_bound: bool  # iterations unknown: the estimate counts CAL_ITERS per model


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
    t0 = time.perf_counter()
    models = gen.fit_many([ds.train] * m, epsilon=epsilon, delta=delta,
                          seeds=list(range(m)), columns=ds.columns)
    wall = time.perf_counter() - t0
    iters = [int(md.summary().get("iterations", 0) or 0) for md in models]
    done = sum(iters) or m
    per = wall / done
    if not capped or max(iters) < opts["max_iter"]:
        # the full run, or stopped by its own (eps) rule before the cap: what models do
        return Calibration(m, per, max(iters), False)
    if wanted:  # reached the cap: the job's max_iter (an upper bound if eps stops it first)
        return Calibration(m, per, int(wanted), False)
    return Calibration(m, per, cap, True)


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
    """Models, model-iterations and wall time of a job on ``workers`` slots."""
    models = job.planned_models()
    iters = cal.iterations or CAL_ITERS
    model_iters = models * iters
    return {"models": models, "iterations_per_model": iters, "model_iterations": model_iters,
            "lower_bound": cal.lower_bound, "wall_s": model_iters * cal.s_per_model_iter / workers,
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
    device = spec.get("device", "cpu")
    rates = {}
    t0 = time.perf_counter()
    impl, opts, dataset, eps, delta, label, bounds = spec["fit"]
    for m in candidates(device):  # smallest first: a slow generator stops the search early
        cal = fit_rate(impl, opts, dataset, eps, delta, m, label, bounds, device=device,
                       cap=AUTO_ITERS)
        rates[m] = 1.0 / cal.s_per_model_iter
        if time.perf_counter() - t0 > AUTO_BUDGET_S:
            break
    return {"device": device, "rates": rates}


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
    return ("model-iterations/s " + ", ".join(f"M={m}: {r:,.0f}" for m, r in got["rates"].items())
            + f" on {got['device']}" + (" (cached)" if got.get("cached") else ""))


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
        rates = chunk_cache.lookup(chunk_cache.key(fit, device))
        if rates:
            out[k] = {"device": device, "rates": rates, "cached": True}
        else:
            todo[k] = fit

    def done(spec, result, error):
        if result and result.get("rates"):
            out[spec["key"]] = result
            chunk_cache.store(chunk_cache.key(spec["fit"], result["device"]), result["rates"])

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
