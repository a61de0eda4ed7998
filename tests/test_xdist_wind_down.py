"""An xdist worker whose last steps take longer than execnet's 5 s finishes them: before
tests/xdist_wind_down.py, execnet's SIGINT interrupted them, and where it landed in a
finaliser (torch._dynamo's) Python printed a KeyboardInterrupt traceback before the
summary of the README's test command."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")
TESTS = Path(__file__).resolve().parent

CONFTEST = """
import os, sys, time
sys.path.insert(0, {tests!r})
from xdist_wind_down import pytest_sessionfinish  # the hook under test

def pytest_unconfigure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        for _ in range(70):  # 7 s of last steps, past execnet's 5 s
            time.sleep(0.1)
        open({mark!r}, "w").write("finished")
"""


@pytest.mark.slow
def test_a_slow_worker_wind_down_is_not_interrupted(tmp_path):
    mark = tmp_path / "wound-down"
    (tmp_path / "conftest.py").write_text(CONFTEST.format(tests=str(TESTS), mark=str(mark)))
    (tmp_path / "test_one.py").write_text("def test_one():\n    pass\n")
    done = subprocess.run([sys.executable, "-m", "pytest", "-n", "1", "-q", "-p",
                           "no:cacheprovider", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert mark.read_text() == "finished", done.stdout + done.stderr
    assert "KeyboardInterrupt" not in done.stdout + done.stderr
