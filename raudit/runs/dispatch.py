"""The one chunk function a schedule's pool runs: it calls the chunk's own function.

``run_spec({"job", "kind", "chunk": {...}, "device"})`` is a plain module-level
function of a plain dict, so the engine ships it to actors by reference; the chunk
function of ``kind`` (a name of :data:`CHUNK_KINDS`) is imported on the worker. Only
registered kinds run: a spec cannot name arbitrary code.
"""

from __future__ import annotations

from typing import Any, Callable

from raudit.registry import Registry, import_path


def late(path: str) -> Callable[[dict], Any]:
    """The chunk function at ``module:attr``, looked up at every call (imported on the
    worker, and a test's monkeypatch of the function where it lives takes effect)."""
    def run(chunk: dict) -> Any:
        return import_path(path)(chunk)

    run.path = path  # type: ignore[attr-defined]
    return run


#: chunk kind -> its chunk function
CHUNK_KINDS: Registry[Callable[[dict], Any]] = Registry("chunk kind")
CHUNK_KINDS.register("audit", late("raudit.audit.runner:run_chunk"))
CHUNK_KINDS.register("selection-pool", late("raudit.audit.selection:run_pool_chunk"))
CHUNK_KINDS.register("utility", late("raudit.utility.chunk:run_chunk"))


def run_spec(spec: dict) -> Any:
    """Run one wrapped chunk on the slot's device."""
    return CHUNK_KINDS.get(spec["kind"])({**spec["chunk"], "device": spec.get("device", "cpu")})
