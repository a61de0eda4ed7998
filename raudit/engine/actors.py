"""Ray session and the chunk actors (Ray itself is started and stopped by :mod:`.ray_start`).

A session is a fresh local Ray instance by default (``num_cpus`` = workers, no
dashboard, listening on loopback only: :mod:`raudit.engine.loopback`), or the cluster at ``RAY_ADDRESS`` when that is set, or the instance
the caller already started (tests, notebooks), which is then left running.

Each actor holds one slot: a CPU (``num_cpus=1``, torch limited to one thread so
that N actors on N cores do not oversubscribe them) or a share of a GPU
(``num_gpus=1/per_gpu``; several small batched models fill one GPU better than
one). When an actor's process dies the driver replaces it and resubmits what it held.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import ray

from raudit.engine import ray_start
from raudit.engine.prestart import await_early, ending
from raudit.errors import on_sigterm

# No path of the driver's environment is forwarded: a worker on another machine has
# other paths. The datasets the driver loaded travel in the object store instead
# (raudit.data.shipped), so workers need no RAUDIT_DATA_DIR and no user files.
# The switches that change a run's arithmetic (compiled.ARITHMETIC: RAUDIT_COMPILE, ...)
# are another matter: they are part of what the run computes, not of the machine, so every
# actor gets the driver's values (unset where the driver has them unset). A local
# instance's workers inherit the environment of the moment Ray started, a cluster node's
# its own: either could otherwise train a chunk in another mode than the driver's (and
# than the chunk-size calibration measured).


def _apply(values: dict[str, str | None]) -> None:
    # before anything reads them: teachers.HAND_GRAD and optim.FUSED are read at import,
    # and this runs first in a fresh actor process (importing this module imports no
    # training code)
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@ray.remote(max_restarts=0, max_task_retries=0)
class ChunkActor:
    """Runs ``fn(spec)`` with the slot's device written into the spec, under the driver's
    arithmetic switches (``env``, see :func:`switches`)."""

    def __init__(self, device: str, threads: int, tables: dict[Any, Any] | None = None,
                 env: dict[str, str | None] | None = None):
        _apply(env or {})
        import torch

        from raudit.data import shipped

        torch.set_num_threads(max(1, threads))
        self.device = device
        if tables:
            shipped.install(tables)

    def pid(self) -> int:
        return os.getpid()

    def node(self) -> str:
        """The id of the node this actor runs on (the heartbeat matches it with ray.nodes())."""
        return ray.get_runtime_context().get_node_id()

    def run(self, fn: Callable[[dict[str, Any]], Any], spec: dict[str, Any]) -> Any:
        return fn({**spec, "device": self.device})


@dataclass(frozen=True)
class Placement:
    """Where the actors run: their count, device and resource shares."""

    actors: int
    device: str
    num_cpus: float
    num_gpus: float
    note: str = ""

    def describe(self) -> str:
        if self.device == "cuda":
            return f"{self.actors} GPU actors ({self.num_gpus:g} GPU each)"
        return f"{self.actors} CPU actors"


_held: dict[str, Any] = {"depth": 0, "started": False}  # see hold()

@contextlib.contextmanager
def session(workers: int | None) -> Iterator[None]:
    """Connect to (or start) Ray for the duration of the block.

    Inside :func:`hold`, an instance started here stays up until the hold ends; one that
    :func:`prestart` started stays up until the prestart's block ends.
    """
    await_early()
    if ray.is_initialized():
        _own_sigterm()
        yield
        return
    ray_start.init(workers)
    _own_sigterm()
    with ending(_end):
        yield


def _own_sigterm() -> None:
    """Take SIGTERM back once Ray is up: ray.init (in the main thread) makes it a sys.exit,
    and Ray's C++ core worker installs a crash handler for it that prints a stack dump and
    aborts (exit 134, no resume line). raudit's ends the run as Ctrl-C does
    (:class:`raudit.errors.Terminated`). Only the main thread can set a handler."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, on_sigterm)


def _end(abandoned: bool) -> None:
    """The end of a session that started Ray: stop it, or leave it to the enclosing hold."""
    if abandoned:  # the head is gone: ray.shutdown() would block for a minute
        _held["started"] = False
    elif _held["depth"]:
        _held["started"] = True
    else:
        ray_start.shutdown()


@contextlib.contextmanager
def hold() -> Iterator[None]:
    """Keep a Ray instance that a ``session`` inside starts alive for the whole block
    (one start-up for several runs); start nothing if nothing runs."""
    _held["depth"] += 1
    try:
        yield
    finally:
        _held["depth"] -= 1
        if not _held["depth"] and _held["started"]:
            _held["started"] = False
            ray_start.shutdown()


def place(device: str, workers: int | None, per_gpu: int) -> Placement:
    """Choose the actors for ``device`` (auto | cpu | cuda) on the connected cluster.

    ``auto`` and ``cuda`` use GPU slots when the cluster has GPUs and fall back to
    CPU slots (with a note) when it has none.
    """
    res = ray.cluster_resources()
    cpus, gpus = float(res.get("CPU", 1)), float(res.get("GPU", 0))
    if device in ("auto", "cuda") and gpus > 0:
        n = max(1, int(gpus * per_gpu)) if workers is None else workers
        return Placement(n, "cuda", min(1.0, cpus / n), 1.0 / per_gpu)
    note = "no GPU in the cluster: running on CPU slots" if device == "cuda" else ""
    n = max(1, int(cpus))
    if workers and workers > n:  # more actors than CPU slots would wait forever
        note = (note + "; " if note else "") + f"--workers {workers} capped at the cluster's {n} CPUs"
    n = min(workers or n, n)
    return Placement(n, "cpu", 1.0, 0.0, note)


def start(placement: Placement, count: int | None = None, tables: Any = None) -> list[Any]:
    """Create the placement's actors (or ``count`` of its kind); ``tables`` (an object
    ref of :func:`raudit.data.shipped.export`) is installed in each."""
    opts: dict[str, Any] = {"num_cpus": placement.num_cpus}
    if placement.num_gpus:
        opts["num_gpus"] = placement.num_gpus
    threads = 1 if placement.device == "cpu" else 2
    from raudit.generators.nn.compiled import switches

    env = switches()
    return [ChunkActor.options(**opts).remote(  # type: ignore[attr-defined]  # a Ray actor class
            placement.device, threads, tables, env)
            for _ in range(placement.actors if count is None else count)]


def stop(actors: list[Any]) -> None:
    for a in actors:
        if a is not None:
            with contextlib.suppress(Exception):
                ray.kill(a)


class Pool:
    """The actor slots of one placement.

    A slot whose actor died (or whose node left the cluster) is emptied; it is filled
    again only while the alive nodes have room for one more actor, so that a run that
    lost a node goes on with fewer actors instead of waiting on one that cannot start.
    """

    def __init__(self, placement: Placement, tables: Any = None):
        self.placement, self.tables = placement, tables
        self.actors: list[Any] = []
        self._where: list[Any] = []  # per slot: the node() ref, then the node id
        self.add(placement.actors)

    def add(self, count: int) -> int:
        """Start up to ``count`` actors in empty slots (new slots if none); returns how many."""
        new = start(self.placement, count=count, tables=self.tables) if count > 0 else []
        for actor in new:
            i = self.actors.index(None) if None in self.actors else len(self.actors)
            if i == len(self.actors):
                self.actors.append(None)
                self._where.append(None)
            self.actors[i], self._where[i] = actor, actor.node.remote()
        return len(new)

    def live(self) -> list[int]:
        return [i for i, a in enumerate(self.actors) if a is not None]

    def node_of(self, i: int) -> str | None:
        """Slot ``i``'s node id once its actor has started (None before, or if it died)."""
        where = self._where[i]
        if where is None or isinstance(where, str):
            return where
        ready, _ = ray.wait([where], timeout=0)
        if not ready:
            return None
        try:
            node: str = ray.get(where)
        except ray.exceptions.RayError:
            return None
        self._where[i] = node
        return node

    def drop(self, i: int) -> None:
        stop([self.actors[i]])
        self.actors[i], self._where[i] = None, None

    def close(self) -> None:
        stop(self.actors)
