"""Starting and stopping Ray for this process: ``ray.init`` as raudit does it (a fresh local
instance, or the cluster at ``RAY_ADDRESS``) and a ``ray.shutdown`` without its second of
waiting. Used by a session (:mod:`.actors`) and by the start begun early (:mod:`.prestart`),
neither of which the other needs for it.
"""

from __future__ import annotations

import contextlib
import os
from typing import Any

import ray

from raudit.engine import loopback, watchdog

# What every chunk actor imports before its first chunk (torch ~1 CPU-s, the shipped
# tables' pandas ~0.3): a local instance's workers import them as Ray starts them, which
# it does for this driver while ray.init is still finishing, instead of in the actor's
# __init__ after the driver's placement. A module that fails to import is only logged by
# Ray (the actor then imports it as before). Not set on a cluster (RAY_ADDRESS): its
# workers were configured by whoever started it.
PRELOAD = ("torch", "raudit.data.shipped", "raudit.runs.dispatch")

# A local start's watchdog (:mod:`.watchdog`), kept until its shutdown
_local: dict[str, Any] = {}


def init(workers: int | None) -> None:
    """``ray.init``: the cluster at ``RAY_ADDRESS``, else a local instance of ``workers`` CPUs
    that listens on loopback only and is cleaned up by a watchdog if this process dies."""
    from raudit.engine.raylog import route_to_file

    route_to_file()  # Ray's start-up lines to a file, not the user's terminal
    kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
    if os.environ.get("RAY_ADDRESS"):
        ray.init(address=os.environ["RAY_ADDRESS"], **kwargs)
    else:
        if PRELOAD:
            kwargs["_system_config"] = {"preload_python_modules": list(PRELOAD)}
        kwargs.update(loopback.loopback_start())  # nothing of a local run listens beyond it
        _local["watchdog"] = watchdog.start()  # nothing of it outlives the driver
        try:
            ray.init(address="local", num_cpus=workers or os.cpu_count() or 1, **kwargs)
        except BaseException:
            _local_ended()
            raise
        node = ray._private.worker._global_node
        if node is not None:
            with contextlib.suppress(Exception):  # the mark alone still covers most of it
                watchdog.watch(_local["watchdog"], node.get_session_dir_path())


def shutdown() -> None:
    """``ray.shutdown()`` of an instance this process started, less its one-second wait.

    Ray stops its processes one by one, each with SIGTERM and up to a second of grace:
    the autoscaler monitor (a local instance has nothing to scale) never exits on
    SIGTERM, so every command paid that whole second at its end (1.0 of 1.1-1.6 s,
    measured). It is killed first; it holds no state. Connected to a cluster, this
    process started no monitor and nothing changes.
    """
    node = getattr(ray._private.worker, "_global_node", None)
    for info in (getattr(node, "all_processes", None) or {}).get("monitor", ()):
        process = getattr(info, "process", None)
        if process is not None and process.poll() is None:
            with contextlib.suppress(Exception):
                process.kill()
                process.wait(timeout=5)
    try:
        ray.shutdown()
    finally:
        _local_ended()


def _local_ended() -> None:
    """Undo what a local start set up (:mod:`.loopback`, :mod:`.watchdog`)."""
    watchdog.stop(_local.pop("watchdog", None))
    loopback.restore()
