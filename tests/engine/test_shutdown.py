"""A Ray instance raudit started stops without Ray's one-second wait on its autoscaler
monitor (which never exits on SIGTERM): the monitor is gone before ``ray.shutdown()``; and
no process Ray started for a command outlives it, whether it ends or is killed."""

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


def _tree(pid: int) -> dict[int, str]:
    """``pid``'s descendants, with their command lines (Ray's workers run in their own groups
    but stay below the raylet)."""
    from pathlib import Path

    parent, lines = {}, {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
                lines[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ")
            except (OSError, ValueError, IndexError):
                pass
    found, todo = {}, [pid]
    while todo:
        p = todo.pop()
        for child, ppid in parent.items():
            if ppid == p and child not in found:
                found[child] = lines[child].decode(errors="replace")
                todo.append(child)
    return found


@pytest.mark.parametrize("how", ["ends", "killed"])
def test_no_ray_process_outlives_the_command(how, tmp_path):
    """Every process Ray started for a command (GCS, raylet, dashboard, agents, the chunk
    actors with their preloaded modules) is gone once the command ends, or soon after it is
    SIGKILLed mid-run (Ray's fate-sharing of ``ray.init(address="local")``)."""
    import signal
    import subprocess
    import sys
    import time

    from raudit.engine.ray_start import PRELOAD

    assert PRELOAD  # what this guards: the workers that preload are Ray's own, fate-shared
    if os.environ.get("RAY_ADDRESS"):
        pytest.skip("a cluster's processes are not the command's")
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: t\njobs:\n  - name: wc\n    impl: paper\n    attack: querybased\n"
                   "    dataset: worst-case\n    shadow_models: 12\n    chunk_size: 4\n"
                   "    max_iter: 25\n")  # 6 chunks: long enough to kill one mid-run
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "raudit.cli.app", "campaign", str(cfg),
                             "--out", str(tmp_path / "out"), "--workers", "1"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seen: dict[int, str] = {}
    end = time.monotonic() + 240
    while proc.poll() is None and time.monotonic() < end:
        # an exited, not yet reaped process reads as '' (a zombie's cmdline): keep the
        # line it ran with (the raylet ends as a zombie for a moment at shutdown)
        seen.update({p: line for p, line in _tree(proc.pid).items() if line})
        if how == "killed" and any("ChunkActor" in line for line in seen.values()):
            proc.send_signal(signal.SIGKILL)
            break
        time.sleep(0.1)
    proc.wait(timeout=300)
    assert any("raylet" in line for line in seen.values()), seen  # Ray did start
    if how == "killed":
        assert proc.returncode == -signal.SIGKILL
    else:
        assert proc.returncode == 0, proc.stderr.read()[-2000:]
    # Killed, Ray's dashboard and runtime-env agents notice that their raylet is gone only
    # by polling it: measured 45-80 s at load 12-15 (everything else goes at once).
    t0 = time.monotonic()
    limit = 30 if how == "ends" else 150
    while time.monotonic() - t0 < limit:
        alive = {p: line[:40] for p, line in seen.items() if line and line == _cmdline(p)}
        if not alive:
            print(f"every Ray process gone {time.monotonic() - t0:.1f} s after the command")
            return
        time.sleep(0.5)
    raise AssertionError(f"still running {limit} s after the command: {alive}")


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""
