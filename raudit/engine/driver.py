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

The ``ray`` backend keeps at most ``depth`` chunks queued per actor (backpressure
with ``ray.wait``: specs are submitted as slots free up, never all at once), and
resubmits the chunks of an actor whose process died. The ``local`` backend runs
the same specs through the same function in this process: for debugging, tests
and machines without Ray.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from raudit.errors import ConfigError

BACKENDS = ("ray", "local")
DEVICES = ("auto", "cpu", "cuda")

Fn = Callable[[dict], Any]
OnDone = Callable[[dict, Any, "str | None"], None]


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
            raise ConfigError(f"--backend must be one of {', '.join(BACKENDS)}; got {self.backend!r}")
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
        return self.workers or (1 if self.backend == "local" else os.cpu_count() or 1)


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


@contextlib.contextmanager
def session(config: EngineConfig) -> Iterator[None]:
    """Share one Ray start-up among several ``run_chunks`` calls (no-op for local).

    Ray starts at the first call that has chunks to run, not before: a resumed
    audit with nothing left to do never starts it.
    """
    if config.backend == "local":
        yield
        return
    from raudit.engine import actors

    with actors.hold():
        yield


def run_chunks(fn: Fn, specs: Iterable[Mapping], *, on_done: OnDone,
               config: EngineConfig = EngineConfig(),
               weight: Callable[[Mapping], int] = lambda spec: 1,
               progress: Callable[[int], None] | None = None) -> RunStats:
    """Run ``fn`` on every spec (see the module docstring); returns :class:`RunStats`."""
    specs = [dict(s) for s in specs]
    stats = RunStats()
    t0 = time.perf_counter()
    if specs:
        runner = _run_local if config.backend == "local" else _run_ray
        runner(fn, specs, on_done, config, weight, progress or (lambda n: None), stats)
    stats.wall_s = time.perf_counter() - t0
    return stats


def _finish(spec, result, error, stats, on_done, weight, progress) -> list[dict]:
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


def _run_local(fn, specs, on_done, config, weight, progress, stats) -> None:
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


def _local_loop(fn, specs, on_done, config, weight, progress, stats, device) -> None:
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


def _run_ray(fn, specs, on_done, config, weight, progress, stats) -> None:
    import ray

    from raudit.engine import actors as act
    from raudit.engine.raylog import death_line

    with act.session(config.workers):
        placement = act.place(config.device, config.workers, config.per_gpu)
        stats.placement = placement.describe()
        if placement.note:
            stats.notes.append(placement.note)
        pool = act.start(placement)
        load = [0] * len(pool)
        # queue items: (spec, chunk errors so far, actor deaths so far)
        queue = deque((spec, 0, 0) for spec in specs)
        in_flight: dict[Any, tuple[dict, int, int, int, Any]] = {}  # ref -> (..., slot, actor)
        try:
            while queue or in_flight:
                # Fill free slots; a slot is one of `depth` queue places of an actor.
                while queue and min(load) < config.depth:
                    spec, errors, deaths = queue.popleft()
                    i = load.index(min(load))
                    ref = pool[i].run.remote(fn, spec)
                    in_flight[ref] = (spec, errors, deaths, i, pool[i])
                    load[i] += 1
                    stats.attempts += 1
                ready, _ = ray.wait(list(in_flight), num_returns=1)
                ref = ready[0]
                spec, errors, deaths, i, actor = in_flight.pop(ref)
                load[i] -= 1
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayActorError as exc:
                    # The process died (killed, OOM, segfault): a fresh actor takes the slot
                    # and the chunk goes back to the queue. Deaths have their own budget, so
                    # a chunk that kills every actor it touches still ends.
                    if pool[i] is actor:
                        act.stop([actor])
                        pool[i] = act.start(placement, count=1)[0]
                        stats.notes.append(f"an actor died ({type(exc).__name__}); replaced it")
                        # once per death, in raudit's words (Ray's own line went to its log)
                        held = [spec] + [v[0] for v in in_flight.values() if v[4] is actor]
                        print(death_line(exc, len(held), sum(weight(s) for s in held),
                                         config.retries + 3), file=sys.stderr, flush=True)
                    if deaths < config.retries + 2:
                        queue.appendleft((spec, errors, deaths + 1))
                    else:
                        more = _finish(spec, None, _describe(exc), stats, on_done, weight,
                                       progress)
                        queue.extend((s, 0, 0) for s in more)
                    continue
                except ray.exceptions.RayError as exc:  # the chunk raised
                    if errors < config.retries:
                        queue.appendleft((spec, errors + 1, deaths))
                    else:
                        more = _finish(spec, None, _describe(exc), stats, on_done, weight,
                                       progress)
                        queue.extend((s, 0, 0) for s in more)
                    continue
                more = _finish(spec, result, None, stats, on_done, weight, progress)
                queue.extend((s, 0, 0) for s in more)
        finally:
            for ref in in_flight:  # interrupted: drop queued work, keep what is written
                try:
                    ray.cancel(ref, force=False)
                except Exception:  # noqa: BLE001 - best effort on the way out
                    pass
            act.stop(pool)


def _describe(exc: BaseException) -> str:
    """The chunk's own traceback for a task error; Ray's message otherwise."""
    import ray

    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        text = str(exc)
        if cause is not None and not isinstance(cause, ray.exceptions.RayError):
            return f"{type(cause).__name__}: {cause}\n{text}"
        return text
    return f"{type(exc).__name__}: {exc}"
