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


def death_cause(exc: BaseException) -> str:
    """What Ray says killed an actor, in words."""
    text = str(exc)
    oom = "OOM" in text or "out of memory" in text.lower()
    # Ray names the OOM killer as a likely cause of any SIGKILL: say it as Ray's guess
    return ("a worker process was killed (Ray suspects the OOM killer: memory ran short)"
            if oom else "a worker process exited unexpectedly")


def lost_line(why: str, chunks: int, models: int, limit: int) -> str:
    """One raudit line for a slot lost mid-run (``why``: an actor died, a node left):
    what was lost (its ``chunks`` in progress or queued, ``models`` models, none saved
    yet) and that they are retried (a chunk that has killed ``limit`` workers is
    recorded failed)."""
    return (f"raudit: {why}; its {chunks} unfinished chunk(s) ({models} model(s), not yet "
            "saved) are lost and retried on another worker; results already saved are kept "
            f"(a chunk that kills {limit} workers is recorded as failed)")
