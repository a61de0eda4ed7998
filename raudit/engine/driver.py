"""The driver: run plain chunk functions over many specs, on Ray actors or in-process.

    stats = run_chunks(run_chunk, specs, on_done=sink, config=EngineConfig(backend="ray"))

``fn(spec)`` must be a plain module-level function of a plain dict (it is
shipped to actors by reference). For every spec the driver calls
``on_done(spec, result, error)`` exactly once, in completion order, as soon as
the chunk finishes: ``result`` is fn's return value, or None with ``error`` (the
last attempt's traceback) once ``retries`` further attempts also failed. The
caller persists there, so an interrupted run loses no finished chunk. ``on_done``
may return further specs (a list) to run in the same pool: a campaign adds a job's
next stage (its shadow models once its target is chosen) while other jobs' chunks
are still running, instead of waiting for the whole round to drain.

Backends are entries of :data:`BACKENDS` (a small protocol: ``run``, ``session``,
``workers``, ``help``); a new one is one class and one registration. The ``ray``
backend (:mod:`raudit.engine.ray_run`) keeps at most ``depth`` chunks queued per actor
(backpressure with ``ray.wait``: specs are submitted as slots free up, never all at
once), resubmits the chunks of an actor whose process or node died, and stops with
:class:`~raudit.errors.RunInterrupted` (exit code 3) when no node or no head is left.
The ``local`` backend runs
the same specs through the same function in this process: for debugging, tests
and machines without Ray.
"""

from __future__ import annotations

import contextlib
import os
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ContextManager, Protocol

from raudit.errors import ConfigError
from raudit.registry import Registry

DEVICES = ("auto", "cpu", "cuda")

Spec = dict[str, Any]
Fn = Callable[[Spec], Any]
OnDone = Callable[[Spec, Any, "str | None"], Any]  # may return follow-up specs (a list)
Weight = Callable[[Mapping[str, Any]], int]
Progress = Callable[[int], None]


@dataclass(frozen=True)
class EngineConfig:
    """How to execute: backend, slots, retries, queue depth."""

    backend: str = "ray"
    workers: int | None = None  # actors (default: one per CPU, or per GPU share)
    device: str = "auto"  # auto | cpu | cuda
    per_gpu: int = 1  # actors sharing one GPU
    retries: int = 1  # further attempts of a failed chunk
    depth: int = 2  # chunks queued per actor

    def __post_init__(self) -> None:
        if self.backend not in BACKENDS:
            raise ConfigError(f"--backend must be one of {', '.join(BACKENDS.names())}; "
                              f"got {self.backend!r}")
        if self.device not in DEVICES:
            raise ConfigError(f"--device must be one of {', '.join(DEVICES)}; got {self.device!r}")
        for name in ("per_gpu", "depth"):
            if getattr(self, name) < 1:
                raise ConfigError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"--workers must be at least 1, got {self.workers}")
        if self.retries < 0:
            raise ConfigError(f"retries must be >= 0, got {self.retries}")

    def planned_workers(self) -> int:
        """Slots the run will have, as estimates count them: --workers, else one for the
        local backend, else one per CPU of this machine."""
        return self.workers or BACKENDS.get(self.backend).workers()


@dataclass
class RunStats:
    """What a run did."""

    chunks: int = 0
    failed_chunks: int = 0
    attempts: int = 0
    units: int = 0  # weight of the chunks that succeeded (e.g. shadow models)
    wall_s: float = 0.0
    placement: str = ""
    notes: list[str] = field(default_factory=list)


class Backend(Protocol):
    """Where chunks run: ``run`` calls ``_finish`` once per spec, in completion order."""

    help: str  # what --backend NAME means, one phrase (the CLI's help is made of these)
    in_process: bool  # chunks run one at a time in this process (--workers does not apply)

    def run(self, fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig,
            weight: Weight, progress: Progress, stats: RunStats) -> None: ...

    def session(self) -> ContextManager[None]: ...  # shared start-up of several runs

    def prestart(self, workers: int | None) -> ContextManager[None]: ...  # see prestart()

    def workers(self) -> int: ...  # slots when --workers is not given

    def on_this_machine(self) -> bool: ...  # whether the chunks run on this machine

    def check(self) -> None: ...  # ConfigError before any work when it cannot run at all


class LocalBackend:
    help = "in-process, one chunk at a time: for debugging, tests and machines without Ray"
    in_process = True

    def run(self, fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig,
            weight: Weight, progress: Progress, stats: RunStats) -> None:
        _run_local(fn, specs, on_done, config, weight, progress, stats)

    def session(self) -> ContextManager[None]:
        return contextlib.nullcontext()

    def prestart(self, workers: int | None) -> ContextManager[None]:
        return contextlib.nullcontext()

    def workers(self) -> int:
        return 1

    def on_this_machine(self) -> bool:
        return True

    def check(self) -> None:
        """Nothing to check: the local backend runs in this process."""


class RayBackend:
    help = "Ray actors, one per CPU or GPU share; RAY_ADDRESS joins a cluster"
    in_process = False

    def run(self, fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig,
            weight: Weight, progress: Progress, stats: RunStats) -> None:
        _run_ray(fn, specs, on_done, config, weight, progress, stats)

    def session(self) -> ContextManager[None]:
        from raudit.engine import actors

        return actors.hold()

    def prestart(self, workers: int | None) -> ContextManager[None]:
        from raudit.engine.prestart import prestart  # no Ray here: the thread imports it

        return prestart(workers)

    def workers(self) -> int:
        return os.cpu_count() or 1

    def on_this_machine(self) -> bool:
        return not os.environ.get("RAY_ADDRESS")  # else a cluster's nodes run them

    def check(self) -> None:
        """Before any work: a RAY_ADDRESS where nothing answers is one line, not minutes of
        Ray's retries after --out was locked and its manifest written."""
        from raudit.engine import address

        address.check(os.environ.get("RAY_ADDRESS"))


BACKENDS: Registry[Backend] = Registry("backend")
BACKENDS.register("ray", RayBackend())
BACKENDS.register("local", LocalBackend())


def backend_help() -> str:
    """The --backend help of every command, from the registered backends."""
    return "; ".join(f"{n}: {BACKENDS.get(n).help}" for n in BACKENDS.names()) + "."


@contextlib.contextmanager
def session(config: EngineConfig) -> Iterator[None]:
    """Share one Ray start-up among several ``run_chunks`` calls (no-op for local).

    Ray starts at the first call that has chunks to run, not before: a resumed
    audit with nothing left to do never starts it.
    """
    with BACKENDS.get(config.backend).session():
        yield


def prestart(config: EngineConfig) -> ContextManager[None]:
    """Begin the backend's start-up (Ray's: a background ``ray.init``) now, for the runs
    inside the block, so that it overlaps what the caller does before its first chunk; the
    block's end stops what it started. Call it after the input is checked: it starts
    processes, even if no chunk then runs."""
    return BACKENDS.get(config.backend).prestart(config.workers)


def run_chunks(fn: Fn, specs: Iterable[Mapping[str, Any]], *, on_done: OnDone,
               config: EngineConfig = EngineConfig(),
               weight: Weight = lambda spec: 1,
               progress: Progress | None = None) -> RunStats:
    """Run ``fn`` on every spec (see the module docstring); returns :class:`RunStats`."""
    todo = [dict(s) for s in specs]
    stats = RunStats()
    t0 = time.perf_counter()
    if todo:
        BACKENDS.get(config.backend).run(fn, todo, on_done, config, weight,
                                         progress or (lambda n: None), stats)
    stats.wall_s = time.perf_counter() - t0
    return stats


def _finish(spec: Spec, result: Any, error: str | None, stats: RunStats, on_done: OnDone,
            weight: Weight, progress: Progress) -> list[Spec]:
    """Record a finished chunk; returns the follow-up specs ``on_done`` asked for."""
    stats.chunks += 1
    if error is None:
        stats.units += weight(spec)
    else:
        stats.failed_chunks += 1
    more = on_done(spec, result, error)
    progress(weight(spec))
    # only a list counts: a callback that happens to return something else (a path, a
    # count) adds nothing
    return [dict(s) for s in more] if isinstance(more, list) else []


def _local_device(device: str) -> str:
    if device == "cpu":
        return "cpu"
    import torch

    if torch.cuda.is_available():
        return "cuda"
    return "cpu"


def _run_local(fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig, weight: Weight,
               progress: Progress, stats: RunStats) -> None:
    import torch

    device = _local_device(config.device)
    stats.placement = f"in-process ({device})"
    # As on the actors: tiny batched networks gain nothing from intra-op threads and lose
    # a lot to oversubscription on a busy machine (a 1,000-iteration synthcity audit made
    # no progress in 25 min with torch's default threads, 700 s with one).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        _local_loop(fn, specs, on_done, config, weight, progress, stats, device)
    finally:
        torch.set_num_threads(threads)


def _local_loop(fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig,
                weight: Weight, progress: Progress, stats: RunStats, device: str) -> None:
    if config.device == "cuda" and device == "cpu":
        stats.notes.append("CUDA is not available: running on CPU")
    queue = deque(specs)
    while queue:
        spec = queue.popleft()
        result, error = None, None
        for _ in range(config.retries + 1):
            stats.attempts += 1
            try:
                result, error = fn({**spec, "device": device}), None
                break
            except Exception:  # noqa: BLE001 - any chunk failure is recorded, not fatal
                error = traceback.format_exc()
        queue.extend(_finish(spec, result, error, stats, on_done, weight, progress))


def _run_ray(fn: Fn, specs: list[Spec], on_done: OnDone, config: EngineConfig, weight: Weight,
             progress: Progress, stats: RunStats) -> None:
    from raudit.engine import ray_run

    ray_run.run(fn, specs, on_done, config, weight, progress, stats, _finish)
