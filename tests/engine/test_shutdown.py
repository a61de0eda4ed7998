"""A Ray instance raudit started stops without Ray's one-second wait on its autoscaler
monitor (which never exits on SIGTERM): the monitor is gone before ``ray.shutdown()``."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.ray, pytest.mark.slow]

from raudit.engine import actors  # noqa: E402


def test_the_monitor_is_stopped_before_ray_shutdown(monkeypatch):
    if ray.is_initialized() or os.environ.get("RAY_ADDRESS"):
        pytest.skip("needs a local instance started by the session")
    seen = []
    real = ray.shutdown

    def spy(*args, **kwargs):
        seen.append([info.process.poll() is not None for info in monitors])
        real(*args, **kwargs)

    monkeypatch.setattr(ray, "shutdown", spy)
    with actors.session(1):
        monitors = ray._private.worker._global_node.all_processes.get("monitor", [])
        assert monitors and all(info.process.poll() is None for info in monitors)
    assert seen == [[True] * len(monitors)]  # every monitor already exited
    assert not ray.is_initialized()
