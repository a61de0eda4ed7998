"""Ray's own log lines go to a file; the terminal gets raudit's words only.

Ray's Python logger writes its start-up chatter to stderr ("Started a local Ray
instance", the token-authentication warning on every command). A user reading an audit's
output cannot tell which of those matter, so once raudit starts or joins Ray, the ``ray``
logger writes to ``<cache>/logs/ray.log`` instead (``<cache>``: ``$RAUDIT_CACHE_DIR`` or
the user cache, as for datasets; ``$RAUDIT_RAY_LOG`` names another file). What matters
to the run (a worker or node lost, its chunks retried) is said by the engine in one raudit
line. Ray's own per-process logs stay where Ray keeps them (``/tmp/ray/session_latest/logs``).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

_routed: dict[str, Path] = {}


def log_path() -> Path:
    from raudit.data.cache import cache_dir

    return Path(os.environ.get("RAUDIT_RAY_LOG") or cache_dir().parent / "logs" / "ray.log")


def route_to_file() -> Path:
    """Send the ``ray`` logger's records to :func:`log_path` instead of stderr (once per
    process; the file is appended to). Returns the file."""
    if "path" in _routed:
        return _routed["path"]
    path = log_path()
    logger = logging.getLogger("ray")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(path, encoding="utf-8")
    except OSError:  # an unwritable cache: drop Ray's chatter rather than show it
        handler = logging.NullHandler()
    for h in list(logger.handlers):
        if isinstance(h, logging.StreamHandler) and not isinstance(h, logging.FileHandler):
            logger.removeHandler(h)
    logger.addHandler(handler)
    logger.propagate = False
    _routed["path"] = path
    return path


#: Ray's memory monitor's own words when it kills a worker (a node above its threshold)
_MONITOR = ("memory usage threshold", "running low on memory")


def oom_kills() -> int | None:
    """The kernel's count of processes its OOM killer has ended on this machine since boot
    (``oom_kill`` in /proc/vmstat, Linux 4.13+); None where it cannot be read."""
    try:
        with open("/proc/vmstat", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def death_cause(exc: BaseException, oom_before: int | None = None) -> str:
    """What killed an actor, in words, blaming memory only on evidence: Ray's memory monitor
    saying it killed the worker, or the kernel's OOM-kill count on this machine grown
    since ``oom_before`` (:func:`oom_kills` when the run began). Ray's message names the
    OOM killer as a possible cause of every unexpected exit, a SIGKILL by hand or a
    crash too, so its mention alone is no evidence."""
    text = str(exc)
    if type(exc).__name__ == "OutOfMemoryError" or any(m in text for m in _MONITOR):
        return "a worker process was killed by Ray's memory monitor (the node ran low on memory)"
    now = oom_kills()
    if oom_before is not None and now is not None and now > oom_before:
        return (f"a worker process was killed, and the kernel's OOM killer ended {now - oom_before} "
                "process(es) on this machine meanwhile (memory ran short)")
    return "a worker process exited unexpectedly (killed or crashed; Ray's log has its exit)"


def lost_line(why: str, chunks: int, models: int, limit: int) -> str:
    """One raudit line for a slot lost mid-run (``why``: an actor died, a node left):
    what was lost (its ``chunks`` in progress or queued, ``models`` models, none saved
    yet) and that they are retried (a chunk that has killed ``limit`` workers is
    recorded failed)."""
    return (f"raudit: {why}; its {chunks} unfinished chunk(s) ({models} model(s), not yet "
            "saved) are lost and retried on another worker; results already saved are kept "
            f"(a chunk that kills {limit} workers is recorded as failed)")
