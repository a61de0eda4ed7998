"""An error that abandons Ray (``abandon_ray``: the head or the driver's node is gone, and
every Ray call would block) leaves Ray alone on the way out; any other end cleans up.
One rule (raudit.engine.prestart.ending) for the session, the prestart and the driver's
loop. No Ray instance is started here: what would touch it is replaced."""

from __future__ import annotations

import signal
from types import SimpleNamespace

import pytest

ray = pytest.importorskip("ray")

from raudit.engine import actors, prestart, ray_run, ray_start  # noqa: E402
from raudit.engine.prestart import ending  # noqa: E402
from raudit.errors import RunInterrupted  # noqa: E402


def _lost() -> RunInterrupted:
    err = RunInterrupted("lost contact with the Ray head; rerun to resume")
    err.abandon_ray = True
    return err


def test_ending_says_whether_the_block_abandoned_ray():
    seen = []
    with ending(seen.append):
        pass
    with pytest.raises(RuntimeError, match="a chunk"):
        with ending(seen.append):
            raise RuntimeError("a chunk failed")
    with pytest.raises(RunInterrupted, match="lost contact"):
        with ending(seen.append):
            raise _lost()
    with pytest.raises(RunInterrupted, match="disk full"):  # RunInterrupted is not enough
        with ending(seen.append):
            raise RunInterrupted("disk full")
    with pytest.raises(KeyboardInterrupt):
        with ending(seen.append):
            raise KeyboardInterrupt
    assert seen == [False, False, True, False, False]


@pytest.fixture
def fake_start(monkeypatch):
    """A session that 'starts' Ray without starting it; the shutdowns it asks for."""
    if ray.is_initialized():
        pytest.skip("needs no Ray instance in this process")
    stops: list[str] = []
    monkeypatch.setattr(ray_start, "init", lambda workers: None)
    monkeypatch.setattr(ray_start, "shutdown", lambda: stops.append("shutdown"))
    monkeypatch.setitem(actors._held, "depth", 0)
    monkeypatch.setitem(actors._held, "started", False)
    return stops


def test_a_session_stops_ray_unless_the_error_abandoned_it(fake_start):
    with actors.session(1):
        pass
    with pytest.raises(RuntimeError):
        with actors.session(1):
            raise RuntimeError("a bug")
    assert fake_start == ["shutdown", "shutdown"]
    with pytest.raises(RunInterrupted):
        with actors.session(1):
            raise _lost()
    assert fake_start == ["shutdown", "shutdown"]  # ray.shutdown() would block a minute


def test_a_hold_does_not_stop_what_an_abandoning_session_left(fake_start):
    with actors.hold():
        with actors.session(1):
            pass
        assert actors._held["started"] and not fake_start  # kept for the next run
    assert fake_start == ["shutdown"]
    with pytest.raises(RunInterrupted):
        with actors.hold():
            with actors.session(1):
                raise _lost()
    assert fake_start == ["shutdown"] and not actors._held["started"]


@pytest.mark.parametrize("abandon", [False, True])
def test_a_prestart_stops_ray_unless_the_error_abandoned_it(monkeypatch, fake_start, abandon):
    handler = signal.getsignal(signal.SIGTERM)  # prestart installs its own in the main thread
    try:
        with pytest.raises(RunInterrupted):
            with prestart.prestart(1):
                prestart.await_early()  # the thread's start (a no-op here) is done
                monkeypatch.setattr(ray, "is_initialized", lambda: True)  # as if it had started
                raise _lost() if abandon else RunInterrupted("disk full")
    finally:
        signal.signal(signal.SIGTERM, handler)
    assert fake_start == ([] if abandon else ["shutdown"]) and not prestart._early


@pytest.mark.parametrize("abandon", [False, True])
def test_the_loop_cancels_and_closes_unless_the_error_abandoned_ray(monkeypatch, abandon):
    calls = []

    class Pool:
        actors = [SimpleNamespace(run=SimpleNamespace(remote=lambda fn, spec: "ref"))]

        def live(self):
            return [0]

        def close(self):
            calls.append("close")

    def wait(refs, **kw):
        raise _lost() if abandon else RuntimeError("ray.wait failed")

    monkeypatch.setattr(ray, "wait", wait)
    monkeypatch.setattr(ray, "cancel", lambda ref, force: calls.append(("cancel", ref)))
    loop = ray_run._Loop(len, [{"chunk": 0}], SimpleNamespace(depth=1), Pool(),
                         SimpleNamespace(attempts=0), finish=None)
    with pytest.raises(RunInterrupted if abandon else RuntimeError):
        loop.run()
    assert calls == ([] if abandon else [("cancel", "ref"), "close"])
