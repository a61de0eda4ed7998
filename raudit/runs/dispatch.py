"""The one chunk function a schedule's pool runs: it calls the chunk's own function.

``run_spec({"job", "kind", "chunk": {...}, "device"})`` is a plain module-level
function of a plain dict, so the engine ships it to actors by reference; the chunk
function of ``kind`` (a name of :data:`CHUNK_KINDS`) is imported on the worker. Only
registered kinds run: a spec cannot name arbitrary code. Tests replace what the pool
runs through :data:`SUBSTITUTES`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from raudit.engine.driver import Spec
from raudit.registry import Registry, import_path

__all__ = ["CHUNK_KINDS", "SUBSTITUTES", "ChunkFn", "LateChunk", "run_spec"]

#: a chunk function: a chunk's plain spec in (a dict, shipped to a worker), its rows out
ChunkFn = Callable[[Spec], Any]


@dataclass(frozen=True)
class LateChunk:
    """The chunk function at ``path`` (``module:attr``), looked up at every call: imported
    on the worker (a fresh Ray actor imports only that module; the audit's chunk module
    leaves out the analysis, scikit-learn and scipy.stats, about a CPU-second per actor)."""

    path: str

    def __call__(self, chunk: Spec) -> Any:
        return import_path(self.path)(chunk)


#: chunk kind -> its chunk function
CHUNK_KINDS: Registry[ChunkFn] = Registry("chunk kind")
CHUNK_KINDS.register("audit", LateChunk("raudit.audit.chunk:run_chunk"))
CHUNK_KINDS.register("audit-early", LateChunk("raudit.audit.chunk:run_early_chunk"))
CHUNK_KINDS.register("selection-pool", LateChunk("raudit.audit.selection:run_pool_chunk"))
CHUNK_KINDS.register("utility", LateChunk("raudit.utility.chunk:run_chunk"))

#: The test seam: chunk kind -> a function :func:`run_spec` calls instead of the kind's
#: own, in this process only (the local backend; a Ray actor never sees it). It replaces
#: what the pool runs and nothing else: the audit's probe calls
#: ``raudit.audit.chunk.run_chunk`` itself, so a test that makes the pool's chunks fail
#: (``monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", broken)``) still passes the probe.
SUBSTITUTES: dict[str, ChunkFn] = {}


def run_spec(spec: Spec) -> Any:
    """Run one wrapped chunk on the slot's device."""
    fn = CHUNK_KINDS.get(spec["kind"])  # an unknown kind is refused, substitute or not
    fn = SUBSTITUTES.get(spec["kind"], fn)
    return fn({**spec["chunk"], "device": spec.get("device", "cpu")})
