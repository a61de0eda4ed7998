"""``run_audit``: one audit from request to summary, as a one-job schedule; and the
threat models whose trials are trained shadow models (black-box, white-box).

::

    result = run_audit(AuditRequest(impl="paper", attack="querybased", dataset="worst-case",
                                    shadow_models=200), out="runs/a", engine=EngineConfig())

The output folder is a :class:`raudit.results.ResultStore` whose manifest is the
request's spec, so rerunning the same request resumes (trials whose id the store
holds with status ok are skipped) and a different request is refused. Every
finished chunk is appended as soon as the engine reports it. The request, the plan
and the analysis live in :mod:`raudit.audit.runner`; this module only runs them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.audit import runner as ar
from raudit.audit import targets as tg
from raudit.audit.guard import probe
from raudit.engine.driver import EngineConfig, prestart
from raudit.errors import ConfigError, RauditError
from raudit.results import ResultStore, spec_hash
from raudit.results.files import as_folder, check_writable
from raudit.runs import limits
from raudit.runs.chunk_size import audit_chunk_size, observe_audit
from raudit.runs.costs import observe as observe_costs
from raudit.runs.jobs import AuditJob, Notice, Prepared
from raudit.runs.audit_settings import AuditSettings
from raudit.runs.schedule import Progress, quiet, schedule
from raudit.runs.threats import THREATS, ThreatModel

if TYPE_CHECKING:
    from raudit.audit.game import Game
    from raudit.data.dataset import Dataset
    from raudit.runs.estimate import Estimate

__all__ = ["BLACK_BOX", "WHITE_BOX", "BlackBox", "WhiteBox", "run_audit"]


def run_audit(req: ar.AuditRequest, out: Path | str, engine: EngineConfig = EngineConfig(),
              progress: Progress | None = None, notice: Notice | None = None,
              auto_chunk: bool = False, estimate: bool = False) -> dict[str, Any]:
    """Run (or resume) the audit; returns the summary row plus run details.

    Everything a user can get wrong is checked before the output folder is written or
    Ray starts; ``notice`` (default: none) receives one-line messages for the user.
    ``auto_chunk``: calibrate the chunk size (``-M auto``; chunking changes no number).
    ``estimate``: say the total time first, before anything trains (raudit.runs.estimate).
    """
    started = time.perf_counter()  # the estimate counts what the run spends before it
    how = _How(progress or quiet, notice or (lambda msg: None), auto_chunk, estimate)
    folder = as_folder(out)
    game, manifest, ds = ar.prepare(req)  # the one place the request's privacy is resolved
    # sizes this machine can hold, before a calibration runs or --out is touched
    limits.check_audit(req, engine, ds)
    ResultStore(folder).check_manifest(manifest)  # a different audit: refuse before any work
    check_writable(folder)  # leaves no trace
    # The input is checked: Ray (if it runs the chunks) starts in the background while the
    # calibration, the estimate and the probe below run here. Not for a resume, which may
    # have nothing left to train (then Ray never starts).
    fresh = not folder.exists() or not ResultStore(folder).done_ids()
    with prestart(engine) if fresh else contextlib.nullcontext():
        return _run_checked(req, (game, manifest, ds), folder, engine, how, started)


@dataclass(frozen=True)
class _How:
    """How run_audit runs, past what it runs: its bars, its messages, -M auto, --estimate."""

    progress: Progress
    notice: Notice
    auto_chunk: bool
    estimate: bool


def _run_checked(req: ar.AuditRequest, prepared: Prepared, out: Path, engine: EngineConfig,
                 how: _How, started: float) -> dict[str, Any]:
    progress, notice, auto_chunk, estimate = how.progress, how.notice, how.auto_chunk, how.estimate
    game, manifest, ds = prepared
    said: list[str] = []  # with an estimate, -M auto's line follows it
    if auto_chunk:  # first, so that the estimate counts the chunk size the run will use
        req = dataclasses.replace(req, chunk_size=audit_chunk_size(
            req, engine, said.append if estimate else notice, (game, ds)))
        limits.check_audit(req, engine, ds)  # the chosen M may hold more than the default
    est = (_say_estimate(req, game, ds, engine, notice, time.perf_counter() - started, out)
           if estimate else None)
    for message in said:
        notice(message)
    audit_id = spec_hash(manifest)[:16]
    created = not out.exists()
    store = ResultStore(out, notice=notice)
    with store.lock():
        if not store.done_ids():  # a finished model already proved the set-up
            try:
                probe(game if game.target != "auto" else
                      tg.candidate_game(game, tg.candidates_of(ds.train, 1)[0]), audit_id)
            except BaseException:
                if created:
                    _remove_empty(out)
                raise
        store.ensure_manifest(manifest)
        result = _run_locked(req, (game, manifest, ds), out, engine, progress, notice)
        if auto_chunk or est is not None:  # cached rates and costs this run contradicts
            shadow = store.read("shadow")  # are dropped, not kept forever
            if auto_chunk:
                observe_audit(game, req.chunk_size, engine, shadow, notice)
            if est is not None:
                observe_costs(est, est.costs_key, req.chunk_size, shadow, notice)
        return result


def _remove_empty(out: Path) -> None:
    """Remove a folder this run created when nothing but its lock file is in it."""
    with contextlib.suppress(OSError):
        (out / ".lock").unlink(missing_ok=True)
        out.rmdir()


def _run_locked(req: ar.AuditRequest, prepared: Prepared, out: Path, engine: EngineConfig,
                progress: Progress, notice: Notice) -> dict[str, Any]:
    # The campaign's scheduler with one job: the same chunks, seeds and store, so an
    # audit gives the same numbers alone or as a job of a campaign.
    job = AuditJob("audit", req, prepared=prepared, partition=None, verbose=True)
    done = schedule([job], out, engine, progress, notice, probe_first=False)
    if job.name in done.errors:
        raise done.errors[job.name]
    row = done.results[job.name]
    units, failed, wall = job.game_stats()
    selection = {k: job.selection[k] for k in ("target_aucs", "selection_models",
                                               "selection_failed_chunks")} if job.selection else {}
    row = {k: v for k, v in row.items() if k not in ("target_aucs", "selection_models",
                                                     "selection_failed_chunks", "target_row",
                                                     "models_run", "failed_chunks")}
    return {**row, **selection, "out": str(out), "models_run": units,
            "failed_chunks": failed, "wall_s": wall, "placement": done.stats.placement,
            "notes": done.stats.notes, "target_row": job.game.target}


def _say_estimate(req: ar.AuditRequest, game: Game, ds: Dataset, engine: EngineConfig,
                  notice: Notice, spent_s: float = 0.0, out: Path | None = None
                  ) -> Estimate | None:
    """Print the estimate line; the Estimate (None when it could not be made).
    ``spent_s``: the run's seconds so far (its chunk-size calibration), in the total;
    ``out``: the results folder, whose stored models a resume does not train again."""
    from raudit.runs.estimate import game_estimate, line

    try:
        est = game_estimate(req, game, ds, engine, spent_s, out)
    except RauditError:
        raise  # bad input: the one-line error, before any work
    except Exception:  # noqa: BLE001 - an estimate never stops a run; the probe that
        return None  # follows says in one line what is wrong with a generator that fails here
    notice(line(est))
    return est


class BlackBox(ThreatModel):
    """The attack sees the final synthetic data; a trial is a trained shadow model, drawn
    by the game's named seed streams (:func:`raudit.audit.game.trials`) and run as the
    one-job schedule above. With --one-run it is the one-run threat model, with
    --synthetic-in/--synthetic-out the external one."""

    name = "black-box"
    trains_models = True

    def chosen(self, s: AuditSettings) -> ThreatModel:
        if s.data_only:
            return THREATS.get("external")
        return THREATS.get("one-run") if s.one_run else self

    def shadow_anytime(self, s: AuditSettings) -> bool:
        return s.sequential == "anytime"

    def check(self, s: AuditSettings) -> None:
        if s.sequential == "anytime" and not isinstance(s.shadow_models, bool):
            try:
                shadow_models = int(s.shadow_models)
            except (TypeError, ValueError):
                return  # not a number: prepare says so in its own line
            from raudit.audit.sequential import check_anytime_stages
            check_anytime_stages(s.first_stage, shadow_models)

    def run(self, s: AuditSettings, req: ar.AuditRequest, out: Path, engine: EngineConfig, *,
            auto_chunk: bool, progress: Progress | None = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
        return run_audit(req, out, engine, progress, notice=notice, auto_chunk=auto_chunk,
                         estimate=True)  # the total first


class WhiteBox(BlackBox):
    """The same shadow models; the attack also reads each trained model (its features are
    computed in the chunk, :mod:`raudit.audit.whitebox`, from their own seed stream)."""

    name = "white-box"
    reads_models = True
    tag = "-white-box"

    def chosen(self, s: AuditSettings) -> ThreatModel:
        return self

    def shadow_anytime(self, s: AuditSettings) -> bool:
        return False

    def check(self, s: AuditSettings) -> None:
        from raudit.audit.whitebox import check_white_box
        check_white_box(str(s.impl))
        if s.data_only:
            raise ConfigError("--threat-model white-box reads the trained models; a data-only "
                              "audit (--synthetic-in/--synthetic-out) has none")
        if s.one_run or s.sequential is not None:
            raise ConfigError("--threat-model white-box runs the shadow-model game: --one-run and "
                              "--sequential anytime are not built for it (use black-box)")


BLACK_BOX, WHITE_BOX = BlackBox(), WhiteBox()
