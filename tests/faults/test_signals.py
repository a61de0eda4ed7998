"""Fault suite, promise: every signal ends a run with the line that says how to resume,
and what finished is kept. Each test names the red team's defect (issue 46 item 14)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

RESUME = "finished results are kept; rerun the same command to resume"


def _audit(out: Path, backend: str) -> subprocess.Popen:
    argv = ["audit", "--impl", "paper", "--attack", "querybased", "-S", "40", "-M", "5",
            "--max-iter", "300", "--backend", backend, "--workers", "1", "--out", str(out)]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    return subprocess.Popen([sys.executable, "-c", "from raudit.cli.app import main; main()",
                             *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=env)


def _terminated_after_a_chunk(tmp_path: Path, backend: str) -> tuple[int, str]:
    out = tmp_path / "out"
    proc = _audit(out, backend)
    try:
        end = time.monotonic() + 400
        while not list((out / "shadow").rglob("*.parquet")) and time.monotonic() < end:
            assert proc.poll() is None, proc.communicate()[1][-3000:]
            time.sleep(0.2)
        assert list((out / "shadow").rglob("*.parquet")), "no chunk finished in time"
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return proc.returncode, err


@pytest.mark.slow  # an audit until its first chunk is stored (~30 s on a loaded machine)
def test_sigterm_on_the_local_backend_says_how_to_resume(tmp_path):
    # Python's default ended the process at once: exit -15, not a word
    code, err = _terminated_after_a_chunk(tmp_path, "local")
    assert code == 143, err[-3000:]
    assert err.strip().splitlines()[-1] == f"terminated (SIGTERM): {RESUME}", err[-3000:]


@pytest.mark.slow
@pytest.mark.ray
def test_sigterm_under_ray_ends_cleanly_and_says_how_to_resume(tmp_path):
    # Ray's handler called sys.exit: a C++ crash dump at exit (134) and no resume line
    code, err = _terminated_after_a_chunk(tmp_path, "ray")
    assert code == 143, err[-3000:]
    assert "SIGABRT" not in err and "*** " not in err, err[-3000:]
    assert err.strip().splitlines()[-1] == f"terminated (SIGTERM): {RESUME}", err[-3000:]
