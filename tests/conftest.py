"""Suite-wide settings: the reference data folder when it exists, and a quiet Ray."""

from __future__ import annotations

import os
import tempfile
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

    os.environ["RAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="raudit-test-cache-")
    os.environ["_RAUDIT_TEST_CACHE"] = "1"
    atexit.register(shutil.rmtree, os.environ["RAUDIT_CACHE_DIR"], ignore_errors=True)

import torch  # noqa: E402

# Tiny networks on a 2-core machine: intra-op threads only add contention.
torch.set_num_threads(1)

import pytest  # noqa: E402
from xdist_wind_down import pytest_sessionfinish  # noqa: E402,F401 - a hook: see its module


# -------------------------------------------- xdist workers, one of them for the Ray tests
#
# The README's test command runs the suite on three workers (`-n 3 --dist loadgroup`) on a
# 2-core machine. Every test that starts Ray (marked `ray` or `cluster`) runs on ONE worker,
# one after another, and first: a second Ray instance beside the first only adds load, the
# cluster tests kill nodes by process, and the Ray tests are the longest chain, though a
# light one for their worker (it mostly waits on Ray's processes: measured 37 CPU-s in its
# first 12 minutes). The two other workers run everything else at nice 19, below Ray's
# actors (nice 15), so they fill both cores without starving the actors (beside a worker at
# nice 0 the multi-node tests took 2-3x longer).
#
# xdist's own `xdist_group` mark cannot do the grouping under pytest 9.2 (xdist 3.8 renames
# the item's `_nodeid`, which pytest 9 no longer reads), so the workers write the ids of
# their Ray tests to a file and the controller's scheduler reads them.
_RAY_IDS = os.environ.setdefault(
    "_RAUDIT_TEST_RAY_IDS", os.path.join(tempfile.gettempdir(), f"raudit-ray-ids-{os.getpid()}"))


def _starts_ray(item) -> bool:
    return bool(item.get_closest_marker("ray") or item.get_closest_marker("cluster"))


def pytest_collection_modifyitems(config, items):
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:  # one file per worker: no two processes write the same file
        tmp = f"{_RAY_IDS}.{worker}.tmp"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(f"{item.nodeid}\n" for item in items if _starts_ray(item))
        os.replace(tmp, f"{_RAY_IDS}.{worker}")


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    import glob

    from xdist.scheduler import LoadScopeScheduling

    class RayTogether(LoadScopeScheduling):
        """One work unit of every Ray test (the largest unit, so handed out first), every
        other test a unit of its own: xdist's loadgroup with the group read from the file."""

        ray_ids: set[str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.ray_ids is None:  # called after every worker has collected
                self.ray_ids = set()
                for path in glob.glob(f"{_RAY_IDS}.gw*"):
                    if not path.endswith(".tmp"):
                        with open(path, encoding="utf-8") as f:
                            self.ray_ids.update(line.rstrip("\n") for line in f)
                        os.remove(path)
            return "ray" if nodeid in self.ray_ids else nodeid

    return RayTogether(config, log)


def pytest_runtest_setup(item):
    """An xdist worker lowers its priority to nice 19 at its first test outside the Ray
    group (the Ray group's worker reaches other tests only after the group)."""
    if os.environ.get("PYTEST_XDIST_WORKER") and not _starts_ray(item):
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
