"""raudit's own words instead of Ray's: a default audit on a fresh local Ray prints no
line of Ray's on stderr (its start-up and token-authentication lines go to the log file
under the cache), only raudit's own messages."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("ray")
pytestmark = [pytest.mark.ray, pytest.mark.slow]


def test_default_audit_on_a_fresh_local_ray_prints_no_ray_line(tmp_path):
    env = {**os.environ, "RAUDIT_CACHE_DIR": str(tmp_path / "cache"), "OMP_NUM_THREADS": "1"}
    env.pop("RAY_ADDRESS", None)  # a fresh local instance, started by the command
    r = subprocess.run([sys.executable, "-m", "raudit.cli.app", "audit", "--impl", "paper",
                        "--attack", "querybased", "-S", "10", "-o", "max_iter=2",
                        "--workers", "2", "--out", str(tmp_path / "a")],
                       capture_output=True, text=True, timeout=480, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert lines and all(ln.startswith(("raudit", "warning")) for ln in lines), lines
    log = tmp_path / "cache" / "logs" / "ray.log"
    assert "Started a local Ray instance" in log.read_text()  # routed there, not lost
