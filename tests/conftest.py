"""Suite-wide settings: the reference data folder when it exists, and a quiet Ray."""

from __future__ import annotations

import os
from pathlib import Path

_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
if "RAUDIT_DATA_DIR" not in os.environ and (_SHARED / "SHA256SUMS").is_file():
    os.environ["RAUDIT_DATA_DIR"] = str(_SHARED)
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Measured chunk-size rates go to a folder of this run, never the user's ~/.cache, and
# one folder per pytest-xdist worker (a worker inherits the controller's environment, and
# tests that read the rate cache must not see another worker's rates). The folder goes
# when the process ends.
if "RAUDIT_CACHE_DIR" not in os.environ or (os.environ.get("PYTEST_XDIST_WORKER")
                                            and os.environ.get("_RAUDIT_TEST_CACHE")):
    import atexit
    import shutil
    import tempfile

    os.environ["RAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="raudit-test-cache-")
    os.environ["_RAUDIT_TEST_CACHE"] = "1"
    atexit.register(shutil.rmtree, os.environ["RAUDIT_CACHE_DIR"], ignore_errors=True)

import torch  # noqa: E402

# Tiny networks on a 2-core machine: intra-op threads only add contention.
torch.set_num_threads(1)

import pytest  # noqa: E402


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under ``-n 2 --dist loadgroup`` (the README's test command) every test that starts
    Ray runs on one worker, one after another: a second Ray instance beside the first
    only adds load on a 2-core machine, and the cluster tests kill nodes by process."""
    for item in items:
        if item.get_closest_marker("ray") or item.get_closest_marker("cluster"):
            item.add_marker(pytest.mark.xdist_group("ray"))


def pytest_runtest_setup(item):
    """An xdist worker that runs a test outside the Ray group lowers its priority below
    Ray's actors (which Ray starts at nice 15): on 2 cores it then fills the time the Ray
    tests spend waiting instead of starving their actors (measured: the multi-node tests ran
    2-3x longer beside a worker at nice 0). Ray's group is the largest work unit, so
    loadgroup hands it out first, and its worker reaches other tests only after it."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not item.get_closest_marker("xdist_group"):
        current = os.nice(0)
        if current < 19:
            os.nice(19 - current)


@pytest.fixture
def kill_actor_after_first_part(monkeypatch):
    """Kill one chunk actor's process as soon as the first shadow part is on disk; the
    list it returns holds the killed pid (empty if no actor was found)."""
    psutil = pytest.importorskip("psutil")
    from raudit.results import store as store_mod

    real_append, killed = store_mod.ResultStore.append, []

    def append_then_kill(self, table, rows):
        path = real_append(self, table, rows)
        if table == "shadow" and not killed:
            # this run's actors only (the local Ray it started is its descendant): on a
            # shared machine another run's actors are not this test's to kill
            for p in psutil.Process().children(recursive=True):
                try:
                    cmdline = p.cmdline()
                except psutil.Error:
                    continue
                if any("ChunkActor" in part for part in cmdline):
                    p.kill()
                    killed.append(p.pid)
                    break
        return path

    monkeypatch.setattr(store_mod.ResultStore, "append", append_then_kill)
    return killed
