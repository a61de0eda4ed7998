"""A head start: chunks trained in the driver while Ray is still starting.

A command that prestarts Ray (:mod:`raudit.engine.prestart`) reaches its first chunk
before Ray can take it: ``ray.init`` and the actors' start take 4-6 s (the daemons'
processes, the workers' preloaded imports), most of it waiting, with a core to spare, and
the driver has already imported the generator for its probe. :class:`Head` trains the
queue's first chunks in a thread of this process until Ray is up (one at a time, the
chunk it is training when Ray comes up is finished), and the pool takes the rest. A
chunk's result does not depend on where it runs (the same function of the same spec,
with one torch thread as on a CPU actor), so no number changes; a chunk that fails here
goes back to the queue for the pool to run as if it had never been tried.

Only for CPU slots on this machine (a local instance: no ``RAY_ADDRESS``; device ``cpu``,
or ``auto`` without CUDA), so the chunk runs where and how an actor would.
"""

from __future__ import annotations

import os
import threading
import traceback
from collections import deque
from typing import Any, Callable


def wanted(device: str) -> bool:
    """Whether a head start runs chunks as the actors will: CPU slots, this machine."""
    if os.environ.get("RAY_ADDRESS") or device == "cuda":
        return False
    if device == "cpu":
        return True
    import torch  # auto: the slots are CUDA ones when the machine has a GPU

    return not torch.cuda.is_available()


class Head:
    """Runs ``fn`` on specs taken from the front of ``queue`` (a deque of the engine's
    ``(spec, errors, deaths)`` entries) in a thread, until :meth:`stop`."""

    def __init__(self, fn: Callable[[dict], Any], queue: deque):
        self.fn, self.queue = fn, queue
        self.ready = threading.Event()  # the pool is about to take work: take no more
        self._lock = threading.Lock()  # after stop() returns, no chunk is taken here
        self.done: deque = deque()  # (spec, result, error), for the engine's thread
        self.idle = threading.Event()  # set once the thread has stopped taking chunks
        self.ran = 0  # chunks trained here
        self._thread = threading.Thread(target=self._work, name="raudit-head-start",
                                        daemon=True)
        self._thread.start()

    def _work(self) -> None:
        import torch

        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # as on a CPU actor
        try:
            while True:
                with self._lock:
                    if self.ready.is_set() or not self.queue:
                        break
                    entry = self.queue.popleft()
                spec = entry[0]
                try:
                    result, error = self.fn({**spec, "device": "cpu"}), None
                    self.ran += 1
                except Exception:  # noqa: BLE001 - the pool runs it again
                    result, error = None, traceback.format_exc()
                self.done.append((entry, result, error))
        finally:
            torch.set_num_threads(threads)
            self.idle.set()

    def stop(self) -> None:
        """Take no further chunk (the one being trained is finished)."""
        with self._lock:
            self.ready.set()

    def busy(self) -> bool:
        """Whether a chunk taken here has not been handed back by :meth:`collect` yet."""
        return not self.idle.is_set() or bool(self.done)

    def collect(self) -> list[tuple[tuple, Any, str | None]]:
        """The chunks finished here since the last call: ``(entry, result, error)``."""
        out = []
        while self.done:
            out.append(self.done.popleft())
        return out
