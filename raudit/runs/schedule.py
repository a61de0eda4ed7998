"""One engine call for the chunks of many jobs: the scheduler of campaigns AND of the
single `raudit audit` / `raudit utility` (a one-job schedule), so all run the same code.

``schedule(jobs, out, engine, progress, notice)`` opens every job (its pending chunks,
resuming), queues all chunks job after job on one pool (``raudit.engine.driver``),
routes each finished chunk to its job (which stores it, and may hand back its next
stage's chunks: they join the same queue), and lets a job analyse its results as soon
as its last chunk is stored: the actors go on with the queued chunks of the next jobs
meanwhile, instead of every analysis waiting for the whole pool to drain.
A job that raises a :class:`RauditError` (its probe, every model failed) is recorded
as failed, with the exception, and the others go on.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ContextManager

from raudit.engine.driver import EngineConfig, RunStats, run_chunks, session
from raudit.errors import RauditError, RunInterrupted
from raudit.runs.dispatch import run_spec
from raudit.runs.jobs import weight


#: progress(description, total) -> a context whose value ticks n units done; the overall
#: bar of a schedule given ``unit_cost`` is opened with ``work=`` (its planned CPU-seconds)
#: and ticked ``tick(n, work)``; a job's bar opened after its first chunk ran is given
#: ``since=`` (seconds since that chunk started; see raudit.cli.progress.phase_bars)
Progress = Callable[..., ContextManager[Callable[..., None]]]


@contextlib.contextmanager
def quiet(description: str, total: int, work: float | None = None, since: float = 0.0
          ) -> Iterator[Callable[..., None]]:
    """A progress that shows nothing."""
    yield lambda n, work=None: None


@dataclass
class Outcome:
    results: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> finish()'s dict
    errors: dict[str, RauditError] = field(default_factory=dict)  # name -> why it failed
    stats: RunStats = field(default_factory=RunStats)


def schedule(jobs: list[Any], out: Any, engine: EngineConfig, progress: Progress = quiet,
             notice: Callable[[str], None] = lambda m: None, overall: str | None = None,
             probe_first: bool = True,
             on_first: Callable[[Any, list[Any]], float | None] | None = None,
             unit_cost: Mapping[str, float] | None = None) -> Outcome:
    """Run the jobs' chunks over one pool; see the module docstring. ``on_first(job, rows)``
    is called once, with the first chunk that succeeds and whose rows say their work
    (``job.work(rows)``; a campaign refreshes its estimate);
    it may return how many times its planned cost per model that job's chunk took, and the
    ``overall`` bar's planned work is then rescaled (:meth:`Work.rescaled`): it kept the
    first total, so a job 10x faster than planned left the bar's share and ETA 10x off.
    ``unit_cost``: each job's planned CPU-seconds per model (per fit), by name: the
    ``overall`` bar then moves, and its ETA runs, by planned work (:func:`overall_work`)
    while it counts models; without it, by models."""
    done = Outcome()
    first = [on_first]
    specs: list[dict[str, Any]] = []
    for job in jobs:
        try:
            specs += job.open(out, notice, engine, probe_first)
        except RunInterrupted:  # a full disk, a lost cluster: stops every job
            raise
        except RauditError as exc:  # the probe or the store refused it: the others go on
            done.errors[job.name] = exc
    live = {j.name: j for j in jobs if j.name not in done.errors}
    total = sum(j.total for j in live.values())
    pending: dict[str, int] = {}  # job -> its chunks not yet reported
    for spec in specs:
        pending[spec["job"]] = pending.get(spec["job"], 0) + 1

    def finish(job: Any) -> None:
        if job.name in done.errors or job.name in done.results:
            return
        try:
            done.results[job.name] = job.finish()
        except RunInterrupted:
            raise
        except RauditError as exc:
            done.errors[job.name] = exc

    with contextlib.ExitStack() as stack:
        bars: dict[str | None, Callable[..., None]] = {}
        # without unit costs every model weighs 1: the bar's work is its count of models
        cost = overall_work(list(live.values()), unit_cost or {})
        opened = cost.total  # the bar's total: ticks are put on its scale after a rescale
        if overall is not None:
            bars[None] = stack.enter_context(progress(overall, total) if unit_cost is None
                                             else progress(overall, total, work=cost.total))
        # A job's bar, and the clock of its ETA, start with its first chunk: the jobs whose
        # chunks lead the queue start now; the others' bars open when their first chunk is
        # back, dated from that chunk's start (a campaign's job that opened with the pool
        # and waited hours for it read "1/10, about 21h15m left" after one 17-min chunk).
        first_job = specs[0]["job"] if specs else None

        ends: dict[str, contextlib.ExitStack] = {}  # a job's bar closes with its last chunk

        def open_bar(job: Any, since: float = 0.0) -> None:
            if job.total:
                own = ends[job.name] = contextlib.ExitStack()
                stack.callback(own.close)
                bars[job.name] = own.enter_context(
                    progress(job.describe(), job.total, since=since) if since > 0 else
                    progress(job.describe(), job.total))
        if first_job in live:
            open_bar(live[first_job])

        def on_done(spec: dict[str, Any], rows: Any, error: str | None) -> list[dict[str, Any]]:
            nonlocal cost
            job = live[spec["job"]]
            more: list[dict[str, Any]] = []
            if job.name not in done.errors:
                try:
                    more = job.done(spec, rows, error)
                except RunInterrupted:
                    raise
                except RauditError as exc:  # e.g. no selection model trained: job over
                    done.errors[job.name] = exc
            ran = job.work(rows) if error is None else None  # (units, seconds per unit)
            # the first chunk whose rows say how long its work took (not a utility job's
            # Setting A pass, which trains nothing)
            if first[0] is not None and ran is not None and isinstance(rows, list):
                call, first[0] = first[0], None
                factor = call(job, rows)  # before the tick: this chunk counts at the new cost
                if isinstance(factor, (int, float)) and factor > 0 and unit_cost is not None:
                    cost = cost.rescaled(job.name, float(factor), list(live.values()))
            if job.name not in bars:
                open_bar(job, ran[0] * ran[1] if ran else 0.0)
            bars.get(job.name, lambda n: None)(weight(spec))
            if None in bars:  # the overall bar counts models and moves by their planned work
                bars[None](weight(spec), weight(spec) * cost.per_unit[job.name]
                           * opened / cost.total)
            pending[job.name] += len(more) - 1
            if not pending[job.name]:  # its last chunk: analyse while the pool goes on
                if job.name in ends:
                    ends.pop(job.name).close()  # its final line says when its chunks ended
                finish(job)
            return more

        if specs:
            with session(engine):
                done.stats = run_chunks(run_spec, specs, on_done=on_done, config=engine,
                                        weight=weight)
    for job in live.values():  # jobs with nothing left to run (resumed), in job order
        finish(job)
    return done


@dataclass(frozen=True)
class Work:
    """The planned CPU-seconds of a schedule's models: per unit of each job, and in all."""

    per_unit: dict[str, float]
    total: float

    def rescaled(self, name: str, factor: float, jobs: list[Any]) -> Work:
        """The plan with job ``name``'s cost per unit ``factor`` times the planned (what its
        first chunk measured), the total again over the units the ``jobs`` had at the start.
        A bar opened with the old total stays right when each tick's work is multiplied by
        old total / new total (the rescale comes at the first chunk, before any tick)."""
        per_unit = {**self.per_unit, name: self.per_unit[name] * factor}
        return Work(per_unit, sum(j.total * per_unit[j.name] for j in jobs))


def overall_work(jobs: list[Any], unit_cost: Mapping[str, float]) -> Work:
    """Each job's planned CPU-seconds per unit (``unit_cost``; a job it lacks, e.g. one
    whose estimate failed, at the mean of the others, or 1 when none is known) and the
    total over the units the jobs have left (``job.total``)."""
    known = [c for c in unit_cost.values() if c > 0]
    fallback = sum(known) / len(known) if known else 1.0
    per_unit = {j.name: unit_cost[j.name] if unit_cost.get(j.name, 0) > 0 else fallback
                for j in jobs}
    return Work(per_unit, sum(j.total * per_unit[j.name] for j in jobs))


__all__ = ["schedule", "Outcome", "Progress", "quiet", "Work", "overall_work"]
