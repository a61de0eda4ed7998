"""The one chunk function a schedule's pool runs: it calls the chunk's own function.

``run_spec({"job", "kind", "chunk": {...}, "device"})`` is a plain module-level
function of a plain dict, so the engine ships it to actors by reference; the chunk
function of ``kind`` (a name of :data:`CHUNK_KINDS`) is imported on the worker. Only
registered kinds run: a spec cannot name arbitrary code. Tests replace what the pool
runs through :data:`SUBSTITUTES`.
"""

from __future__ import annotations

from typing import Any, Callable

from raudit.registry import Registry, import_path


def late(path: str) -> Callable[[dict], Any]:
    """The chunk function at ``module:attr``, looked up at every call: imported on the
    worker (a fresh Ray actor imports only that module; the audit's chunk module leaves
    out the analysis, scikit-learn and scipy.stats, about a CPU-second per actor)."""

    def run(chunk: dict) -> Any:
        return import_path(path)(chunk)

    run.path = path  # type: ignore[attr-defined]
    return run


#: chunk kind -> its chunk function
CHUNK_KINDS: Registry[Callable[[dict], Any]] = Registry("chunk kind")
CHUNK_KINDS.register("audit", late("raudit.audit.chunk:run_chunk"))
CHUNK_KINDS.register("audit-early", late("raudit.audit.chunk:run_early_chunk"))
CHUNK_KINDS.register("selection-pool", late("raudit.audit.selection:run_pool_chunk"))
CHUNK_KINDS.register("utility", late("raudit.utility.chunk:run_chunk"))

#: The test seam: chunk kind -> a function :func:`run_spec` calls instead of the kind's
#: own, in this process only (the local backend; a Ray actor never sees it). It replaces
#: what the pool runs and nothing else: the audit's probe calls
#: ``raudit.audit.chunk.run_chunk`` itself, so a test that makes the pool's chunks fail
#: (``monkeypatch.setitem(dispatch.SUBSTITUTES, "audit", broken)``) still passes the probe.
SUBSTITUTES: dict[str, Callable[[dict], Any]] = {}


def run_spec(spec: dict) -> Any:
    """Run one wrapped chunk on the slot's device."""
    fn = CHUNK_KINDS.get(spec["kind"])  # an unknown kind is refused, substitute or not
    fn = SUBSTITUTES.get(spec["kind"], fn)
    return fn({**spec["chunk"], "device": spec.get("device", "cpu")})
