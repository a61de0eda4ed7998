"""The game's first in-world chunks, trained while the audit's target is still being chosen.

An audit with ``--target auto`` trains its selection pool, chooses the target in the
driver, and only then queues the game: the workers sat idle through the selection's last
chunks (one finishes before the other) and through the choice itself. But the in-world
table D_in is the data itself whatever the target, and a model's seeds depend on its world
and index only (:func:`raudit.audit.game.trials`), so the game's in-world models can train
before the target is known; only their attack features (the reference D_out and the
target record) and their trial ids need it. :class:`EarlyChunks` queues the first
``depth x workers`` in-world chunks right behind the selection's, exactly as
:func:`raudit.audit.runner.chunk_specs` will cut them (the same trials, the same chunk
sizes, the same kept event log), on the ``audit-early`` kind
(:func:`raudit.audit.chunk.run_early_chunk`: trained and sampled, not featurised); once the
target is chosen, each result (arrived or arriving) is featurised here by the same
function the chunk uses (:func:`raudit.audit.chunk.featurised_rows`) and stored as that
chunk's rows. Every stored number is the one the plain order gives; the rows' ``wall_s``
are timings and differ, as they do between any two runs.

Not for a resume with game rows, a sequential or white-box game, several samples per
model, or a backend that runs chunks in this process (nothing would overlap). A result
held when the run stops is lost and trained again by the resume (the same models).
"""

from __future__ import annotations

import time
import traceback
from typing import TYPE_CHECKING, Any, Protocol

from raudit.audit import runner as ar
from raudit.audit.game import trials
from raudit.audit.mechanisms import event_trial
from raudit.engine.driver import Spec

if TYPE_CHECKING:
    from raudit.audit.game import Game
    from raudit.audit.guard import Estimator
    from raudit.data.dataset import Dataset
    from raudit.engine.driver import EngineConfig
    from raudit.results import ResultStore


class AuditJob(Protocol):
    """What the early chunks read of their job (raudit.runs.jobs.AuditJob, which owns them:
    named here by what it offers, so the two modules do not import each other)."""

    game: Game
    req: ar.AuditRequest
    ds: Dataset
    store: ResultStore
    audit_id: str
    per_world: dict[str, list[dict[str, Any]]]
    _estimator: Estimator | None

    def _tick(self, spec: Spec, error: str | None) -> None: ...


# At most this many bytes of synthetic tables held per job (8 bytes a value): the chunks
# of a large table at a large M are fewer (breast-cancer at M = 32: 4.5 MB a chunk).
HELD_BYTES = 256 * 2**20


class EarlyChunks:
    """The early in-world chunks of one audit job (see the module docstring)."""

    def __init__(self) -> None:
        self.count = 0  # chunks queued early
        # index -> (the early chunk's trained result, its error)
        self.results: dict[int, tuple[dict[str, Any] | None, str | None]] = {}
        self.specs: list[Spec] | None = None  # the game's chunk specs, once the target is known

    def plan(self, job: AuditJob, engine: EngineConfig | None) -> list[Spec]:
        """The early chunk specs for ``job`` (an AuditJob whose target is being chosen)."""
        from raudit.engine.driver import BACKENDS

        game, req = job.game, job.req
        if (engine is None or BACKENDS.get(engine.backend).in_process or req.sequential
                or game.white_box is not None or game.samples_per_model != 1
                or job.store.done_ids()):
            return []
        ins = trials(game, world="in")
        m = req.chunk_size
        # the driver holds a result's synthetic tables until the target is chosen
        rows = max(game.synthetic_rows, len(job.ds.train)) * job.ds.train.shape[1]
        held = max(1, HELD_BYTES // max(1, 8 * rows * m))
        self.count = min(engine.depth * engine.planned_workers(), -(-len(ins) // m), held)
        keep = event_trial(game, {"in": ins}) is not None  # the first in-world model's
        out: list[Spec] = []
        for k in range(self.count):
            chunk = {"audit_id": "early", "early_index": k, "game": game.spec(), "world": "in",
                     "trials": [{key: t[key] for key in ("shadow_index", "seed", "sample_seed",
                                                         "split")}
                                for t in ins[k * m:(k + 1) * m]]}
            if keep and k == 0:
                chunk["events_index"] = 0
            out.append(chunk)
        return out

    def game_chunks(self, job: AuditJob, events_of: str | None) -> list[Spec]:
        """The game's chunk specs the early chunks train (its first in-world chunks), now
        that ``job.game`` has its target."""
        if not self.count:
            return []
        ins = {"in": job.per_world["in"]}
        self.specs = ar.chunk_specs(job.game, job.audit_id, ins, set(), job.req.chunk_size,
                                    events_of)[:self.count]
        return self.specs

    def arrived(self, job: AuditJob, index: int, result: dict[str, Any] | None,
                error: str | None) -> None:
        self.results[index] = (result, error)
        if self.specs is not None:
            self.store_arrived(job)

    def store_arrived(self, job: AuditJob) -> None:
        """Featurise and store every result that has arrived (the target is known)."""
        from raudit.audit.chunk import failed_rows, featurised_rows

        if self.specs is None:  # the target is not chosen yet: they wait in self.results
            return
        for index in sorted(self.results):
            result, error = self.results.pop(index)
            spec = {**self.specs[index], "device": (result or {}).get("device") or "cpu"}
            rows = None
            if error is None and result is None:  # a chunk that returned nothing is a failure
                error = "the early chunk returned no result"
            if error is None and result is not None:
                try:
                    rows = featurised_rows(spec, result, time.perf_counter() - result["seconds"])
                except Exception:  # noqa: BLE001 - as a chunk that raised: recorded, not fatal
                    error = traceback.format_exc()
            job.store.append("shadow", rows if error is None else failed_rows(spec, error))
            job._tick({"chunk": spec}, error)
            if rows is not None and job._estimator is not None:
                job._estimator(rows)
