"""The driver's heartbeat: which nodes are alive and how many actors they can hold.

Ray reports an actor whose process died, but three failures it does not turn into an
error by itself, and a driver waiting on ``ray.wait`` then hangs forever:

- the only node (or every worker node) is gone: a replacement actor stays pending;
- the head is gone: every call to the GCS blocks until Ray kills the process (~60 s);
- a node is cut off before Ray marks its actors dead.

So the driver waits with a timeout, and on every quiet ``heartbeat_s`` it asks
:func:`snapshot` for the alive nodes (in a thread, so a dead head cannot block it) and
compares them with where its actors run. :class:`Watch` decides when waiting turns into
:class:`~raudit.errors.RunInterrupted`: no node can hold an actor for ``node_wait_s``.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any

import ray

from raudit.errors import RunInterrupted
from raudit.wording import current


def resume() -> str:
    """How to go on after an interruption, as the interface that runs it says it."""
    return f"finished chunks are kept; {current().rerun} to resume"


def _env_seconds(name: str, default: float) -> float:
    try:
        return float(os.environ.get(name, default))
    except ValueError:
        return default


def heartbeat_s() -> float:
    """Seconds without a finished chunk before the driver checks the nodes (RAUDIT_HEARTBEAT_S)."""
    return _env_seconds("RAUDIT_HEARTBEAT_S", 5.0)


def node_wait_s() -> float:
    """Seconds the driver waits for a node that can hold an actor (RAUDIT_NODE_WAIT_S).
    An autoscaling cluster that starts from zero workers needs this above its start-up time."""
    return _env_seconds("RAUDIT_NODE_WAIT_S", 20.0)


@dataclass(frozen=True)
class Snapshot:
    """The alive nodes and the actors (of one placement) they can hold in total."""

    alive: frozenset[str]
    slots: int


def _nodes(timeout: float) -> list[dict[str, Any]]:
    box: list[Any] = []

    def ask() -> None:
        try:
            box.append(ray.nodes())
        except Exception as exc:  # noqa: BLE001 - any failure means the same: no answer
            box.append(exc)

    thread = threading.Thread(target=ask, daemon=True, name="raudit-heartbeat")
    thread.start()
    thread.join(timeout)
    if not box or isinstance(box[0], Exception):
        err = RunInterrupted(f"lost contact with the Ray head (no answer in {timeout:.0f} s): "
                             f"the cluster is gone or unreachable; {resume()} once it is back")
        err.abandon_ray = True
        raise err
    nodes: list[dict[str, Any]] = box[0]
    return nodes


def _own_node_lost(why: str) -> RunInterrupted:
    err = RunInterrupted(f"{why}; {resume()}")
    # Ray terminates a driver whose node is gone at its next object-store access: the
    # CLI says this line and exits before that happens.
    err.abandon_ray = True
    return err


def check_local_raylet() -> None:
    """Raise at once if this process started Ray and that instance's raylet has died
    (the single-machine case: Ray itself would leave the driver waiting)."""
    node = getattr(ray._private.worker, "_global_node", None)
    for proc in (getattr(node, "all_processes", None) or {}).get("raylet", ()):
        process = getattr(proc, "process", None)
        if process is not None and process.poll() is not None:
            raise _own_node_lost("the local Ray node died (its raylet exited)")


def snapshot(num_cpus: float, num_gpus: float, timeout: float = 15.0) -> Snapshot:
    """Alive node ids and how many actors needing ``num_cpus``/``num_gpus`` fit on them.

    Raises RunInterrupted when the head does not answer, or the driver's own node died."""
    check_local_raylet()
    nodes = _nodes(timeout)
    own = ray.get_runtime_context().get_node_id()
    if not any(n.get("Alive") and n["NodeID"] == own for n in nodes):
        raise _own_node_lost("the Ray node this driver runs on (the head) died")
    alive, slots = set(), 0
    for node in nodes:
        if not node.get("Alive"):
            continue
        alive.add(node["NodeID"])
        res = node.get("Resources") or {}
        fits = [int(res.get("CPU", 0) / num_cpus + 1e-9)] if num_cpus else []
        if num_gpus:
            fits.append(int(res.get("GPU", 0) / num_gpus + 1e-9))
        slots += min(fits) if fits else 0
    return Snapshot(frozenset(alive), slots)


class Watch:
    """Turns repeated snapshots into a decision: go on, or stop with one line."""

    def __init__(self, wait_s: float | None = None):
        self.wait_s = node_wait_s() if wait_s is None else wait_s
        self.empty_since: float | None = None

    def check(self, snap: Snapshot, live_actors: int) -> None:
        """Raise RunInterrupted once no actor is alive and no node could hold one for
        ``wait_s`` seconds in a row."""
        if live_actors or snap.slots:
            self.empty_since = None
            return
        now = time.monotonic()
        if self.empty_since is None:
            self.empty_since = now
        elif now - self.empty_since >= self.wait_s:
            raise RunInterrupted(
                f"every Ray worker node is gone (no node could run a chunk for "
                f"{self.wait_s:.0f} s); {resume()} once the cluster has workers again "
                "(RAUDIT_NODE_WAIT_S sets how long to wait)")
