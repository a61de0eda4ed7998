"""The driver's heartbeat without a cluster: slots from ray.nodes(), a head that does not
answer, the wait for a node, and the CLI's one line for a lost cluster."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time

import pytest

pytest.importorskip("ray")

from raudit.engine import health  # noqa: E402
from raudit.errors import RunInterrupted  # noqa: E402

NODES = [
    {"NodeID": "head", "Alive": True, "Resources": {"CPU": 0.0}},
    {"NodeID": "w1", "Alive": True, "Resources": {"CPU": 16.0, "GPU": 1.0}},
    {"NodeID": "w2", "Alive": True, "Resources": {"CPU": 4.0}},
    {"NodeID": "w3", "Alive": False, "Resources": {"CPU": 64.0}},
]


@pytest.fixture
def fake_ray(monkeypatch):
    context = type("Ctx", (), {"get_node_id": lambda self: "head"})()
    monkeypatch.setattr(health.ray, "get_runtime_context", lambda: context)
    monkeypatch.setattr(health, "check_local_raylet", lambda: None)
    monkeypatch.setattr(health.ray, "nodes", lambda: NODES)
    return monkeypatch


def test_snapshot_counts_the_actors_alive_nodes_can_hold(fake_ray):
    cpu = health.snapshot(1.0, 0.0)
    assert cpu.alive == {"head", "w1", "w2"} and cpu.slots == 20  # the dead node counts none
    assert health.snapshot(0.5, 0.5).slots == 2  # GPU shares: only w1 has a GPU
    assert health.snapshot(3.0, 0.0).slots == 5 + 1


def test_a_head_that_does_not_answer_is_one_resumable_error(fake_ray):
    fake_ray.setattr(health.ray, "nodes", lambda: time.sleep(30))
    t0 = time.monotonic()
    with pytest.raises(RunInterrupted, match="lost contact with the Ray head.*resume") as info:
        health.snapshot(1.0, 0.0, timeout=0.3)
    assert time.monotonic() - t0 < 5 and info.value.abandon_ray and info.value.exit_code == 3


def test_the_drivers_own_node_gone_is_one_error(fake_ray):
    fake_ray.setattr(health.ray, "nodes", lambda: [dict(NODES[0], Alive=False), *NODES[1:]])
    with pytest.raises(RunInterrupted, match="this driver runs on"):
        health.snapshot(1.0, 0.0)


def test_watch_waits_for_a_node_then_gives_up(monkeypatch):
    clock = [100.0]
    monkeypatch.setattr(health.time, "monotonic", lambda: clock[0])
    watch = health.Watch(wait_s=20)
    empty, room = health.Snapshot(frozenset({"head"}), 0), health.Snapshot(frozenset(), 1)
    watch.check(empty, live_actors=0)
    clock[0] += 19
    watch.check(empty, live_actors=0)
    watch.check(room, live_actors=0)  # a node came back: the wait starts over
    watch.check(empty, live_actors=0)
    clock[0] += 19.5
    watch.check(empty, live_actors=1)  # a placed actor is still working: go on
    watch.check(empty, live_actors=0)
    clock[0] += 20
    with pytest.raises(RunInterrupted, match="every Ray worker node is gone.*RAUDIT_NODE_WAIT_S"):
        watch.check(empty, live_actors=0)


def test_the_environment_sets_the_heartbeat_and_the_wait(monkeypatch):
    monkeypatch.setenv("RAUDIT_HEARTBEAT_S", "2")
    monkeypatch.setenv("RAUDIT_NODE_WAIT_S", "900")
    assert (health.heartbeat_s(), health.node_wait_s()) == (2.0, 900.0)
    monkeypatch.setenv("RAUDIT_NODE_WAIT_S", "soon")
    assert health.node_wait_s() == 20.0


def test_cli_leaves_at_once_with_one_line_and_exit_3():
    code = textwrap.dedent("""
        from raudit.cli.errors import user_errors
        from raudit.errors import RunInterrupted

        @user_errors
        def command():
            err = RunInterrupted("lost contact with the Ray head; rerun to resume")
            err.abandon_ray = True
            raise err

        command()
        print("not reached")
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 3 and r.stdout == ""
    assert r.stderr.strip() == "error: lost contact with the Ray head; rerun to resume"
