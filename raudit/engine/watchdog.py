"""Ray's processes of a local run end with its driver, however the driver ends.

Ray ties its GCS server and raylet to the driver (Linux's parent-death signal), but the
raylet's children, the dashboard and runtime-env agents, notice the raylet's death only
by polling and then try to report it to the GCS that died with it: after a SIGKILL of
the driver they lived on, listening, for 20 to 60 s (measured, issue 46).

So a local start marks the environment that every process Ray starts inherits
(``RAUDIT_RAY_RUN=<driver pid>-<nonce>``) and starts this file as a small watchdog
process; once Ray is up the driver tells it the session folder (:func:`watch`). The
watchdog waits on a pipe from the driver and on the driver's process, and when the
driver ends (a normal end, an exception, SIGKILL) it kills every process that carries
the mark or holds a file open in the session folder (a process title set by Ray can
overwrite what ``/proc/PID/environ`` shows: measured, the agents lost their mark in 2
of 6 runs; their log files stay open). The pipe alone is not enough: a child the driver forked without exec (a
library's helper) keeps its end open after the driver died (measured: 2 of 4 SIGKILLs),
so the driver's process (its pid and start time) is checked twice a second as well.

Run as a script (stdlib only, no site packages: it starts in ~20 ms and imports nothing
of raudit or Ray).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

MARK = "RAUDIT_RAY_RUN"


def start() -> subprocess.Popen[bytes]:
    """Mark this process's environment for the Ray processes about to start and start the
    watchdog that kills them when this process ends (:func:`stop` ends it early)."""
    mark = f"{os.getpid()}-{uuid.uuid4().hex[:12]}"
    env = {k: v for k, v in os.environ.items() if k != MARK}
    proc = subprocess.Popen([sys.executable, "-I", "-S", os.path.abspath(__file__), mark],
                            stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    os.environ[MARK] = mark
    return proc


def watch(proc: subprocess.Popen[bytes], session_dir: str) -> None:
    """Tell the watchdog the session folder of the instance just started."""
    try:
        assert proc.stdin is not None
        proc.stdin.write(os.path.abspath(session_dir).encode() + b"\n")
        proc.stdin.flush()
    except (OSError, AssertionError):
        pass


def stop(proc: subprocess.Popen[bytes] | None) -> None:
    """After ``ray.shutdown()``: let the watchdog kill what outlived it, and unmark."""
    os.environ.pop(MARK, None)
    if proc is None:
        return
    try:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        proc.kill()


def _holds(pid: str, folders: list[str]) -> bool:
    """Whether process ``pid`` has a file open under one of ``folders``."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if any(target.startswith(folder + os.sep) for folder in folders):
            return True
    return False


def _marked(mark: str, folders: list[str]) -> list[int]:
    needle = f"{MARK}={mark}".encode()
    found, spared = [], {os.getpid(), int(mark.split("-")[0])}  # this one, and the driver
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in spared:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                marked = needle in fh.read().split(b"\0")
        except OSError:  # gone meanwhile, or not ours
            marked = False
        if marked or (folders and _holds(name, folders)):
            found.append(int(name))
    return found


def reap(mark: str, folders: list[str]) -> None:
    """SIGKILL every process carrying ``mark`` or holding a file in ``folders`` (the
    instance's session folders), until none is left (a dying raylet may start one more
    worker meanwhile)."""
    for _ in range(20):
        pids = _marked(mark, folders)
        if not pids:
            return
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        time.sleep(0.1)


def _started(pid: int) -> str | None:
    """The start time of process ``pid`` (None if there is none): a pid with another start
    time is another process that reused the number."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else fields[19]


def main(argv: list[str]) -> None:
    import select

    mark = argv[1]
    driver = int(mark.split("-")[0])
    born = _started(driver)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C is the driver's to handle
    fd, said = sys.stdin.fileno(), b""
    while born is not None and _started(driver) == born:
        readable, _, _ = select.select([fd], [], [], 0.5)
        if readable:
            chunk = os.read(fd, 4096)
            if not chunk:
                break  # the driver closed the pipe (stop(), or it ended)
            said += chunk
    folders = [line.decode(errors="replace") for line in said.splitlines() if line.strip()]
    reap(mark, folders)


if __name__ == "__main__":
    main(sys.argv)
