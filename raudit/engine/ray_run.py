"""The ``ray`` backend of :func:`raudit.engine.driver.run_chunks`: one actor pool, backpressure
with ``ray.wait``, and the failures a cluster has.

- a chunk that raises is retried ``retries`` times, then reported failed;
- an actor whose process died (killed, OOM) loses its slot; its queued chunks go back to
  the queue and a fresh actor takes the slot while the alive nodes have room;
- a node that leaves the cluster (raylet killed, machine gone) is noticed by the
  heartbeat (:mod:`raudit.engine.health`) even before Ray reports its actors dead; the
  run goes on with the actors the surviving nodes hold;
- no node left, or no head: :class:`~raudit.errors.RunInterrupted`, one line, resumable.

Deaths have their own budget (``retries + 2`` per chunk), so a chunk that kills every
actor it touches still ends. Results never depend on which actor ran a chunk.
"""

from __future__ import annotations

import sys
import time
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import ray

from raudit.engine import actors as act
from raudit.engine import health
from raudit.engine.prestart import ending
from raudit.engine.raylog import death_cause, lost_line, oom_kills


class Config(Protocol):
    """What the loop reads of :class:`raudit.engine.driver.EngineConfig`."""

    @property
    def workers(self) -> int | None: ...
    @property
    def device(self) -> str: ...
    @property
    def per_gpu(self) -> int: ...
    @property
    def depth(self) -> int: ...
    @property
    def retries(self) -> int: ...


class Stats(Protocol):
    """What the loop writes of :class:`raudit.engine.driver.RunStats`."""

    placement: str
    notes: list[str]
    attempts: int


Fn = Callable[[dict[str, Any]], Any]
Weight = Callable[[Mapping[str, Any]], int]
# (spec, result, error) -> the follow-up specs the caller asked for
Finish = Callable[[dict[str, Any], Any, "str | None"], Iterable[dict[str, Any]]]


@dataclass(frozen=True)
class Attempt:
    """A chunk waiting to run: its spec, how often it raised, how many actors it lost."""

    spec: dict[str, Any]
    errors: int = 0
    deaths: int = 0


@dataclass(frozen=True)
class InFlight:
    """A chunk submitted to slot ``slot``'s ``actor`` (the actor of that submission: a
    slot may hold a fresh actor by the time the chunk's result comes back)."""

    attempt: Attempt
    slot: int
    actor: Any


def run(fn: Fn, specs: list[dict[str, Any]], on_done: Callable[..., Any], config: Config,
        weight: Weight, progress: Callable[[int], None], stats: Stats,
        finish: Callable[..., list[dict[str, Any]]]) -> None:
    """Run every spec on a fresh pool; ``finish`` is the driver's per-chunk bookkeeping
    (its arguments after the chunk's are ``stats, on_done, weight, progress``)."""
    with act.session(config.workers):
        placement = act.place(config.device, config.workers, config.per_gpu)
        stats.placement = placement.describe()
        if placement.note:
            stats.notes.append(placement.note)
        from raudit import data
        from raudit.data import shipped

        tables = ray.put(shipped.export(data.load))  # once; every actor (and replacement) installs it
        loop = _Loop(fn, specs, config, act.Pool(placement, tables), stats,
                     lambda spec, result, error: finish(spec, result, error, stats, on_done,
                                                        weight, progress), weight=weight)
        loop.run()


class _Loop:
    def __init__(self, fn: Fn, specs: list[dict[str, Any]], config: Config, pool: act.Pool,
                 stats: Stats, finish: Finish, weight: Weight = lambda spec: 1):
        self.fn, self.config, self.pool, self.stats, self.finish = fn, config, pool, stats, finish
        self.weight = weight
        self.queue: deque[Attempt] = deque(Attempt(spec) for spec in specs)
        self.in_flight: dict[Any, InFlight] = {}  # by the chunk's object ref
        self.load: dict[int, int] = defaultdict(int)
        self.watch = health.Watch()
        self.beat = health.heartbeat_s()
        self.last_beat = time.monotonic()
        self.oom_before = oom_kills()  # a killed actor is blamed on memory only on evidence

    def run(self) -> None:
        with ending(self._close):
            while self.queue or self.in_flight:
                self._fill()
                if not self.in_flight:  # no actor can take work now: wait for a node
                    time.sleep(self.beat)
                    self._heartbeat()
                    continue
                ready, _ = ray.wait(list(self.in_flight), num_returns=1, timeout=self.beat)
                if ready:
                    self._done(ready[0])
                # also while chunks keep finishing: a node may be cut off before Ray
                # reports its actors dead
                if not ready or time.monotonic() - self.last_beat >= self.beat:
                    self._heartbeat()

    def _close(self, abandoned: bool) -> None:
        if abandoned:  # with the head gone, every call below would block
            return
        for ref in self.in_flight:  # interrupted: drop queued work, keep what is written
            try:
                ray.cancel(ref, force=False)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass
        self.pool.close()

    def _fill(self) -> None:
        """Submit queued chunks to the least loaded live slots, ``depth`` per actor at most."""
        live = self.pool.live()
        while self.queue and live:
            i = min(live, key=lambda j: self.load[j])
            if self.load[i] >= self.config.depth:
                return
            attempt = self.queue.popleft()
            actor = self.pool.actors[i]
            self.in_flight[actor.run.remote(self.fn, attempt.spec)] = InFlight(attempt, i, actor)
            self.load[i] += 1
            self.stats.attempts += 1

    def _done(self, ref: Any) -> None:
        flight = self.in_flight.pop(ref)
        attempt, i = flight.attempt, flight.slot
        self.load[i] -= 1
        try:
            result = ray.get(ref)
        except ray.exceptions.RayActorError as exc:
            # The process died: every chunk it held goes back, a fresh actor takes the
            # slot if a node has room for it.
            self._requeue(attempt, exc)
            if self.pool.actors[i] is flight.actor:
                self._lose(i, f"an actor died ({type(exc).__name__})", death_cause(exc, self.oom_before),
                           [attempt.spec])
                self._refill()
            return
        except ray.exceptions.RayError as exc:  # the chunk raised
            if attempt.errors < self.config.retries:
                self.queue.appendleft(Attempt(attempt.spec, attempt.errors + 1, attempt.deaths))
            else:
                self._report(attempt.spec, None, describe(exc))
            return
        self._report(attempt.spec, result, None)

    def _report(self, spec: dict[str, Any], result: Any, error: str | None) -> None:
        self.queue.extend(Attempt(s) for s in self.finish(spec, result, error))

    def _requeue(self, attempt: Attempt, exc: BaseException) -> None:
        if attempt.deaths < self.config.retries + 2:
            self.queue.appendleft(Attempt(attempt.spec, attempt.errors, attempt.deaths + 1))
        else:
            self._report(attempt.spec, None, describe(exc))

    def _lose(self, i: int, why: str, said: str | None = None,
              held: Iterable[dict[str, Any]] = ()) -> None:
        """Empty slot ``i``; its chunks still in flight go back to the queue. One raudit
        line says so on stderr (``said``: the cause in words; ``held``: chunks of the
        slot already requeued), as Ray's own lines go to its log file."""
        lost = list(held)
        for ref, flight in list(self.in_flight.items()):
            if flight.slot == i:
                del self.in_flight[ref]
                self.load[i] -= 1
                lost.append(flight.attempt.spec)
                self._requeue(flight.attempt, RuntimeError(why))
        self.pool.drop(i)
        self.stats.notes.append(f"{why}; its chunks were resubmitted")
        if lost:
            print(lost_line(said or why, len(lost), sum(self.weight(s) for s in lost),
                            self.config.retries + 3), file=sys.stderr, flush=True)

    def _refill(self, snap: health.Snapshot | None = None) -> health.Snapshot:
        snap = snap or health.snapshot(self.pool.placement.num_cpus, self.pool.placement.num_gpus)
        live = len(self.pool.live())
        room = min(snap.slots, self.pool.placement.actors) - live
        if room > 0:
            self.pool.add(room)
        return snap

    def _heartbeat(self) -> None:
        """No chunk finished for a while: compare the actors' nodes with the alive ones."""
        self.last_beat = time.monotonic()
        placement = self.pool.placement
        snap = health.snapshot(placement.num_cpus, placement.num_gpus)
        for i in self.pool.live():
            node = self.pool.node_of(i)
            if node is not None and node not in snap.alive:
                self._lose(i, "a node left the cluster")
        placed = [i for i in self.pool.live() if self.pool.node_of(i) is not None]
        waiting = [i for i in self.pool.live() if i not in placed]
        # Actors still waiting for room that is gone would hold their chunks forever; keep
        # them only while nothing else runs (their demand is what makes an autoscaler add
        # a node).
        excess = len(placed) + len(waiting) - snap.slots
        if placed and excess > 0:
            for i in waiting[:excess]:
                self._lose(i, "an actor could not be placed on the remaining nodes")
        self._refill(snap)
        self.watch.check(snap, len(placed))


def describe(exc: BaseException) -> str:
    """The chunk's own traceback for a task error; Ray's message otherwise."""
    if isinstance(exc, ray.exceptions.RayTaskError):
        cause = getattr(exc, "cause", None)
        text = str(exc)
        if cause is not None and not isinstance(cause, ray.exceptions.RayError):
            return f"{type(cause).__name__}: {cause}\n{text}"
        return text
    return f"{type(exc).__name__}: {exc}"
