"""A campaign's utility job (and the single `raudit utility`): its chunks are the
fits of :func:`raudit.utility.runner.plan_chunks`, its analysis
:func:`raudit.utility.analyse.analyse`. The protocol it follows (``open`` / ``done`` /
``finish``) and the chunk wrapping are :mod:`raudit.runs.jobs`'; split from there, which
holds the audit job.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from raudit.audit.guard import AuditFailed, Estimator
from raudit.engine.driver import Spec
from raudit.results import ResultStore, spec_hash
from raudit.runs.jobs import Job, Notice, weight, wrap
from raudit.utility import analyse as uan
from raudit.utility import runner as ur

if TYPE_CHECKING:
    from raudit.data.dataset import Dataset
    from raudit.engine.driver import EngineConfig
    from raudit.utility.plan import UtilityRequest


def utility_work(rows: list[dict[str, Any]]) -> tuple[int, float]:
    """(fits, seconds per fit) of a utility chunk's rows: a fit's training and its
    classifiers' scoring (rows: one per fit, sample, setting and classifier)."""
    fits = {r["trial_id"]: r.get("train_wall_s") or 0.0 for r in rows}
    first = rows[0].get("metric") if rows else None  # a classifier's row repeats per metric
    scoring = sum(r.get("score_wall_s") or 0.0 for r in rows if r.get("metric") == first)
    return len(fits), (sum(fits.values()) + scoring) / max(1, len(fits))


class UtilityJob(Job):
    """One utility benchmark (a sweep of configs, F fits each)."""

    kind = "utility"

    def __init__(self, name: str, req: UtilityRequest, ds: Dataset | None = None,
                 partition: str | None = "job", what: str | None = None,
                 reference: float | None = None, verbose: bool = False) -> None:
        super().__init__(name, partition)
        self.verbose = verbose  # the single `raudit utility`: refresh its estimate
        self.reference = reference
        self.analysis: dict[str, Any] = {}
        from raudit.utility import plan

        self.req = req
        self.ds = ds if ds is not None else plan.check(req)
        self.what = what  # the single run's bar label
        self.names = plan.classifier_names(req, self.ds.name)
        if not req.real_only:
            plan.check_runnable(req, self.ds)  # options the generator rejects: now, not mid-run
        self.manifest = ur.manifest_of(req, self.ds, self.names)
        self.run_id = spec_hash(self.manifest)[:16]
        self.real_ok: list[str] = []

    def describe(self) -> str:
        return self.what or self.name

    def planned_models(self) -> int:
        from raudit.utility import plan

        if self.req.real_only:
            return 1
        return self.req.fits * len(plan.configs(self.req, self.ds))

    def open(self, out: Path, notice: Notice, engine: EngineConfig | None = None,
             probe_first: bool = True) -> list[Spec]:
        self.store = ResultStore(out, partition=self.partition, notice=notice)
        self.store.ensure_manifest(self.manifest)
        specs, skipped = ur.plan_chunks(self.req, self.ds, self.run_id, ur.finished(self.store))
        if skipped:
            self.store.append(ur.TABLE, skipped)
        self.t0 = time.perf_counter()
        wrapped = [wrap(self.name, "utility", s) for s in specs]
        self.total = sum(weight(s) for s in wrapped)
        self._estimator = (Estimator(self.total, engine, notice, unit="fits",
                                     work_of=utility_work)
                           if self.verbose and engine is not None else None)
        return wrapped

    def work(self, rows: Any) -> tuple[int, float] | None:
        # Setting A's chunk (real data, no fit) says nothing of a fit's pace: taken as the
        # first chunk, its classifiers alone read as 0.08x a fit's planned time, and the
        # campaign's bar said "4% of the planned work, about 24h40m left" at a third done
        if not isinstance(rows, list) or not rows or all(r.get("setting") == "A" for r in rows):
            return None
        return utility_work(rows)

    def done(self, spec: Spec, rows: Any, error: str | None) -> list[Spec]:
        from raudit.utility.chunk import failed_rows

        self._tick(spec, error)
        self.store.append(ur.TABLE, rows if error is None else failed_rows(spec["chunk"], error))
        if error is None and self._estimator is not None and not spec["chunk"].get("real"):
            self._estimator([r for r in rows if r.get("status") == "ok"])
        if spec["chunk"].get("real") and error is None:
            self.real_ok.append(spec["chunk"]["trial_id"])
        return []

    def rows(self) -> pd.DataFrame:
        """This request's rows only: another seed scheme's rows in the folder never mix in."""
        rows = self.store.read(ur.TABLE)
        return rows[(rows["run_id"] == self.run_id)
                    & rows["trial_id"].isin(ur.planned_ids(self.req, self.ds))]

    def finish(self) -> dict[str, Any]:
        rows = self.rows()
        # a campaign reports a job whose every fit failed; `raudit utility` shows the table
        if self.partition and not rows.empty and not (rows["status"] == "ok").any():
            raise AuditFailed(f"every fit of {self.name} failed; first error: "
                                 f"{str(rows['error'].dropna().iloc[0]).strip().splitlines()[-1]}")
        result = self.analysis = uan.analyse(rows, reference=self.reference)
        points = result.get("points") or []
        return {"impl": "real" if self.req.real_only else self.req.impl,
                "dataset": self.ds.name, "run_id": self.run_id, "points": len(points),
                "auroc_B": [p.get("auroc_B") for p in points], "fits_run": self.units,
                "failed_chunks": self.failed_chunks, "real_auroc": (result.get("real") or {}).get("auroc"),
                "failures": result.get("failures") or []}
