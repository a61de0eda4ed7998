"""A local Ray instance raudit starts has its workers import what every chunk actor needs
(torch, the shipped tables' module, the chunk dispatcher) as Ray starts them, not in the
actor's __init__: the start-up of the actors overlaps Ray's own (lab/performance.md)."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.ray, pytest.mark.slow]

from raudit.engine import actors  # noqa: E402


def test_a_fresh_workers_modules_are_preloaded_and_nothing_heavier():
    if ray.is_initialized() or os.environ.get("RAY_ADDRESS"):
        pytest.skip("needs a local instance started by the session")
    wanted = ("torch", "raudit.data.shipped", "raudit.runs.dispatch")
    names = (*wanted, "sklearn", "raudit.audit.runner")

    def modules() -> dict:  # defined here: shipped by value, it imports nothing itself
        import sys

        return {m: m in sys.modules for m in names}

    task = ray.remote(modules)
    with actors.session(1):
        seen = ray.get(task.remote())
    assert seen == {**dict.fromkeys(wanted, True), "sklearn": False,
                    "raudit.audit.runner": False}


def test_a_cluster_is_given_no_system_config(monkeypatch):
    # RAY_ADDRESS: the workers are the cluster's; ray.init may not pass _system_config
    if ray.is_initialized():
        pytest.skip("needs no Ray instance in this process")
    seen = {}
    monkeypatch.setenv("RAY_ADDRESS", "127.0.0.1:1")
    monkeypatch.setattr(ray, "init", lambda **kw: seen.update(kw))
    monkeypatch.setattr(actors, "_end", lambda abandoned: None)
    with actors.session(1):
        pass
    assert seen["address"] == "127.0.0.1:1" and "_system_config" not in seen
