"""The one chunk function a schedule's pool runs: it calls the chunk's own function.

``run_spec({"job", "kind", "chunk": {...}, "device"})`` is a plain module-level
function of a plain dict, so the engine ships it to actors by reference; the chunk
function of ``kind`` (a name of :data:`CHUNK_KINDS`) is imported on the worker. Only
registered kinds run: a spec cannot name arbitrary code.
"""

from __future__ import annotations

import sys
from typing import Any, Callable

from raudit.registry import Registry, import_path


def late(path: str, light: str | None = None) -> Callable[[dict], Any]:
    """The chunk function at ``module:attr``, looked up at every call (imported on the
    worker, and a test's monkeypatch of the function where it lives takes effect).

    ``light``: the same function where it is defined, in a module that imports much
    less. A process that has not loaded ``path``'s module (a fresh Ray actor) imports
    only that one: the audit runner would also load the analysis, scikit-learn and
    scipy.stats, about a CPU-second per actor at start-up that no shadow model uses.
    """
    module = path.partition(":")[0]

    def run(chunk: dict) -> Any:
        if light is not None and module not in sys.modules:
            return import_path(light)(chunk)
        return import_path(path)(chunk)

    run.path = path  # type: ignore[attr-defined]
    run.light = light  # type: ignore[attr-defined]
    return run


#: chunk kind -> its chunk function
CHUNK_KINDS: Registry[Callable[[dict], Any]] = Registry("chunk kind")
# runner.run_chunk is chunk.run_chunk re-exported (tests patch the runner's name)
CHUNK_KINDS.register("audit", late("raudit.audit.runner:run_chunk", "raudit.audit.chunk:run_chunk"))
CHUNK_KINDS.register("selection-pool", late("raudit.audit.selection:run_pool_chunk"))
CHUNK_KINDS.register("utility", late("raudit.utility.chunk:run_chunk"))


def run_spec(spec: dict) -> Any:
    """Run one wrapped chunk on the slot's device."""
    return CHUNK_KINDS.get(spec["kind"])({**spec["chunk"], "device": spec.get("device", "cpu")})
