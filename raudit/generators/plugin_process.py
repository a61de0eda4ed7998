"""Run a plugin's program as its own process group, and leave nothing of it behind.

What ``exec:`` plugins need from a process runner, which ``subprocess.run`` does not give:

* the program and everything it starts form one process group (a new session), and that
  group is killed when the program ends, when its timeout passes and when raudit is
  interrupted: a script's ``sleep 300 &`` used to outlive its timeout with parent 1;
* its output is read as it comes and only the last :data:`KEPT` bytes of each stream are
  kept (the error message is at the end): 300 MB of stdout used to be held whole
  (1.33 GB peak);
* its bytes are decoded with replacement: output that is not UTF-8 made a plugin
  impossible to audit (a UnicodeDecodeError in raudit);
* the work folders (:func:`work_folder`) carry raudit's pid in their name, so the folders
  a killed raudit left in the temporary folder (with a copy of the training data) are
  removed by the next run (:func:`remove_stale`).
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

KEPT = 64 << 10  # bytes kept of each stream: the tail, where a program says what failed
PREFIX = "raudit-exec-"
_OWNER = re.compile(rf"^{PREFIX}(\d+)-")


@dataclass(frozen=True)
class Finished:
    """How the program ended: its exit status (None when its timeout killed it) and the
    tail of its stderr, decoded."""

    returncode: int | None
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.returncode is None


class _Tail(threading.Thread):
    """Reads a stream to its end, keeping the last :data:`KEPT` bytes."""

    def __init__(self, stream) -> None:
        super().__init__(daemon=True)
        self.stream, self.kept = stream, bytearray()

    def run(self) -> None:
        with self.stream:
            for block in iter(lambda: self.stream.read(1 << 16), b""):
                self.kept += block
                del self.kept[:-KEPT]

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


def cpu_seconds() -> float:
    """CPU seconds of this process and of its child processes that have ended and been
    waited for (an ``exec:`` plugin's program, run by :func:`run`). A fit's cost is both:
    ``time.process_time`` alone counts only this process, so an ``exec:`` audit whose
    program did the training was estimated at 21 s and took 3 min 58 s. Take differences."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def run(argv: list[str], *, cwd: Path, env: dict[str, str], timeout_s: float) -> Finished:
    """Run ``argv`` (no shell) in ``cwd`` as a new process group; whatever way this returns
    or raises, no process of the group is left running."""
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True, shell=False)
    readers = [_Tail(proc.stdout), _Tail(proc.stderr)]
    for r in readers:
        r.start()
    code: int | None = None
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        code = None
    finally:
        # the whole group, also after a clean exit: children it left in the background
        # (they would keep the pipes open, and run on unwatched)
        _kill_group(proc.pid)
        proc.wait()
        for r in readers:
            r.join()
    return Finished(code, readers[1].text())


def work_folder() -> tempfile.TemporaryDirectory:
    """A private temporary folder named for this process (see :func:`remove_stale`)."""
    remove_stale()
    return tempfile.TemporaryDirectory(prefix=f"{PREFIX}{os.getpid()}-")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: alive
        return True
    return True


def remove_stale(root: Path | None = None) -> list[Path]:
    """Remove the work folders of raudit processes that are gone (killed: no ``finally``
    ran), each holding a copy of a training table; returns what was removed. Only this
    user's folders, and only those named by :func:`work_folder`."""
    root = Path(root or tempfile.gettempdir())
    gone = []
    with contextlib.suppress(OSError):
        for p in root.iterdir():
            m = _OWNER.match(p.name)
            if not m or _alive(int(m.group(1))):
                continue
            with contextlib.suppress(OSError):
                if p.is_dir() and not p.is_symlink() and p.stat().st_uid == os.getuid():
                    shutil.rmtree(p)
                    gone.append(p)
    return gone
