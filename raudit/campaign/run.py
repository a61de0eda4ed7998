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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raudit.campaign import config as cf
from raudit.campaign import plan as pl
from raudit.campaign.dispatch import run_spec
from raudit.campaign.jobs import weight
from raudit.engine.driver import EngineConfig, run_chunks, session
from raudit.errors import ConfigError, RauditError
from raudit.results import ResultStore
from raudit.results.store import check_writable


@contextlib.contextmanager
def _quiet(description: str, total: int):
    yield lambda n: None


def load_jobs(path: Path | str, only: list[str] | None = None,
              chunk_sizes: dict[str, int] | None = None) -> tuple[dict, list]:
    """The campaign's header and its validated jobs (all errors at once)."""
    header, specs = cf.load(path)
    return header, pl.build_all(cf.select(specs, only), chunk_sizes)


def run_campaign(path: Path | str, out: Path | str, engine: EngineConfig = EngineConfig(),
                 progress=None, notice: Callable[[str], None] | None = None,
                 only: list[str] | None = None) -> dict[str, Any]:
    """Run (or resume) the campaign; returns {"name", "out", "jobs": {name: result}, ...}.

    Each job's result is its summary (an audit's summary row, a utility run's points)
    with ``status`` "ok", or ``status`` "failed" and ``error``."""
    progress, notice = progress or _quiet, notice or (lambda m: None)
    out = Path(out)
    header, jobs = load_jobs(path, only)
    resolve_auto_chunks(jobs, engine, notice)
    for job in jobs:  # a job of another campaign's settings: refuse before any work
        if job.kind != "inspect":
            ResultStore(out, partition=job.partition).check_manifest(job.manifest)
    check_writable(out)
    root = ResultStore(out, notice=notice)
    with root.lock():
        root.ensure_manifest({"kind": "campaign", "name": header["name"]})
        return _run_locked(header, jobs, out, engine, progress, notice)


def _run_locked(header, jobs, out, engine, progress, notice) -> dict[str, Any]:
    results: dict[str, dict] = {}
    pool_jobs = [j for j in jobs if j.kind != "inspect"]
    specs: list[dict] = []
    for job in pool_jobs:
        try:
            specs += job.open(out, notice)
        except RauditError as exc:  # the probe or the store refused it: the others go on
            results[job.name] = _failed(job, exc, notice)
    live = {j.name: j for j in pool_jobs if j.name not in results}
    total = sum(j.total for j in live.values())
    if specs:
        notice(f"{len(live)} job(s), {total:,} models to train in {len(specs)} chunk(s)")
    with contextlib.ExitStack() as stack:
        overall = stack.enter_context(progress(f"campaign {header['name']}", total))
        ticks = {n: stack.enter_context(progress(f"  {n}", j.total)) for n, j in live.items()
                 if j.total}

        def on_done(spec, rows, error):
            job = live[spec["job"]]
            try:
                more = job.done(spec, rows, error)
            except RauditError as exc:  # e.g. no selection model trained: the job stops here
                results.setdefault(job.name, _failed(job, exc, notice))
                return []
            ticks.get(job.name, lambda n: None)(weight(spec))
            return more

        with session(engine):
            stats = run_chunks(run_spec, specs, on_done=on_done, config=engine, weight=weight,
                               progress=overall) if specs else None
    for name, job in live.items():
        if name in results:
            continue
        try:
            results[name] = {"status": "ok", "kind": job.kind, **job.finish()}
            notice(f"job {name} done" + (f": {results[name]['verdict']}"
                                         if "verdict" in results[name] else ""))
        except RauditError as exc:
            results[name] = _failed(job, exc, notice)
    for job in (j for j in jobs if j.kind == "inspect"):
        try:
            results[job.name] = {"status": "ok", "kind": "inspect", **job.run(out)}
        except RauditError as exc:
            results[job.name] = _failed(job, exc, notice)
    return {"name": header["name"], "out": str(out),
            "jobs": {j.name: results[j.name] for j in jobs},
            "failed_jobs": sorted(n for n, r in results.items() if r["status"] != "ok"),
            "wall_s": stats.wall_s if stats else 0.0,
            "models_run": stats.units if stats else 0,
            "placement": stats.placement if stats else "nothing to run (resumed)",
            "notes": stats.notes if stats else []}


def resolve_auto_chunks(jobs, engine: EngineConfig, notice) -> None:
    """Give every ``chunk_size: auto`` job its calibrated M (chunking never changes results)."""
    import dataclasses
    import os

    if not any(getattr(j, "auto_chunk", False) for j in jobs):
        return
    from raudit.campaign.calibrate import auto_chunk_sizes

    device = "cpu"
    if engine.device != "cpu":
        import torch

        device = "cuda" if torch.cuda.is_available() else "cpu"
    workers = engine.workers or (1 if engine.backend == "local" else os.cpu_count() or 1)
    for job in jobs:
        m = auto_chunk_sizes([job], device, workers, notice).get(job.name)
        if m:
            job.req = dataclasses.replace(job.req, chunk_size=m)


def _failed(job, exc: Exception, notice) -> dict[str, Any]:
    msg = " ".join(str(exc).split())
    notice(f"warning: job {job.name} failed: {msg}")
    return {"status": "failed", "kind": job.kind, "error": msg}


def check_only(path: Path | str, only: list[str] | None) -> None:
    """Validate a campaign file without running it (ConfigError listing every error)."""
    load_jobs(path, only)


__all__ = ["run_campaign", "load_jobs", "check_only", "ConfigError"]
