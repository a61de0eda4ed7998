"""The estimated time of jobs (audits, utility benchmarks) before they run: the plan of
`raudit campaign --dry-run`, and the first line of `raudit utility` and `raudit campaign`.

Per distinct generator set-up (impl, options, dataset, eps, delta):

* model-iterations per second: the chunk-rate cache (:mod:`raudit.runs.chunk_cache`,
  what ``chunk_size: auto`` measured on this machine) at the job's chunk size; else the
  reference table (:mod:`raudit.runs.reference`: a reference machine's calibration scaled
  by this machine's speed, nothing trains); only a set-up missing from both is measured
  now, by ``calibrate.fit_rate`` at M = min(8, the job's chunk size), in this process, on
  at most ``calibrate.PROBE_COLS`` of the table's columns (``calibrate.probe_table``) with
  its times scaled up to all of them by a short fit of the full width on fewer rows
  (``calibrate.width_factor``), and said before it starts.
  Each row says which ("cached", "reference", "measured now");
* iterations per model: the PATE family's closed form where it applies
  (:func:`raudit.runs.estimate.closed_form_iterations`), else where the reference's
  models stopped by their own eps rule, else the job's ``max_iter`` (a cap: the row says
  ``at_most``), else a ``CAL_ITERS``-iteration calibration says it (models that stop by
  eps within it, else a lower bound). A utility sweep counts each point at its own
  iterations (eps 100 runs far longer than eps 0.5), at its first runnable point's rate.

The estimate is for this machine's cores; on a cluster, scale by the slots it has.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from raudit import data
from raudit.engine.driver import EngineConfig
from raudit.runs import calibrate as cb
from raudit.runs.estimate import (LONG_S, cached_rates, cb_duration, closed_form_iterations,
                                  rate_at, startup_words)
from raudit.runs.calibrate import explicit_iterations
from raudit.runs.chunk_cache import Fit
from raudit.runs.slow_notice import said_if_slow

CAL_M = 8


def _job_m(job: Any, rates: dict[int, float] | None, workers: int, device: str) -> int:
    """The chunk size the job's run will train at: ``chunk_size: auto`` picks it by
    :func:`cb.choose_m` from ``rates`` (the cached ones, else the reference's, which the
    run's own calibration will measure again) as the run will; else the file's."""
    if job.kind == "utility":
        return CAL_M
    if getattr(job, "auto_chunk", False) and rates:
        return cb.choose_m(rates, device, 2 * job.req.shadow_models, workers)
    return int(job.req.chunk_size)


def calibration(job: Any, engine: EngineConfig, memo: dict[Any, Any],
                notice: Callable[[str], None] = lambda m: None) -> tuple[cb.Calibration, str]:
    """The job's rate and iterations (see the module docstring) and where the rate came
    from: "cached", "reference" or "measured now". ``memo`` shares work between jobs of
    one plan; ``notice`` says a measurement before it starts (seconds). ``Calibration.iterations`` from the job's ``max_iter`` is a cap: the rows of
    :func:`plan_table` say so ("at_most")."""
    from raudit.runs import reference

    workers, device = engine.planned_workers(), cb.slot_device(engine)
    fit = cb.job_fit(job)
    impl, opts, dataset, eps, delta, label, bounds = fit
    fkey = _fkey(fit)
    if fkey not in memo:
        ds = data.load(dataset, label=label, bounds=bounds)
        ref = reference.lookup(fit)
        memo[fkey] = {"rates": cached_rates(fit, engine), "ref": ref,
                      "ref_rates": reference.scaled_rates(ref) if ref else None,
                      "stop": _stop(fit, ds.train.shape, ref)}
    got = memo[fkey]
    m = _job_m(job, got["rates"] or got["ref_rates"], workers, device)
    explicit = explicit_iterations(opts, impl)
    if got["rates"] and (got["stop"] or explicit):
        iters = got["stop"] or int(explicit)
        return cb.Calibration(m, 1.0 / rate_at(got["rates"], m), iters, False), "cached"
    if got["ref"] and (got["stop"] or explicit):  # nothing trains: the reference machine's
        iters = got["stop"] or int(explicit)  # rate at the run's M (10x from 8 to 128)
        return cb.Calibration(m, 1.0 / rate_at(got["ref_rates"], m), iters, False), \
            "reference"
    # calibrate what is missing: the rate only (a few iterations) where the closed form
    # gives the iterations, else CAL_ITERS iterations, so models that stop by their own
    # eps rule within them say how many iterations they take
    cap = cb.AUTO_ITERS if got["stop"] else cb.CAL_ITERS
    ckey = (fkey, min(CAL_M, m), cap)
    if ckey not in memo:
        ds = data.load(dataset, label=label, bounds=bounds)
        cols = ds.train.shape[1]
        cut = (f", {cb.PROBE_COLS} of its {cols} columns, all of them on "
               f"{cb.full_width_rows(ds):,} rows" if cb.is_cut(ds) else "")
        with said_if_slow(notice, f"measuring {impl} on {dataset} for the estimate "
                          f"({min(CAL_M, m)} models, {cap} iterations{cut})..."):
            memo[ckey] = cb.fit_rate(impl, opts, dataset, eps, delta, min(CAL_M, m), label,
                                     bounds, cap=cap, how=cb.ESTIMATE)
    cal = memo[ckey]
    # measured now: the iterations' rate and, apart, what a model pays besides them; a
    # cached chunk rate (short fits, set-up included) stands alone
    per, source, model_s = cal.cpu_s_per_model_iter, "measured now", cal.model_s
    if got["rates"]:
        per, source, model_s = 1.0 / rate_at(got["rates"], m), "cached", 0.0
    if got["stop"]:
        return cb.Calibration(m, per, got["stop"], False, model_s=model_s), source
    return cb.Calibration(m, per, cal.iterations, cal.lower_bound, model_s=model_s), source


def _stop(fit: Fit, shape: tuple[int, int], ref: dict[str, Any] | None) -> int | None:
    """Where the set-up's models stop by their own eps rule: the closed form, else the
    reference's count (``ref``, its entry); None when neither says."""
    impl, opts, _, eps, delta, _, _ = fit
    return closed_form_iterations(impl, opts, *shape, eps, delta) or (ref or {}).get("iterations")


def _fkey(fit: Fit) -> str:
    impl, opts, dataset, eps, delta, label, bounds = fit
    return repr((impl, sorted(opts.items()), dataset, eps, delta, label, bounds))


def _at_most(job: Any, cal: cb.Calibration, memo: dict[Any, Any]) -> bool:
    """Iterations counted as the job's max_iter: a cap its models may stop before."""
    fit = cb.job_fit(job)
    explicit = explicit_iterations(fit[1], fit[0])
    stop = memo.get(_fkey(fit), {}).get("stop")
    return (bool(explicit) and not stop and cal.iterations == int(explicit)
            and cb.is_cap(fit[1], fit[0]))


def plan_table(jobs: list[Any], engine: EngineConfig,
               notice: Callable[[str], None] = lambda m: None) -> list[dict[str, Any]]:
    """One row per job: kind, impl, dataset, models (fits), iterations, estimated time,
    and whether its rate was cached or measured now. ``notice``: a line before each
    measurement (the only part that takes more than a moment)."""
    workers = engine.planned_workers()
    memo: dict[Any, Any] = {}
    rows: list[dict[str, Any]] = []
    for job in jobs:
        if job.kind == "inspect":
            rows.append({"job": job.name, "kind": "inspect", "models": 1})
            continue
        impl, _, dataset, eps, _, _, _ = cb.job_fit(job)
        cal, source = calibration(job, engine, memo, notice)
        est, at_most = cb.estimate(job, cal, workers), _at_most(job, cal, memo)
        if job.kind == "utility" and not job.req.real_only:
            est, at_most = _sweep(job, cal, workers, memo)
        if job.kind == "utility":  # the classifiers: ~3/4 of a study utility job
            clf_s = _classifier_s(job, memo, notice)
            est = {**est, "classifier_s": clf_s, "wall_s": est["wall_s"] + clf_s / workers}
        rows.append({"job": job.name, "kind": job.kind, "impl": impl, "dataset": dataset,
                     "epsilon": eps, **est, "rate": source, "at_most": at_most})
    return rows


def _classifier_s(job: Any, memo: dict[Any, Any], notice: Callable[[str], None]) -> float:
    """CPU seconds of a utility job's classifiers (:mod:`raudit.runs.classifier_costs`):
    Setting A once, B and C on each synthetic table of its runnable points."""
    from raudit.runs import classifier_costs as cc
    from raudit.utility import plan

    req, ds = job.req, job.ds
    names = plan.classifier_names(req, str(req.dataset))
    k = ("classifiers", str(req.dataset), tuple(ds.train.shape), names)
    if k not in memo:
        memo[k] = cc.costs(str(req.dataset), ds.train, names, notice)[0]
    runnable = 0 if req.real_only else sum(
        reason is None for _, reason in plan.configs(req, ds))
    return cc.utility_seconds(memo[k], len(ds.train), req.settings,
                              runnable * req.fits * req.samples)


def _point_iterations(job: Any, cfg: dict[str, Any], first: Fit, cal: cb.Calibration,
                      memo: dict[Any, Any], first_cap: bool) -> tuple[int, bool, bool]:
    """(iterations, at_most, lower_bound) of one sweep point: the closed form at the
    point's own eps, delta and options; else the reference's stopping iteration of that
    set-up; else the job's first runnable point's calibration where the set-up is that
    point's (``first_cap``: that count is its max_iter); else the point's max_iter (a
    cap); else the first point's count, as said."""
    from raudit.runs import reference

    req = job.req
    fit = (req.impl, dict(cfg["options"]), req.dataset, cfg["epsilon"], cfg["delta"],
           req.label, req.bounds)
    key = ("point", _fkey(fit))
    if key not in memo:
        memo[key] = _stop(fit, job.ds.train.shape, reference.lookup(fit))
    if memo[key]:
        return int(memo[key]), False, False
    explicit = explicit_iterations(fit[1], fit[0])
    if _fkey(fit) == _fkey(first) or not explicit:
        return int(cal.iterations or cb.CAL_ITERS), first_cap, cal.lower_bound
    return int(explicit), cb.is_cap(fit[1], fit[0]), False


def _sweep(job: Any, cal: cb.Calibration, workers: int, memo: dict[Any, Any]
           ) -> tuple[dict[str, Any], bool]:
    """:func:`cb.estimate` of a utility sweep with each point's own iterations (eps 100
    runs far longer than eps 0.5) at the rate of its first runnable point; points that
    cannot take a step train nothing. Returns (the estimate, whether any count is a cap)."""
    from raudit.utility import plan

    first, first_cap, configs = cb.job_fit(job), _at_most(job, cal, memo), \
        plan.configs(job.req, job.ds)
    points = [_point_iterations(job, cfg, first, cal, memo, first_cap)
              for cfg, reason in configs if reason is None]
    fits = job.req.fits
    model_iters = fits * sum(p[0] for p in points)
    iters = [p[0] for p in points] or [0]
    est = {"models": fits * len(configs), "model_iterations": model_iters,  # planned_models
           "iterations_per_model": round(model_iters / max(1, fits * len(points))),
           "iterations_range": (min(iters), max(iters)),
           "lower_bound": any(p[2] for p in points),
           "wall_s": (model_iters / cal.cpu_rate + fits * len(points) * cal.model_s) / workers,
           "calibrated_m": cal.m}
    return est, any(p[1] for p in points)


def total_line(rows: list[dict[str, Any]], workers: int, shrink: list[str],
               startup: tuple[float, str] = (0.0, "measured")) -> str:
    """The one line said before the jobs of ``rows`` (:func:`plan_table`) train: their
    total, where the rates came from, and past 15 min the flags (``shrink``) that make
    the run smaller. ``startup``: (seconds, how) of starting Ray and its actors, once for
    the command (:func:`raudit.runs.costs.startup_guess`, as ``raudit audit`` counts it),
    part of the total: a tiny campaign said "about at most 1 s" and took 43 s, most of it
    start-up. The line names what its total counts (:func:`counted`): a max_iter cap
    bounds the iterations, not the total, which leaves out the jobs' fixed costs."""
    runs = [r for r in rows if r["kind"] != "inspect"]
    startup_s, startup_how = startup
    total = sum(r["wall_s"] for r in runs) + startup_s
    lower = any(r["lower_bound"] for r in runs)
    ge = ">= " if lower else "at most " if any(r.get("at_most") for r in runs) else ""
    models = sum(r["models"] for r in runs)
    unit = "fits" if all(r["kind"] == "utility" for r in runs) else "models"
    how = (f"rate {runs[0]['rate']}" if len(runs) == 1 else "rates " + ", ".join(
        f"{sum(r['rate'] == k for r in runs)} {k}" for k in ("cached", "reference", "measured now")
        if any(r["rate"] == k for r in runs)) if runs else "nothing to train")
    iters = {r["iterations_per_model"] for r in runs}
    swept = any(len(set(r.get("iterations_range", ()))) > 1 for r in runs)
    its = (f"{ge}{next(iter(iters)):,} iterations per model" if len(iters) == 1 and not swept
           else f"{ge}{sum(r['model_iterations'] for r in runs):,} model-iterations")
    said = startup_words(startup_s, startup_how)
    start = f", {said}" if said else ""
    resumed = any(r.get("done") for r in runs)  # rows already less the stored models
    text = (f"estimate: about {'>= ' if lower else ''}{cb_duration(total)}"
            f" {'left after resuming' if resumed else 'in all'} ({len(runs)} job(s), "
            f"{models:,} {unit}{' to go' if resumed else ''}, {its}{start}) on {workers} "
            f"worker(s); {how}")
    if runs:
        text += f"; {counted({r['kind'] for r in runs}, bool(said))}"
    if total > LONG_S and shrink:
        text += "; over 15 min: to shrink it use " + ", ".join(shrink)
    return text


def counted(kinds: set[str], startup: bool = True) -> str:
    """What the total of jobs of these kinds counts and leaves out: the training (each
    model's iterations and its fixed fit cost), the start-up (``startup``: where there is
    one) and a utility job's classifiers; not loading the data, each job's probe model or
    an audit's attack and analysis, which are seconds per job (a tiny campaign's total is
    mostly those)."""
    def listed(items: list[str], last: str) -> str:
        return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" {last} {items[-1]}"

    parts = ["training"] + (["start-up"] if startup else []) + (
        ["the classifiers"] if "utility" in kinds else [])
    left = ["loading", "probes"] + (["the audits' attacks and analysis"] if "audit" in kinds
                                    else [])
    return f"counts {listed(parts, 'and')}, not {listed(left, 'or')}"
