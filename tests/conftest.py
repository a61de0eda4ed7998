"""Suite-wide settings: the reference data folder when it exists, and a quiet Ray."""

from __future__ import annotations

import os
from pathlib import Path

_SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"
if "RAUDIT_DATA_DIR" not in os.environ and (_SHARED / "SHA256SUMS").is_file():
    os.environ["RAUDIT_DATA_DIR"] = str(_SHARED)
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
# Measured chunk-size rates go to a folder of this run, never the user's ~/.cache.
# The folder goes when the run ends (it was left behind in /tmp, one per run).
if "RAUDIT_CACHE_DIR" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["RAUDIT_CACHE_DIR"] = tempfile.mkdtemp(prefix="raudit-test-cache-")
    atexit.register(shutil.rmtree, os.environ["RAUDIT_CACHE_DIR"], ignore_errors=True)

import torch  # noqa: E402

# Tiny networks on a 2-core machine: intra-op threads only add contention.
torch.set_num_threads(1)

import pytest  # noqa: E402


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
