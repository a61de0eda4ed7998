"""Run a campaign: every job's chunks through ONE engine call over one actor pool.

::

    results = run_campaign("configs/quick-audit.yaml", "runs/quick", EngineConfig(workers=2))

The output folder holds ``raudit.json`` (spec ``{"kind": "campaign", "name"}``) and
each table hive-partitioned by job (``OUT/shadow/job=<name>/part-*.parquet``), each
job with its own manifest under ``OUT/jobs/job=<name>/``: rerunning resumes every job
(trial ids are content hashes), adding a job to the file runs only the new one, and a
job whose settings changed under the same name is refused. ``OUT/.lock`` keeps a
second campaign out while one runs.

A job that cannot start (its probe fails) or whose every model fails is reported
with its first error; the others run to the end. Chunks are queued job after job, so
the first jobs finish (and are analysed) early while the pool moves on to the next;
a job's second stage (its shadow models once its target is chosen) joins the queue
as soon as its selection's last chunk is stored.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypedDict

from raudit.campaign import config as cf
from raudit.campaign import plan as pl
from raudit.engine.driver import EngineConfig, prestart, session
from raudit.errors import ConfigError, RauditError
from raudit.results import ResultStore
from raudit.results.files import check_writable
from raudit.runs import limits
from raudit.runs.jobs import AuditJob, Job, Notice
from raudit.runs.utility_job import UtilityJob
from raudit.runs.schedule import Progress, schedule
from raudit.wording import Wording, current

#: a job's planned work (raudit.runs.job_estimate.plan_table's row)
PlanRow = dict[str, Any]


class Header(TypedDict):
    """A campaign file's header, and the jobs this machine cannot run (its data missing)."""

    name: str
    description: str
    skipped: list[pl.Skipped]


def load_jobs(path: Path | str, only: list[str] | None = None,
              chunk_sizes: dict[str, int] | None = None,
              dry_run: bool = False) -> tuple[Header, list[pl.Built]]:
    """The campaign's header and its validated jobs (all errors at once); ``dry_run``: jobs
    of plugin generators as :class:`~raudit.campaign.plan.PluginPlan` (nothing imported or run).
    Jobs whose dataset this machine lacks are left out and listed in ``header["skipped"]``
    (:class:`~raudit.campaign.plan.Skipped`)."""
    header, specs = cf.load(path)
    skipped: list[pl.Skipped] = []
    jobs = pl.build_all(cf.select(specs, only), chunk_sizes, dry_run, skipped=skipped)
    return Header(name=header["name"], description=header["description"],
                  skipped=skipped), jobs


def pool_jobs(jobs: list[pl.Built]) -> list[AuditJob | UtilityJob]:
    """The jobs the schedule's pool runs, with a store partition each (every kind but the
    inspect jobs, which run in the driver; a dry run's plugin plans run nowhere)."""
    return [j for j in jobs if isinstance(j, (AuditJob, UtilityJob))]


def run_campaign(path: Path | str, out: Path | str, engine: EngineConfig = EngineConfig(),
                 progress: Progress | None = None, notice: Callable[[str], None] | None = None,
                 only: list[str] | None = None, estimate: bool = False) -> dict[str, Any]:
    """Run (or resume) the campaign; returns {"name", "out", "jobs": {name: result}, ...}.

    Each job's result is its summary (an audit's summary row, a utility run's points)
    with ``status`` "ok", or ``status`` "failed" and ``error``. ``estimate``: say the
    total time first, before anything trains, and refresh it after the first chunk."""
    from raudit.runs.schedule import quiet

    bars, say = progress or quiet, notice or (lambda m: None)
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]+:/", str(out)):
        # The store's guarantees (atomic rename, flock, fsync) are local-filesystem ones.
        raise ConfigError(f"--out {out}: object stores are not supported; write to a local "
                          "(or network-mounted) folder and copy it, e.g. `aws s3 sync`")
    folder = Path(out)
    header, jobs = load_jobs(path, only)  # no plugin plans: not a dry run
    for line in pl.skipped_lines(header["skipped"]):
        say(line)
    pool: list[Job] = list(pool_jobs(jobs))
    limits.check_jobs(pool, engine)  # sizes this machine can hold, before --out
    for job in pool_jobs(jobs):  # a job of another campaign's settings: refuse before any work
        try:
            ResultStore(folder, partition=job.partition).check_manifest(job.manifest)
        except ConfigError as exc:
            raise ConfigError(f"job {job.name}: {exc} (or rename the job)") from None
    check_writable(folder)
    # The input is checked: Ray starts in the background while the estimate, the chunk-size
    # calibration lookups, the jobs' probes and planning run here (as `raudit audit` does);
    # not when every job already has rows (a resume may have nothing left to train).
    with prestart(engine) if _has_fresh_job(pool, folder) else contextlib.nullcontext():
        plan = _say_estimate(jobs, engine, say, folder) if estimate else None
        root = ResultStore(folder, notice=say)
        with root.lock(), session(engine):  # one Ray start-up for calibration and chunks
            root.ensure_manifest({"kind": "campaign", "name": header["name"]})
            resolve_auto_chunks(pool, engine, say)
            result = _run_locked(header, jobs, folder, engine, bars, say, plan)
            from raudit.runs.chunk_size import observe_jobs
            observe_jobs(jobs, folder, engine, say)  # drop cached rates the run contradicts
            return result


def _has_fresh_job(pool: list[Job], out: Path) -> bool:
    """Whether some pool job never started here (no manifest of it yet: its chunks will
    run). A job interrupted before its first row counts as started: Ray then starts late."""
    return any(not ResultStore(out, partition=j.partition).manifest_path.exists()
               for j in pool)


def shrink(say: Wording) -> list[str]:
    """What makes a long campaign smaller, named by the estimate past 15 minutes."""
    return [f"{say.setting('only')} to run some of its jobs",
            "fewer shadow_models / fits in the file",
            f"more workers ({say.setting('workers')}, or a cluster via RAY_ADDRESS)"]


def _say_estimate(jobs: list[pl.Built], engine: EngineConfig, notice: Notice, out: Path
                  ) -> list[PlanRow]:
    from raudit.runs.costs import startup_guess
    from raudit.runs.job_estimate import plan_table, total_line

    try:
        rows = [_resumed(row, job, out)
                for row, job in zip(plan_table(jobs, engine, notice), jobs)]
    except RauditError:
        raise  # bad input: the one-line error, before any work
    except Exception:  # noqa: BLE001 - an estimate never stops a run
        return []
    notice(total_line(rows, engine.planned_workers(), shrink(current()), startup_guess(engine)))
    return rows


def _resumed(row: PlanRow, job: pl.Built, out: Path) -> PlanRow:
    """``row`` (a job's planned work) less what ``out`` already holds of it: a resumed
    campaign's estimate is of the work left, not of the whole file. Audit jobs count their
    stored models (selection pool included), utility jobs their stored fits (a study
    utility campaign spans sessions: planned whole, its estimate said 7.6 h with a sixth
    of it stored); inspect jobs are planned whole."""
    if isinstance(job, AuditJob):
        planned = job.planned_models()
        done = ResultStore(out, partition=job.partition).done_models()
        if job.game.target == "auto":
            done += ResultStore(out / "target-selection", partition=job.partition).done_models()
    elif isinstance(job, UtilityJob):
        planned, done = _fits_stored(job, out)
    else:
        return row
    if not planned:
        return row
    left = max(0.0, 1.0 - done / planned)
    if left == 1.0:
        return row
    scaled: PlanRow = {k: row[k] * left for k in ("wall_s", "classifier_s") if k in row}
    return {**row, **scaled, "models": round(row["models"] * left),
            "model_iterations": round(row["model_iterations"] * left), "done": done}


def _fits_stored(job: UtilityJob, out: Path) -> tuple[int, int]:
    """(fits the utility job plans, fits ``out`` holds of them, ok or skipped); the
    Setting A pass is not a fit (its ~1/50 of a job's classifier time is not counted)."""
    from raudit.utility import runner as ur

    if job.req.real_only:
        return 0, 0
    planned = ur.planned_ids(job.req, job.ds) - {ur.real_trial_id(job.req, job.ds)}
    stored = ur.finished(ResultStore(out, partition=job.partition)) & planned
    return len(planned), len(stored)


def planned_pace(row: PlanRow, workers: int) -> float | None:
    """A job's planned CPU-seconds per model (per fit) from its estimate row (its wall time
    is on ``workers`` slots), or None where the row plans no time."""
    if not row.get("models") or not row.get("wall_s"):
        return None
    return float(row["wall_s"]) * workers / float(row["models"])


def unit_costs(plan: list[PlanRow], workers: int) -> dict[str, float]:
    """Each job's :func:`planned_pace`, by name: the overall progress bar moves by planned
    work (a cervical synthcity model costs ~50x a worst-case updated one, so counting
    models made its ETA wrong by as much)."""
    paces = {r["job"]: planned_pace(r, workers) for r in plan if r["kind"] != "inspect"}
    return {name: pace for name, pace in paces.items() if pace is not None}


def _refresh(plan: list[PlanRow], engine: EngineConfig, notice: Notice
             ) -> Callable[[Job, list[dict[str, Any]]], float | None]:
    """on_first for the scheduler: the campaign's total again, every job's time scaled by
    how the first chunk's work per model compared with its own job's planned pace. It also
    keeps the start-up (the time to the first chunk, less that chunk's own work) for the
    next estimate's start-up term, as a single audit does."""
    import time

    from raudit.audit.guard import duration
    from raudit.runs.costs import observe_startup

    planned = {r["job"]: r for r in plan if r["kind"] != "inspect"}
    t0 = time.perf_counter()

    def on_first(job: Job, rows: list[dict[str, Any]]) -> float | None:
        """The chunk's time per model over its job's planned pace (the scheduler rescales
        the overall bar by it), or None where either is unknown."""
        units, per_unit = job.work(rows) or (0, 0.0)
        observe_startup(engine, max(0.0, time.perf_counter() - t0 - units * per_unit))
        row = planned.get(job.name)
        pace = None if row is None else planned_pace(row, engine.planned_workers())
        if row is None or pace is None:
            return None
        if units and per_unit > 0:
            # One chunk tells this job's pace, not the others' (generators differ by 100x in
            # per-model cost): only its own time is rescaled.
            others = sum(r["wall_s"] for n, r in planned.items() if n != job.name)
            total = others + row["wall_s"] * per_unit / pace
            notice(f"refreshed estimate: the first chunk ({job.name}, {units} model(s)) ran at "
                   f"{per_unit / pace:.2f}x its planned time per model: the campaign should "
                   f"take about {duration(total)} more (that job rescaled, the others as "
                   "planned)")
            return per_unit / pace
        return None
    return on_first


def _run_locked(header: Header, jobs: list[pl.Built], out: Path, engine: EngineConfig,
                progress: Progress, notice: Notice, plan: list[PlanRow] | None = None
                ) -> dict[str, Any]:
    pool = pool_jobs(jobs)
    total = sum(j.planned_models() for j in pool)
    unit = "fits" if all(j.kind == "utility" for j in pool) else "models"
    notice(f"{len(pool)} job(s) of {total:,} {unit} (before resuming) on one pool")
    done = schedule(pool, out, engine, progress, notice,
                    overall=f"campaign {header['name']}",
                    on_first=_refresh(plan, engine, notice) if plan else None,
                    unit_cost=unit_costs(plan, engine.planned_workers()) if plan else None)
    results: dict[str, dict[str, Any]] = {}
    for job in pool:
        if job.name in done.errors:
            results[job.name] = _failed(job, done.errors[job.name], notice)
        elif done.results[job.name].get("failures"):  # a failed fit or classifier: never ok
            failed = done.results[job.name]["failures"]
            results[job.name] = {**_failed(job, RauditError(
                f"{len(failed)} part(s) failed (rerun to retry); first: {failed[0]}"), notice),
                **{k: v for k, v in done.results[job.name].items() if k != "status"}}
        else:
            results[job.name] = {"status": "ok", "kind": job.kind, **done.results[job.name]}
            verdict = results[job.name].get("verdict")
            notice(f"job {job.name} done" + (f": {verdict}" if verdict else ""))
    for inspect in (j for j in jobs if isinstance(j, pl.InspectJob)):  # the driver, after the pool
        try:
            results[inspect.name] = {"status": "ok", "kind": "inspect", **inspect.run(out)}
        except RauditError as exc:
            results[inspect.name] = _failed(inspect, exc, notice)
    stats = done.stats
    return {"name": header["name"], "out": str(out),
            "jobs": {j.name: results[j.name] for j in jobs},
            "failed_jobs": sorted(n for n, r in results.items() if r["status"] != "ok"),
            "skipped_jobs": {m.job: m.reason for m in header["skipped"]},
            "wall_s": stats.wall_s, "models_run": stats.units,
            "placement": stats.placement or "nothing to run (resumed)", "notes": stats.notes}


def resolve_auto_chunks(jobs: list[Job], engine: EngineConfig, notice: Notice) -> None:
    """Give every ``chunk_size: auto`` job its calibrated M (chunking never changes results)."""
    import dataclasses

    if not any(isinstance(j, AuditJob) and j.auto_chunk for j in jobs):
        return
    from raudit.runs.chunk_size import auto_chunk_sizes

    workers = engine.planned_workers()
    sizes = auto_chunk_sizes(jobs, engine, workers, notice)
    for job in jobs:
        if job.name in sizes and isinstance(job, AuditJob):
            job.req = dataclasses.replace(job.req, chunk_size=sizes[job.name])
        elif job.name in sizes and isinstance(job, UtilityJob):
            job.req = dataclasses.replace(job.req, chunk_size=sizes[job.name])


def _failed(job: Job | pl.InspectJob, exc: Exception, notice: Notice) -> dict[str, Any]:
    msg = " ".join(str(exc).split())
    notice(f"warning: job {job.name} failed: {msg}")
    return {"status": "failed", "kind": job.kind, "error": msg}


__all__ = ["run_campaign", "load_jobs", "pool_jobs"]
