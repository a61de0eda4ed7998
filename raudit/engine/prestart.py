"""Ray's start begun in the background while the driver does its own work.

``with prestart(workers): ...`` starts a thread that imports Ray and calls ``ray.init``
while the block runs the driver's own work (the probe, the estimate, planning); a
:func:`raudit.engine.actors.session` inside waits for that start (:func:`await_early`) and
uses the instance. ``ray.init`` mostly waits on the processes it starts (measured 4-6 s,
2-2.5 CPU-s of Ray's daemons), so the start then overlaps the driver's CPU instead of
following it. The import of Ray itself (0.25 CPU-s, about a second of wall time on a
loaded machine) happens in the thread too: this module imports no Ray, so a command
that prestarts pays none of it on its own path.

The block's end shuts down an instance started here (also when the block raised before
any session ran, e.g. a probe that failed), unless the failure abandoned Ray (its head is
gone). The thread lives until that shutdown: Ray ties the processes it starts to the life
of the *thread* that started them (Linux's parent-death signal is per thread), so a thread
that returned after ``ray.init`` would take the GCS and raylet with it (measured: the
driver's next Ray call ended the process).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any

from raudit.errors import on_sigterm

# A start begun by prestart(): the box it reports in ("ready": an Event, set once
# ray.init returned or raised; "error"; "end": the Event that lets the thread go).
_early: dict[str, Any] = {}


def _initialised() -> bool:
    ray = sys.modules.get("ray")  # not imported yet: nothing can have started it
    return ray is not None and ray.is_initialized()


@contextlib.contextmanager
def prestart(workers: int | None) -> Iterator[None]:
    """Start Ray in a background thread for the block (see the module docstring)."""
    if _initialised() or _early:
        yield
        return
    box: dict[str, Any] = {"ready": threading.Event(), "end": threading.Event()}

    def start() -> None:
        try:
            from raudit.engine import ray_start  # imports Ray, here rather than in the caller

            ray_start.init(workers)
        except BaseException as exc:  # noqa: BLE001 - re-raised by the session that waits
            box["error"] = exc
        finally:
            box["ready"].set()
        box["end"].wait()

    if threading.current_thread() is threading.main_thread() and hasattr(signal, "SIGTERM"):
        # ray.init, in the main thread only, would make SIGTERM a sys.exit (a C++ crash
        # dump at exit, 134); raudit's handler ends the run as Ctrl-C does
        signal.signal(signal.SIGTERM, on_sigterm)
    thread = threading.Thread(target=start, name="raudit-ray-start", daemon=True)

    def end(abandoned: bool) -> None:
        box["ready"].wait()
        try:
            if "error" not in box and _initialised() and not abandoned:
                from raudit.engine import ray_start

                ray_start.shutdown()
        finally:
            _early.clear()
            box["end"].set()
            if not abandoned:
                thread.join()

    _early.update(box)
    thread.start()
    with ending(end):
        yield


@contextlib.contextmanager
def ending(end: Callable[[bool], None]) -> Iterator[None]:
    """Run the block, then ``end(abandoned)``, also when the block raised (which then goes on).

    ``abandoned``: what the block raised abandons Ray (``abandon_ray``, set by
    :mod:`.health` on a :class:`~raudit.errors.RunInterrupted`): the head or this driver's
    node is gone, and every Ray call, ``ray.shutdown()`` included, would block (for about
    a minute), so ``end`` must leave Ray alone. One rule for the session, the prestart and
    the driver's loop."""
    abandoned = False
    try:
        yield
    except BaseException as exc:
        abandoned = bool(getattr(exc, "abandon_ray", False))
        raise
    finally:
        end(abandoned)


def await_early() -> None:
    """Wait for a start :func:`prestart` began; raise what it raised."""
    if _early:
        _early["ready"].wait()
        error = _early.pop("error", None)
        if error is not None:
            raise error
