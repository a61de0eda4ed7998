"""``run_utility``: one utility benchmark from request to tables, as a one-job schedule.

::

    result = run_utility(UtilityRequest(impl="paper", dataset="cervical"), out="runs/u",
                         engine=EngineConfig())

The output folder is a :class:`raudit.results.ResultStore` (table ``utility``) whose
manifest is the request (without the chunking, which does not change any number),
so rerunning the same request resumes: fits whose trial id the store holds as ok
or skipped are not run again, failed ones are. The plan and the analysis live in
:mod:`raudit.utility`; this module only runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.engine.driver import EngineConfig
from raudit.results import ResultStore
from raudit.results.files import as_folder, check_writable
from raudit.runs import limits
from raudit.runs.schedule import Progress, quiet, schedule
from raudit.runs.utility_job import UtilityJob
from raudit.utility import plan
from raudit.utility.plan import UtilityRequest
from raudit.wording import Wording, current

if TYPE_CHECKING:
    from raudit.data.dataset import Dataset

__all__ = ["run_utility"]


def run_utility(req: UtilityRequest, out: Path | str, engine: EngineConfig = EngineConfig(),
                progress: Progress | None = None, reference: float | None = None,
                notice: Callable[[str], None] | None = None, estimate: bool = False
                ) -> dict[str, Any]:
    """Run (or resume) the benchmark; returns the analysis (see :mod:`raudit.utility.analyse`)
    plus run details. ``estimate``: say the total time to ``notice`` first, before anything
    trains (:mod:`raudit.runs.job_estimate`), and refresh it after the first chunk."""
    out = as_folder(out)
    ds = plan.check(req)
    limits.check_utility(req, engine, ds)  # sizes this machine can hold, before --out
    check_writable(out)
    store = ResultStore(out)
    what = "Setting A" if req.real_only else f"{req.impl} on {ds.name}"
    job = UtilityJob("utility", req, ds=ds, partition=None, what=f"{what} (fits)",
                     reference=reference, verbose=estimate)
    say = notice or (lambda msg: None)
    if estimate and not req.real_only:
        _say_estimate(job, engine, say)
    with store.lock():  # one run per folder, as for audits
        return _run_locked(job, req, ds, out, engine, progress or quiet, say)


def shrink(say: Wording) -> list[str]:
    """What makes a long utility run smaller, named by the estimate past 15 minutes."""
    s = say.setting
    return [f"fewer fits ({s('fits')})", f"fewer samples per fit ({s('samples')})",
            f"fewer sweep points ({s('sweep')}, {s('epsilon')})",
            f"fewer classifiers ({s('classifier')})", f"fewer iterations ({s('max_iter')})",
            f"more workers ({s('workers')}, or a cluster via RAY_ADDRESS)"]


def _say_estimate(job: UtilityJob, engine: EngineConfig, notice: Callable[[str], None]) -> None:
    from raudit.errors import RauditError
    from raudit.runs.costs import startup_guess
    from raudit.runs.job_estimate import plan_table, total_line

    try:
        # notice: a slow measurement says "measuring ..." before it starts, as the campaign's
        notice(total_line(plan_table([job], engine, notice), engine.planned_workers(),
                          shrink(current()), startup_guess(engine)))
    except RauditError:
        raise  # bad input: the one-line error, before any work
    except Exception:  # noqa: BLE001 - an estimate never stops a run
        pass


def _run_locked(job: UtilityJob, req: UtilityRequest, ds: Dataset, out: Path,
                engine: EngineConfig, progress: Progress, notice: Callable[[str], None]
                ) -> dict[str, Any]:
    # The campaign's scheduler with one job (see raudit.runs.schedule).
    done = schedule([job], out, engine, progress, notice)
    if job.name in done.errors:
        raise done.errors[job.name]
    stats = done.stats
    return {**job.analysis, "impl": "real" if req.real_only else req.impl, "dataset": ds.name,
            "out": str(out), "run_id": job.run_id, "fits_run": stats.units - len(job.real_ok),
            "real_run": bool(job.real_ok),
            "failed_chunks": stats.failed_chunks, "wall_s": stats.wall_s,
            "placement": stats.placement, "notes": stats.notes,
            "fits": req.fits, "samples": req.samples}
