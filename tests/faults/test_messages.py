"""Fault suite, promise: what raudit says about a failure names its cause: the headline
of an error survives storage, and a killed worker is blamed on memory only when the
evidence says so. Each test names the red team's defect (issue 46) it keeps from coming back."""

from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

import pytest

from raudit.audit.runner import AuditRequest
from raudit.engine.driver import EngineConfig
from raudit.errors import RauditError

FAKE = Path(__file__).parents[1] / "generators" / "fake_external.py"


def _traceback(message: str, folder: Path, depth: int = 30) -> str:
    """A real traceback of ``depth`` distinct frames (Python folds repeated ones), each
    with a long line of code, as the chunk runner's are."""
    code = "def f0(m):\n    raise ValueError(m)\n" + "".join(
        f"def f{i}(m):\n    return f{i - 1}(m)  # a long line of code, as real frames have: "
        f"spec.get(\"device\", \"cpu\")}})\n" for i in range(1, depth))
    source = folder / "frames.py"  # a file, so that the traceback shows each line
    source.write_text(code)
    scope: dict = {}
    exec(compile(code, str(source), "exec"), scope)  # noqa: S102 - the test's own code
    try:
        scope[f"f{depth - 1}"](message)
    except ValueError:
        return traceback.format_exc()
    raise AssertionError("unreachable")


def test_a_stored_traceback_keeps_its_headline(tmp_path):
    # issue 46 item 13: the last 2,000 characters of a traceback began in its middle, and
    # first_error showed a line of code
    from raudit.errors import clip_error, headline

    tb = _traceback("p: fit exited with status 1: the package is broken", tmp_path)
    assert len(tb) > 2000
    stored = clip_error(tb)
    assert len(stored) <= 2000
    assert headline(stored) == "ValueError: p: fit exited with status 1: the package is broken"


def test_headline_of_a_message_of_several_lines_is_its_first(tmp_path):
    from raudit.errors import headline

    assert headline(_traceback("the reason\nmore detail\nand more", tmp_path)) == "ValueError: the reason"
    try:
        try:
            raise KeyError("inner")
        except KeyError:
            raise RuntimeError("outer, the one that ended it") from None
    except RuntimeError:
        assert headline(traceback.format_exc()) == "RuntimeError: outer, the one that ended it"
    assert headline("DataError: said first\nTraceback ...") == "DataError: said first"


@pytest.mark.slow  # an audit whose models all fail (~15 s)
def test_a_failed_plugins_message_reaches_the_summary(tmp_path):
    # the plugin passes the probe (its first fit and sample), then every fit fails
    script = tmp_path / "p.sh"
    script.write_text('#!/bin/bash\nn=$(cat "$COUNT" 2>/dev/null || echo 0)\n'
                      'echo $((n+1)) > "$COUNT"\nif [ "$n" -ge 2 ]; then\n'
                      '  echo "the package is broken: a long reason" >&2; exit 1\nfi\n'
                      'exec "$PY" "$FAKE" "$@"\n')
    script.chmod(0o755)
    conf = tmp_path / "brk.json"
    conf.write_text(json.dumps({"command": [str(script)], "name": "brk", "env": {
        "COUNT": str(tmp_path / "count"), "PY": sys.executable, "FAKE": str(FAKE)}}))
    from raudit.runs.audit import run_audit

    with pytest.raises(RauditError) as err:
        run_audit(AuditRequest(impl=f"exec:{conf}", attack="querybased", shadow_models=5,
                               chunk_size=10), tmp_path / "out",
                  EngineConfig(backend="local", retries=0))
    assert "brk: fit exited with status 1: the package is broken: a long reason" in str(err.value)


# ---------------------------------------------- 14: a killed actor is not blamed on memory

RAY_SIGKILL = ("The actor is dead because its worker process has died. Worker exit type: "
               "UNEXPECTED_SYSTEM_EXIT Worker exit detail: Worker unexpectedly exits with a "
               "connection error code 2. End of file. There are some potential root causes. (1) "
               "The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray "
               "stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or "
               "other unexpected errors.")


class ActorDiedError(RuntimeError):
    """Stands in for Ray's (its message is what death_cause reads)."""


class OutOfMemoryError(RuntimeError):
    """Stands in for Ray's memory monitor's error."""


def test_a_killed_actor_is_blamed_on_memory_only_on_evidence(monkeypatch):
    # issue 46 item 14: every death was "Ray suspects the OOM killer", because Ray's
    # message lists the OOM killer among the possible causes of any SIGKILL
    from raudit.engine import raylog

    said = raylog.death_cause(ActorDiedError(RAY_SIGKILL))
    assert "OOM" not in said and "memory" not in said and "exited unexpectedly" in said
    monkeypatch.setattr(raylog, "oom_kills", lambda: 7)
    assert "memory" not in raylog.death_cause(ActorDiedError(RAY_SIGKILL), 7)  # no new kill
    assert "OOM killer ended 2 process(es)" in raylog.death_cause(ActorDiedError(RAY_SIGKILL), 5)
    monitor = ("Task was killed due to the node running low on memory. Memory on the node was "
               "7.6GB / 8GB (0.96), which exceeds the memory usage threshold of 0.95.")
    assert "Ray's memory monitor" in raylog.death_cause(ActorDiedError(monitor), 7)
    assert "Ray's memory monitor" in raylog.death_cause(OutOfMemoryError("x"), 7)


def test_oom_kills_reads_the_kernels_count():
    from raudit.engine import raylog

    count = raylog.oom_kills()
    assert count is None or count >= 0
