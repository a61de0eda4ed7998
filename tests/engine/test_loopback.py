"""A local Ray run listens on loopback only and leaves nothing behind (issue 46.1).

Each test runs `raudit audit --backend ray` as a child process and reads the socket table
(/proc/net/tcp{,6}) for the sockets of that child's process tree only: another Ray
instance on the machine (a campaign, another test) is not this run's. Before the fix the
GCS server, the raylet, the driver and the actors listened on every interface and the
runtime-env agent on the host's external address; after a SIGKILL of the driver the
dashboard and runtime-env agents lived on, listening, for 20-60 s.
"""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ray, pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")]

ROOT = Path(__file__).resolve().parents[2]


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii", errors="replace") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(name))
    return kids


def tree(root: int) -> set[int]:
    """``root`` and every process below it."""
    kids, out, todo = _children(), set(), [root]
    while todo:
        pid = todo.pop()
        out.add(pid)
        todo += kids.get(pid, [])
    return out


def _listening_sockets() -> dict[int, str]:
    """Socket inode -> the address it listens on, for every listening TCP socket."""
    found = {}
    for family, path in ((socket.AF_INET, "/proc/net/tcp"), (socket.AF_INET6, "/proc/net/tcp6")):
        with open(path, encoding="ascii") as fh:
            next(fh)
            for line in fh:
                cols = line.split()
                if cols[3] != "0A":  # TCP_LISTEN
                    continue
                raw = bytes.fromhex(cols[1].split(":")[0])
                raw = b"".join(raw[i:i + 4][::-1] for i in range(0, len(raw), 4))
                found[int(cols[9])] = socket.inet_ntop(family, raw)
    return found


def listeners(pids: set[int]) -> list[tuple[int, str]]:
    """(pid, address) of every listening socket that one of ``pids`` holds."""
    socks, out = _listening_sockets(), []
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:[") and int(link[8:-1]) in socks:
                out.append((pid, socks[int(link[8:-1])]))
    return out


def loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address)
    ip = getattr(ip, "ipv4_mapped", None) or ip  # ::ffff:127.0.0.1 is 127.0.0.1
    return ip.is_loopback


def _audit(tmp_path: Path, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    env.pop("RAY_ADDRESS", None)
    return subprocess.Popen(
        [sys.executable, "-m", "raudit.cli.app", "audit", "--attack", "querybased",
         "--workers", "2", "--backend", "ray", "--out", str(tmp_path / "out"), *args],
        env=env, stdout=subprocess.DEVNULL, stderr=open(tmp_path / "stderr", "w"))


def _alive(pids: set[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as fh:
                if fh.read().rsplit(")", 1)[1].split()[0] != "Z":
                    out.append(pid)
        except OSError:
            continue
    return out


def test_a_local_ray_audit_listens_on_loopback_only(tmp_path):
    run = _audit(tmp_path, "--impl", "identity", "-S", "10")
    seen: set[tuple[int, str]] = set()
    deadline = time.time() + 300
    while run.poll() is None and time.time() < deadline:
        seen |= set(listeners(tree(run.pid)))
        time.sleep(0.2)
    assert run.wait(timeout=60) == 0, (tmp_path / "stderr").read_text()
    # Ray's GCS server, raylet, driver and actors each listen: the check is not vacuous
    assert len({pid for pid, _ in seen}) >= 3, seen
    assert [s for s in seen if not loopback(s[1])] == []


def test_nothing_of_a_local_run_outlives_a_sigkill_of_its_driver(tmp_path):
    run = _audit(tmp_path, "--impl", "paper", "-S", "100", "--max-iter", "30")
    pids: set[int] = set()
    deadline = time.time() + 300
    while run.poll() is None and time.time() < deadline:
        pids |= tree(run.pid)
        if len({pid for pid, _ in listeners(pids)}) >= 5:  # GCS, raylet, driver, actors
            break
        time.sleep(0.2)
    assert run.poll() is None, "the audit ended before Ray was up: make it longer"
    time.sleep(1)
    pids |= tree(run.pid)
    run.send_signal(signal.SIGKILL)
    run.wait()
    t0 = time.time()
    while _alive(pids - {run.pid}) and time.time() - t0 < 5:
        time.sleep(0.2)
    left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes()[:60] for pid in _alive(pids)}
    assert left == {}, left
