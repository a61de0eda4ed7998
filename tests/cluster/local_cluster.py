"""A real multi-node Ray cluster on this machine: a head and worker nodes, each its own
`ray start --block` process (own process group, temp dir, ports), for tests.

The head holds no CPU (like cluster/aws.yaml: it runs the driver only); each worker
node holds ``num_cpus=1``, one of them tagged with a custom resource ``cpu_node``.
Worker nodes start in an empty folder WITHOUT ``RAUDIT_DATA_DIR``: whatever a chunk
needs from the driver (the data tables) must travel through Ray. They get the code
(PYTHONPATH), as an installed package would be on a real node.

Nothing here calls ``ray stop``: it stops every Ray process of the user on the
machine (other people's included). Each node is stopped by its own process group, and
stray processes are found by this cluster's unique temp dir in their command line.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pids_mentioning(text: str) -> list[int]:
    """Processes whose command line contains ``text`` (this cluster's temp dir)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        with contextlib.suppress(OSError):
            if text.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
    return found


def with_descendants(pids: list[int]) -> list[int]:
    """``pids`` and every process below them (Ray's workers run in their own groups)."""
    parent: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = (entry / "stat").read_text()
                parent[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    found, todo = set(), list(pids)
    while todo:
        pid = todo.pop()
        if pid not in found:
            found.add(pid)
            todo += [child for child, ppid in parent.items() if ppid == pid]
    return sorted(found)


class LocalCluster:
    def __init__(self, workers: int = 2, dashboard: bool = False):
        # Short: Ray's unix sockets live under the temp dir (108-byte path limit).
        self.root = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp"))
        token = self.root / "token"
        token.write_text(secrets.token_hex(32))
        self.auth = {"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN_PATH": str(token)}
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.procs: dict[str, subprocess.Popen] = {}
        self.n_workers = workers
        # `ray job submit` goes through the dashboard's job server (needs ray[default])
        self.dashboard_port = free_port() if dashboard else None
        self.dashboard_url = f"http://127.0.0.1:{self.dashboard_port}" if dashboard else None

    # -- environment ---------------------------------------------------------------------
    def node_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("RAY_", "RAUDIT_")) and k != "PYTHONPATH"}
        # the code as installed on every node: this checkout first, then whatever the
        # test process was given (e.g. a folder with ray[default]'s extras)
        paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
        env.update(self.auth, PYTHONPATH=os.pathsep.join(dict.fromkeys(paths)),
                   OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0")
        return env

    def driver_env(self, data_dir: str | None) -> dict[str, str]:
        env = self.node_env()
        env["RAY_ADDRESS"] = self.address
        env["RAUDIT_HEARTBEAT_S"] = "2"
        env["RAUDIT_NODE_WAIT_S"] = "10"
        if data_dir:
            env["RAUDIT_DATA_DIR"] = data_dir
        return env

    # -- nodes ---------------------------------------------------------------------------
    def _ports(self) -> list[str]:
        lo = free_port()
        return [f"--node-manager-port={free_port()}", f"--object-manager-port={free_port()}",
                f"--runtime-env-agent-port={free_port()}",
                f"--dashboard-agent-listen-port={free_port()}",
                f"--dashboard-agent-grpc-port={free_port()}",
                f"--metrics-export-port={free_port()}",
                f"--min-worker-port={lo}", f"--max-worker-port={lo + 40}"]

    def _start(self, name: str, args: list[str]) -> None:
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        log = open(folder / "start.log", "ab")
        self.procs[name] = subprocess.Popen(
            [RAY, "start", "--block", "--disable-usage-stats", f"--temp-dir={folder}",
             *self._ports(), *args],
            cwd=folder, env=self.node_env(), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def start(self) -> "LocalCluster":
        dash = (["--include-dashboard=true", "--dashboard-host=127.0.0.1",
                 f"--dashboard-port={self.dashboard_port}"] if self.dashboard_port
                else ["--include-dashboard=false"])
        # The GCS marks a silent node dead after ~3 s instead of Ray's default ~15-30 s,
        # so that a killed raylet is noticed while the tiny campaign still runs.
        health = json.dumps({"health_check_period_ms": 1000, "health_check_timeout_ms": 1000,
                             "health_check_failure_threshold": 3})
        self._start("head", ["--head", f"--port={self.port}", "--num-cpus=0",
                             f"--system-config={health}", *dash])
        self.wait_nodes(1)
        for i in range(1, self.n_workers + 1):
            self.start_worker(i)
        self.wait_nodes(1 + self.n_workers)
        return self

    def start_worker(self, i: int) -> None:
        extra = ['--resources={"cpu_node": 1}'] if i == 1 else []
        self._start(f"w{i}", [f"--address={self.address}", "--num-cpus=1", *extra])

    def alive_nodes(self) -> list[dict]:
        code = ("import ray, json; ray.init(address='%s', log_to_driver=False); "
                "print(json.dumps([{'cpu': n['Resources'].get('CPU', 0), 'alive': n['Alive']} "
                "for n in ray.nodes()]))" % self.address)
        out = subprocess.run([sys.executable, "-c", code], env=self.node_env(),
                             capture_output=True, text=True, timeout=120)
        if out.returncode:
            return []
        return [n for n in json.loads(out.stdout.strip().splitlines()[-1]) if n["alive"]]

    def wait_nodes(self, n: int, timeout: float = 180) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if len(self.alive_nodes()) >= n:
                return
            time.sleep(2)
        raise RuntimeError(f"the local cluster did not reach {n} nodes; see {self.root}/*/start.log")

    def ensure_workers(self) -> None:
        """Restart worker nodes a test killed."""
        for i in range(1, self.n_workers + 1):
            name = f"w{i}"
            if self.procs.get(name) is None or self.procs[name].poll() is not None:
                self.kill_node(name)
                self.start_worker(i)
        self.wait_nodes(1 + self.n_workers)

    # -- failures ------------------------------------------------------------------------
    def raylet_pid(self, name: str) -> int:
        folder = str(self.root / name)
        for pid in pids_mentioning(folder):
            with contextlib.suppress(OSError):
                if b"raylet" in Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[0]:
                    return pid
        raise RuntimeError(f"no raylet for node {name}")

    def kill_raylet(self, name: str) -> None:
        os.kill(self.raylet_pid(name), signal.SIGKILL)

    def kill_node(self, name: str) -> None:
        """SIGKILL every process of node ``name``: its `ray start`, the processes that
        mention its temp dir, and all their descendants (the chunk actors)."""
        proc = self.procs.get(name)
        roots = pids_mentioning(str(self.root / name)) + ([proc.pid] if proc else [])
        for pid in with_descendants(roots):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=10)

    def stop(self) -> None:
        for name in list(self.procs)[::-1]:
            self.kill_node(name)
        for pid in with_descendants(pids_mentioning(str(self.root))):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)
