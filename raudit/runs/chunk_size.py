"""The chunk size M of ``chunk_size: auto`` (campaigns) and ``raudit audit -M auto``, and
the cached rates behind it.

:func:`auto_chunk_sizes` / :func:`audit_chunk_size` pick M by
:func:`raudit.runs.calibrate.choose_m` from rates measured by one calibration chunk on a
slot of the pool (:func:`measure_rates`), or read from the cache (:mod:`.chunk_cache`);
where the set-up is not chunk-invariant (:func:`chunk_dependence`) they take the
generator's one canonical size instead, which nothing machine-dependent can move.
For callers that plan work (an estimate before any work starts): :func:`cached_rate`
reads a rate without measuring, :func:`measure_rate` measures one and caches it, and
:func:`observe` drops a cached rate that a finished run contradicts (by more than
``STALE_FACTOR``), so the next run measures again instead of being steered by it
forever. Split from :mod:`raudit.runs.calibrate`, which times the fits.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from raudit.runs.calibrate import calibrate_chunk, choose_m, game_fit, job_fit, slot_device
from raudit.runs.chunk_cache import Fit

# A run's observed rate this many times above or below the cached one makes the entry
# stale. Wide on purpose: a calibration of AUTO_ITERS iterations carries set-up a long
# run spreads thinner, and the observed rate includes sampling; a load-skewed entry is
# off by 2-5x (the "M=1: 4, M=8: 19 model-it/s").
STALE_FACTOR = 2.0


def auto_chunk_sizes(jobs: list[Any], engine: Any, workers: int,
                     notice: Callable[[str], None] = lambda m: None) -> dict[str, int]:
    """M for every audit job whose file says ``chunk_size: auto`` (see :func:`choose_m`):
    one calibration chunk per distinct generator set-up, run by ``engine`` on a slot of
    the pool (a GPU share when the cluster has GPUs)."""

    auto: list[Any] = []
    out: dict[str, int] = {}
    for job in jobs:
        if job.kind != "audit" or not getattr(job, "auto_chunk", False):
            continue
        why = chunk_dependence(job_fit(job), job.ds.train.shape)
        if why:
            out[job.name] = canonical_chunk(job.game.impl)
            notice(f"{job.name}: {canonical_line(why, out[job.name])}")
        else:
            auto.append(job)
    fits: dict[str, Fit] = {}
    for job in auto:
        impl, opts, dataset, eps, delta, label, bounds = job_fit(job)
        fits[repr((impl, sorted(opts.items()), dataset, eps, delta, label, bounds))] = \
            (impl, opts, dataset, eps, delta, label, bounds)
    measured = measure_rates(fits, engine) if fits else {}
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


def chunk_dependence(fit: Fit, shape: tuple[int, int]) -> str | None:
    """Why the generator of ``fit`` (:func:`game_fit`/:func:`job_fit`) on a table of
    ``shape`` (rows, columns) is not chunk-invariant, or None (see
    :meth:`raudit.generators.base.Generator.chunk_dependence`). A game's worlds differ by
    one row, so the sizes around ``rows`` are asked too; a size the generator refuses
    is left to the run's own checks."""
    from raudit import generators
    from raudit.errors import ConfigError

    gen = generators.get(fit[0])(**dict(fit[1]))
    rows, cols = int(shape[0]), int(shape[1])
    for n in (rows, rows - 1, rows + 1):
        try:
            why = gen.chunk_dependence(n, cols) if n > 0 else None
        except ConfigError:
            continue
        if why:
            return why
    return None


def canonical_chunk(impl: str) -> int:
    """``-M auto``'s chunk size where a set-up is not chunk-invariant: one fixed size per
    generator (its ``capabilities.canonical_chunk``), so that the calibration cache, the
    machine, the number of workers and resumes cannot change a result (a resume re-cuts
    the pending trials in runs of M from the start of each world, so the boundaries stay)."""
    from raudit import generators

    return generators.get(impl).capabilities.canonical_chunk


def canonical_line(why: str, m: int) -> str:
    return (f"chunk size {m}, not calibrated: {why}, so a model's last bits "
            "could depend on its chunk; auto keeps this size on every machine and resume "
            "(an explicit size, -M N, can change the last bits)")


def _rates_line(got: dict[str, Any]) -> str:
    load = f", load {got['load']:.1f}" if got.get("load") is not None else ""
    return ("model-iterations per CPU-second " +
            ", ".join(f"M={m}: {r:,.0f}" for m, r in got["rates"].items())
            + (f" (cached{load})" if got.get("cached") else "") + f" on {got['device']}")


def measure_rates(fits: dict[str, Fit], engine: Any) -> dict[str, dict[str, Any]]:
    """{key: {"device", "rates", "cached"}} for each fit set-up: from the on-disk cache
    (:mod:`.chunk_cache`), else measured by one calibration chunk on a slot of the pool."""
    from raudit.engine.driver import run_chunks
    from raudit.runs import chunk_cache

    device = slot_device(engine)
    out: dict[str, dict[str, Any]] = {}
    todo: dict[str, Fit] = {}
    for k, fit in fits.items():
        entry = chunk_cache.lookup_entry(chunk_cache.key(fit, device))
        if entry:
            out[k] = {"device": device, "rates": entry.rates, "cached": True, "load": entry.load}
        else:
            todo[k] = fit

    def done(spec: dict[str, Any], result: Any, error: str | None) -> None:
        if result and result.get("rates"):
            out[spec["key"]] = result
            chunk_cache.store(chunk_cache.key(spec["fit"], result["device"]), result["rates"],
                              load=result.get("load"), threads=result.get("threads"))

    if todo:
        run_chunks(calibrate_chunk, [{"key": k, "fit": f} for k, f in todo.items()],
                   config=engine, on_done=done)
    return out


def audit_chunk_size(req: Any, engine: Any, notice: Callable[[str], None] = lambda m: None,
                     prepared: Any = None) -> int:
    """M for ``raudit audit -M auto``: the generator's :func:`canonical_chunk` where the
    set-up is not chunk-invariant (:func:`chunk_dependence`); else calibrated (or cached) for audits
    large enough to repay a calibration of a few seconds, DEFAULT_CHUNK for small ones.
    ``prepared``: the request's (game, dataset) (its resolved dataset and delta),
    prepared here if not given."""
    from raudit.audit.runner import DEFAULT_CHUNK, prepare
    from raudit.runs import chunk_cache

    models = 2 * req.shadow_models
    if prepared is None:
        game, _, ds = prepare(req)
    else:
        game, ds = prepared
    fit = game_fit(game)  # the resolved dataset and delta, as the chunks fit them
    why = chunk_dependence(fit, ds.train.shape)
    if why:
        m = canonical_chunk(game.impl)
        notice(canonical_line(why, m))
        return m
    if models < 400 and chunk_cache.lookup(chunk_cache.key(fit, slot_device(engine))) is None:
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


def cached_rate(fit: Fit, device: str, m: int) -> float | None:
    """Model-iterations per CPU-second of set-up ``fit`` (:func:`game_fit`/:func:`job_fit`)
    at chunk size ``m`` on ``device`` from the cache, or None (not measured at that M, or
    dropped as stale). Reads only: nothing is measured."""
    from raudit.runs import chunk_cache

    rates = chunk_cache.lookup(chunk_cache.key(fit, device))
    return None if rates is None else rates.get(int(m))


def measure_rate(fit: Fit, device: str = "cpu", ms: Sequence[int] | None = None
                 ) -> dict[int, float]:
    """Measure (in this process) and cache {M: model-iterations per CPU-second} of ``fit``
    at the chunk sizes ``ms`` (default: the device's candidates, stopping early once the
    calibration has taken ``AUTO_BUDGET_S``)."""
    from raudit.runs import chunk_cache

    got = calibrate_chunk({"fit": fit, "device": device, "ms": list(ms) if ms else None})
    chunk_cache.store(chunk_cache.key(fit, device), got["rates"], load=got["load"],
                      threads=got["threads"])
    rates: dict[int, float] = got["rates"]
    return rates


def observe(fit: Fit, device: str, m: int, model_iterations: float, cpu_s: float,
            notice: Callable[[str], None] = lambda msg: None) -> bool:
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


def observe_rows(fit: Fit, device: str, m: int, shadow: Any,
                 notice: Callable[[str], None] = lambda msg: None) -> bool:
    """:func:`observe` with a run's shadow rows (a DataFrame): its ok models trained in
    chunks of ``m`` that recorded their training CPU time (``train_cpu_s``)."""
    from raudit.runs.costs import trained_rows

    ok = trained_rows(shadow, m)
    if ok is None:
        return False
    return observe(fit, device, m, float(ok["iterations"].sum()), float(ok["train_cpu_s"].sum()),
                   notice)


def observe_audit(game: Any, m: int, engine: Any, shadow: Any,
                  notice: Callable[[str], None] = lambda msg: None) -> bool:
    """After ``raudit audit -M auto``: check the cached rate of ``game``'s set-up against
    the audit's shadow rows (trained in chunks of ``m``)."""
    return observe_rows(game_fit(game), slot_device(engine), m, shadow, notice)


def observe_jobs(jobs: list[Any], out: Any, engine: Any,
                 notice: Callable[[str], None] = lambda msg: None) -> None:
    """After a campaign: check each ``chunk_size: auto`` audit job's cached rate against
    the job's rows (best effort: a job without rows checks nothing)."""
    from raudit.results.store import ResultStore

    for job in jobs:
        if job.kind == "audit" and getattr(job, "auto_chunk", False):
            rows = ResultStore(out, partition=job.partition).read("shadow")
            observe_rows(job_fit(job), slot_device(engine), job.req.chunk_size, rows,
                         partial(_named, notice, job.name))


def _named(notice: Callable[[str], None], name: str, msg: str) -> None:
    notice(f"{name}: {msg}")
