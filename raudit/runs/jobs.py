"""The jobs of a campaign: each turns its request into chunk specs, stores what they
return in its own partition of the campaign's store, and analyses it at the end.

A job is driven by :func:`raudit.runs.schedule.schedule` through three calls::

    specs = job.open(out, notice)            # pending chunks (resuming), after the probe
    more = job.done(spec, rows, error)       # store a chunk; maybe the next stage's chunks
    summary = job.finish()                   # analyse; raises when the job failed for good

Chunk specs are wrapped as ``{"job", "kind", "chunk": <the chunk's spec>}`` (``kind``: a
name of :data:`raudit.runs.dispatch.CHUNK_KINDS`) so one pool runs the chunks of every
kind (see :func:`raudit.runs.dispatch.run_spec`).
Every chunk is the one the single command would run: same trials, same seeds, same
functions, so a job's numbers equal ``raudit audit`` / ``raudit utility`` run alone.

This module holds the protocol's base and the audit job; the utility job is
:mod:`raudit.runs.utility_job`, an inspect job :class:`raudit.campaign.plan.InspectJob`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.audit import runner as ar
from raudit.audit import summary
from raudit.audit import targets as tg
from raudit.audit.game import trials
from raudit.audit.guard import Estimator, probe, shadow_work
from raudit.audit.mechanisms import event_trial
from raudit.engine.driver import Spec
from raudit.results import ResultStore, spec_hash
from raudit.runs.early import EarlyChunks

if TYPE_CHECKING:
    from raudit.audit.game import Game
    from raudit.data.dataset import Dataset
    from raudit.engine.driver import EngineConfig

#: one-line messages for the user
Notice = Callable[[str], None]
#: what ``raudit.audit.runner.prepare`` returns: the game, the store's manifest, the data
Prepared = tuple["Game", dict[str, Any], "Dataset"]


def wrap(job: str, kind: str, chunk: Spec) -> Spec:
    """A chunk's spec as the schedule's pool runs it (raudit.runs.dispatch.run_spec)."""
    return {"job": job, "kind": kind, "chunk": chunk}


def weight(spec: Spec) -> int:
    """Models in a wrapped chunk (the unit of progress): trials, or 1 for Setting A."""
    chunk = spec["chunk"]
    return 1 if chunk.get("real") else len(chunk["trials"])


class Job:
    """The protocol the schedule drives (the module docstring): ``open``, ``done``, ``finish``."""

    kind = "?"

    def __init__(self, name: str, partition: str | None = "job") -> None:
        self.name = name
        # campaign jobs write to their hive partition; a single audit/utility run to the root
        self.partition = f"job={name}" if partition else None
        self.total = 0  # models this run still has to train (set by open)
        self.t0: float | None = None
        self.units = 0
        self.failed_chunks = 0

    def _tick(self, spec: Spec, error: str | None) -> None:
        if error is None:
            self.units += weight(spec)
        else:
            self.failed_chunks += 1

    def describe(self) -> str:
        return self.name

    def wall_s(self) -> float:
        return time.perf_counter() - self.t0 if self.t0 is not None else 0.0

    def work(self, rows: Any) -> tuple[int, float] | None:
        """(units, seconds per unit) a finished chunk's ``rows`` say it ran on its worker
        (None where they do not say): the campaign's first-chunk refresh compares it with
        the plan, and the schedule dates a job's progress from its first chunk's start."""
        return None

    def planned_models(self) -> int:
        """Models of the whole job, done or not."""
        raise NotImplementedError

    def open(self, out: Path, notice: Notice, engine: EngineConfig | None = None,
             probe_first: bool = True) -> list[Spec]:
        """The pending chunks (resuming ``out``), wrapped."""
        raise NotImplementedError

    def done(self, spec: Spec, rows: Any, error: str | None) -> list[Spec]:
        """Store one chunk's ``rows`` (what its kind's function returned) or its error;
        the chunks it makes ready (the next stage's), wrapped."""
        raise NotImplementedError

    def finish(self) -> dict[str, Any]:
        """Analyse; raises when the job failed for good."""
        raise NotImplementedError


class AuditJob(Job):
    """One distinguishing game (with its target selection when the target is auto).

    ``verbose`` (the single `raudit audit`) prints the plan of the game and the time
    estimate after its first chunk; a campaign's bars carry that instead."""

    kind = "audit"

    def __init__(self, name: str, req: ar.AuditRequest, prepared: Prepared | None = None,
                 partition: str | None = "job", verbose: bool = False) -> None:
        super().__init__(name, partition)
        self.req = req
        # validates and loads the data (the single audit passes what it already prepared)
        game, manifest, ds = prepared or ar.prepare(req)
        self.game: Game = game
        self.manifest: dict[str, Any] = manifest
        self.ds: Dataset = ds
        self.audit_id = spec_hash(self.manifest)[:16]
        self.verbose = verbose
        self.selection: dict[str, Any] = {}
        self._plan: dict[str, Any] | None = None
        self._pending_selection = 0
        self._expected = 0  # game models counted in total before the target was chosen
        self.sel_units = self.sel_failed = 0  # the selection stage's share of units/failures
        self._estimator: Estimator | None = None
        self.early = EarlyChunks()
        self.engine: EngineConfig | None = None
        # a campaign's job whose chunk size is calibrated (-M auto / chunk_size: auto)
        self.auto_chunk = False  # in-world chunks trained while the target is chosen

    def planned_models(self) -> int:
        """Models of the whole job (selection included), done or not."""
        n = 2 * self.req.shadow_models
        if self.game.target == "auto":
            n += (self.req.selection_models if self.req.target_selection == "pool" else
                  2 * self.req.target_candidates * self.req.target_pairs)
        return n

    def open(self, out: Path, notice: Notice, engine: EngineConfig | None = None,
             probe_first: bool = True) -> list[Spec]:
        self.notice, self.engine = notice, engine
        self.store = ResultStore(out, partition=self.partition, notice=notice)
        if probe_first:
            self.store.check_manifest(self.manifest)
            if not self.store.done_ids():  # a finished model already proved the set-up
                probe(self.game if self.game.target != "auto" else
                      tg.candidate_game(self.game, tg.candidates_of(self.ds.train, 1)[0]),
                      self.audit_id)
        self.store.ensure_manifest(self.manifest)
        self.t0 = time.perf_counter()
        if self.game.target != "auto":
            return self._audit_specs()
        self.sel_store = ResultStore(out / "target-selection", partition=self.partition,
                                     notice=notice)
        self._plan = ar.selection_plan(self.game, self.req, self.ds, self.sel_store)
        kind = "selection-pool" if self._plan["pooled"] else "audit"
        specs = [wrap(self.name, kind, s) for s in self._plan["specs"]]
        self._pending_selection = len(specs)
        if self._plan["pooled"] and self.verbose and engine is not None:
            self._estimator = Estimator(sum(weight(s) for s in specs), engine, notice,
                                        self._on_start(engine))
        # The game's models are known in number before its target is: counted now, so
        # the bars and the ETA cover the whole job from the start.
        self._expected = max(0, 2 * self.req.shadow_models - len(self.store.done_ids()))
        self.total = sum(weight(s) for s in specs) + self._expected
        if not specs:
            return self._chosen()
        return specs + [wrap(self.name, "audit-early", c) for c in self.early.plan(self, engine)]

    def _chosen(self) -> list[Spec]:
        assert self._plan is not None  # open planned the selection
        row, aucs = ar.choose_selected(self.sel_store, self._plan, self.game.seed)
        self.game = tg.candidate_game(self.game, row)
        self.selection = {"target_aucs": {str(r): a for r, a in aucs},
                          "selection_models": self.units, "selection_failed_chunks":
                          self.failed_chunks, "target_row": row}
        self.sel_units, self.sel_failed = self.units, self.failed_chunks
        return self._audit_specs()

    def _audit_specs(self) -> list[Spec]:
        if self.req.sequential:
            from raudit.audit.sequential import stages

            self.looks: list[dict[str, Any]] = []
            self.stages = stages(self.req.first_stage, self.game.shadow_models)
            self.t_game = time.perf_counter()
            # the bars count the most it can train; stopping early leaves them short
            self.total += max(0, 2 * self.game.shadow_models - len(self.store.done_ids())
                              - self._expected)
            self._expected = 0
            return self._next_stage()
        self.per_world = {w: trials(self.game, world=w) for w in ("out", "in")}
        events_of = event_trial(self.game, self.per_world)
        early = self.early.game_chunks(self, events_of)  # already trained or training
        skip = {t["trial_id"] for c in early for t in c["trials"]}
        chunks = ar.chunk_specs(self.game, self.audit_id, self.per_world,
                                self.store.done_ids() | skip, self.req.chunk_size, events_of)
        pending = sum(len(c["trials"]) for c in chunks + early)
        self.total += pending - self._expected
        self._expected = 0
        self.t_game = time.perf_counter()
        if self.verbose and chunks + early:
            self.notice(f"{pending:,} of {2 * self.game.shadow_models:,} shadow models to "
                        f"train, in {len(chunks) + len(early)} chunk(s) of up to "
                        f"{self.req.chunk_size}; the estimate is refreshed after the first chunk")
        if self.verbose and self.engine is not None:
            first = not self.selection  # a game after its selection started long ago
            self._estimator = Estimator(pending, self.engine, self.notice,
                                        self._on_start(self.engine) if first else None)
        self.early.store_arrived(self)
        return [wrap(self.name, "audit", c) for c in chunks]

    @staticmethod
    def _on_start(engine: EngineConfig) -> Callable[[float], None]:
        from raudit.runs.costs import observe_startup

        return lambda seconds: observe_startup(engine, seconds)

    def work(self, rows: Any) -> tuple[int, float] | None:
        if isinstance(rows, dict) and rows.get("summaries"):  # an early chunk's
            models = len(rows["summaries"])  # (raudit.audit.chunk.run_early_chunk)
            return models, float(rows.get("seconds") or 0.0) / models
        return shadow_work(rows) if isinstance(rows, list) and rows else None

    def done(self, spec: Spec, rows: Any, error: str | None) -> list[Spec]:
        if spec["kind"] == "audit-early":  # stored (and counted) once the target is known
            self.early.arrived(self, spec["chunk"]["early_index"], rows, error)
            return []
        self._tick(spec, error)
        chunk = spec["chunk"]
        if spec["kind"] == "selection-pool":
            from raudit.audit import selection as sel

            self.sel_store.append("shadow", rows if error is None else
                                  sel.failed_pool_rows(chunk, error))
        else:
            from raudit.audit.chunk import failed_rows

            store = self.sel_store if chunk["audit_id"] == "target-selection" else self.store
            store.append("shadow", rows if error is None else failed_rows(chunk, error))
        if error is None and self._estimator is not None:
            self._estimator(rows)
        if chunk["audit_id"] == "target-selection":
            self._pending_selection -= 1
            if self._pending_selection == 0:  # the last selection chunk: the game can start
                return self._chosen()
        elif self.req.sequential:
            self._stage_pending -= 1
            if self._stage_pending == 0:  # the stage is stored: look, then stop or go on
                return [] if self._look() else self._next_stage()
        return []

    # ---------------------------------------------------------------- sequential audits

    def _next_stage(self) -> list[Spec]:
        """The next stage's pending chunks; stages with nothing to train (a resume) are
        looked at at once. [] when a look stopped the audit."""
        while len(self.looks) < len(self.stages):
            s = self.stages[len(self.looks)]
            self.per_world = {w: trials(self.game, world=w, count=s) for w in ("out", "in")}
            chunks = ar.chunk_specs(self.game, self.audit_id, self.per_world,
                                    self.store.done_ids(), self.req.chunk_size,
                                    event_trial(self.game, self.per_world))
            if chunks:
                self._stage_pending = len(chunks)
                if self.verbose:
                    self.notice(f"look {len(self.looks) + 1}: training up to {s} models per world")
                return [wrap(self.name, "audit", c) for c in chunks]
            if self._look():
                return []
        return []

    def _look(self) -> bool:
        """Bound the first s models per world at this look's level; True to stop."""
        from raudit.audit.sequential import look_alpha, prefix_bounds, should_stop

        k = len(self.looks) + 1
        s = self.stages[k - 1]
        ids = {t["trial_id"] for ts in self.per_world.values() for t in ts}
        look = prefix_bounds(self.store.read("shadow"), s, seed=self.game.seed,
                             delta=self.game.delta or 0.0, alpha=look_alpha(0.1, k),
                             trial_ids=ids)
        if self.req.anytime:  # the test martingale decides; the CP bound is reported beside it
            from raudit.audit.anytime_game import anytime_look

            look.update(anytime_look(self.store.read("shadow"), self.stages, k,
                                     seed=self.game.seed, delta=self.game.delta or 0.0,
                                     alpha=0.1, claimed=self.game.epsilon, trial_ids=ids))
        reason = should_stop(look, width=self.req.target_width,
                             until_ceiling=self.req.until_ceiling, last=k == len(self.stages),
                             previous=self.looks[-1] if self.looks else None,
                             claimed=self.game.epsilon if self.req.anytime else None)
        look.update(looks=k, stop_reason=reason)
        self.looks.append(look)
        if self.verbose and self.req.anytime:
            self.notice(f"look {k} ({s} models per world): anytime-valid eps_lo "
                        f"{look['eps_anytime']:.3f} from {look['anytime_pairs']} pairs"
                        + (f"; stop: {reason}" if reason else "; going on"))
        elif self.verbose:
            self.notice(f"look {k} ({s} models per world, level {look_alpha(0.1, k):.3g}): "
                        f"eps_cp {look['eps_cp']:.3f}, interval up to {look['eps_hi']:.3f}"
                        + (f"; stop: {reason}" if reason else "; going on"))
        return reason is not None

    def describe(self) -> str:
        if self.partition:
            return self.name
        g = self.game
        return f"{g.impl} vs {g.attack} on {g.dataset}"

    def game_stats(self) -> tuple[int, int, float]:
        """(models trained, failed chunks, wall seconds) of the game stage alone."""
        wall = time.perf_counter() - self.t_game
        return self.units - self.sel_units, self.failed_chunks - self.sel_failed, wall

    def finish(self) -> dict[str, Any]:
        ids = {t["trial_id"] for ts in self.per_world.values() for t in ts}
        units, failed, wall = self.game_stats()
        row = summary.summarise(self.req, self.game, self.ds, self.store, self.audit_id, ids,
                           units, wall, result=self.looks[-1] if self.req.sequential else None)
        sel = {**self.selection, "target_row": str(self.game.target)} if self.selection else {}
        # train_s: the wall time models_per_hour is computed from (the analysis comes after)
        return {**row, **sel, "models_run": units, "failed_chunks": failed, "train_s": wall}


