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

A node that does not come up is said with the tail of its start log and Ray's logs (kept
in a ``rc-failed-*`` folder beside the temp dir), and started once more with fresh
ports: see :meth:`LocalCluster.bring_up` for why a start can fail here that is no fault
of the code under test.
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
PORTS_PER_NODE = 6 + 41  # the node's own servers, then its workers' range
NODE_START_S = 180  # per attempt; the second attempt gets as long again
# Ray's default is 30 % of the memory available at the node's start: three nodes on a 24 GiB
# machine that other engineers' Ray instances share would claim ~20 GiB of /dev/shm between
# them. What the tests ship through it (the datasets, the chunks' rows) is a few MB.
OBJECT_STORE = 256 * 1024**2


class NodeStartError(RuntimeError):
    """A node of the local cluster did not come up (its `ray start` exited, or timed out)."""


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("", port))  # every interface: Ray binds the node's own IP, not 127.0.0.1
        except OSError:
            return False
    return True


def port_block(count: int, taken: set[int], tries: int = 50) -> list[int]:
    """``count`` consecutive ports that bind now, none in ``taken``, below the kernel's
    ephemeral range and above Ray's default worker ports (10002-19999).

    Why not ``bind(0)``: those ports come from the ephemeral range, which every outgoing
    connection on the machine (the other Ray instances' gRPC clients) draws from too, and
    a node's 41 worker ports after one were never checked at all; a clash kills a raylet
    at start and the node never registers.
    """
    import random

    try:
        low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    top = max(20000 + count, low) - count
    rng = random.Random()  # not seeded: parallel test sessions must not pick the same block
    for _ in range(tries):
        start = rng.randrange(20000, top)
        block = list(range(start, start + count))
        if not taken.intersection(block) and all(_bindable(p) for p in block):
            return block
    raise NodeStartError(f"no block of {count} free ports in 20000-{top + count} after {tries} tries")


def tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file ('' if there is none)."""
    with contextlib.suppress(OSError):
        text = path.read_bytes()[-20000:].decode("utf-8", "replace")
        return "\n".join(text.splitlines()[-lines:])
    return ""


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
        self.procs: dict[str, subprocess.Popen] = {}
        self.ports: dict[str, list[int]] = {}  # node -> its block (ports of no other node)
        self.n_workers = workers
        self.dashboard = dashboard
        self.kept: list[Path] = []  # log folders of failed starts, kept after stop()
        self.last_check = ""  # why the last alive_nodes() query failed, if it did
        self._address()

    def _address(self) -> None:
        """The head's GCS port (and the dashboard's): its block's first ports."""
        self.ports.pop("head", None)
        self.ports["head"] = port_block(PORTS_PER_NODE + 2, self._taken())
        self.port = self.ports["head"][-1]
        self.address = f"127.0.0.1:{self.port}"
        # `ray job submit` goes through the dashboard's job server (needs ray[default])
        self.dashboard_port = self.ports["head"][-2] if self.dashboard else None
        self.dashboard_url = (f"http://127.0.0.1:{self.dashboard_port}" if self.dashboard
                              else None)

    def _taken(self) -> set[int]:
        return {p for block in self.ports.values() for p in block}

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
    def _ports(self, name: str) -> list[str]:
        if name != "head":  # the head keeps its block: the workers know its address
            self.ports.pop(name, None)
            self.ports[name] = port_block(PORTS_PER_NODE, self._taken())
        p = self.ports[name]
        return [f"--node-manager-port={p[0]}", f"--object-manager-port={p[1]}",
                f"--runtime-env-agent-port={p[2]}", f"--dashboard-agent-listen-port={p[3]}",
                f"--dashboard-agent-grpc-port={p[4]}", f"--metrics-export-port={p[5]}",
                f"--min-worker-port={p[6]}", f"--max-worker-port={p[6] + 40}"]

    def _start(self, name: str, args: list[str]) -> None:
        folder = self.root / name
        folder.mkdir(exist_ok=True)
        log = open(folder / "start.log", "ab")
        log.write(f"--- {time.strftime('%H:%M:%S')} starting {name}\n".encode())
        log.flush()
        self.procs[name] = subprocess.Popen(
            [RAY, "start", "--block", "--disable-usage-stats", f"--temp-dir={folder}",
             f"--object-store-memory={OBJECT_STORE}", *self._ports(name), *args],
            cwd=folder, env=self.node_env(), stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True)

    def start(self) -> "LocalCluster":
        self.bring_up(["head"], 1)
        self.bring_up([f"w{i}" for i in range(1, self.n_workers + 1)], 1 + self.n_workers)
        return self

    def start_node(self, name: str) -> None:
        if name == "head":
            self.start_head()
        else:
            self.start_worker(int(name[1:]))

    def start_head(self) -> None:
        dash = (["--include-dashboard=true", "--dashboard-host=127.0.0.1",
                 f"--dashboard-port={self.dashboard_port}"] if self.dashboard_port
                else ["--include-dashboard=false"])
        # The GCS marks a silent node dead after ~3 s instead of Ray's default ~15-30 s,
        # so that a killed raylet is noticed while the tiny campaign still runs.
        health = json.dumps({"health_check_period_ms": 1000, "health_check_timeout_ms": 1000,
                             "health_check_failure_threshold": 3})
        self._start("head", ["--head", f"--port={self.port}", "--num-cpus=0",
                             f"--system-config={health}", *dash])

    def start_worker(self, i: int) -> None:
        extra = ['--resources={"cpu_node": 1}'] if i == 1 else []
        self._start(f"w{i}", [f"--address={self.address}", "--num-cpus=1", *extra])

    def bring_up(self, names: list[str], total: int) -> None:
        """Start nodes ``names`` and wait until the cluster has ``total`` alive nodes;
        a failed start is said on stderr and tried once more with fresh ports.

        Why a start fails here with nothing wrong in the code under test: a port that was
        free when chosen is taken before the raylet binds it (other engineers' Ray
        instances share this machine), or a start under load outlasts the wait. A second
        failure raises, with both attempts' logs; so does a node that never registers for
        a reason of its own (the tests that use the cluster then error, not pass).
        """
        for attempt in (1, 2):
            for name in names:
                self.start_node(name)
            try:
                self.wait_nodes(total, names)
                return
            except NodeStartError as exc:
                kept = self.keep_logs(attempt)
                if attempt == 2:
                    raise NodeStartError(f"{exc} (second attempt; logs of both kept in "
                                         f"{kept.parent})") from None
                print(f"local cluster, attempt 1: {exc}\nretrying once with fresh ports; "
                      f"logs kept in {kept}", file=sys.stderr, flush=True)
                for name in names[::-1]:
                    self.kill_node(name)
                if "head" in names:
                    self._address()

    def alive_nodes(self, watch: list[str] = (), timeout: float = 60) -> list[dict]:
        """The alive nodes, as a driver connected to the head sees them ([] when the query
        fails: why is kept in ``last_check``). A query to a head that is not up blocks
        in ray.init, so it is cut short after ``timeout`` s, or as soon as a node of
        ``watch`` exits (its `ray start` failed: the wait is over)."""
        code = ("import ray, json; ray.init(address='%s', log_to_driver=False); "
                "print(json.dumps([{'cpu': n['Resources'].get('CPU', 0), 'alive': n['Alive']} "
                "for n in ray.nodes()]))" % self.address)
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            query = subprocess.Popen([sys.executable, "-c", code], env=self.node_env(),
                                     stdout=out, stderr=err, text=True)
            end = time.monotonic() + timeout
            while query.poll() is None and time.monotonic() < end and not self._exited(watch):
                time.sleep(0.2)
            if query.poll() is None:
                query.kill()
                query.wait()
                self.last_check = (f"the node query (ray.init to the head) was cut short after "
                                   f"{timeout - max(0.0, end - time.monotonic()):.0f} s")
                return []
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        if query.returncode:  # said in the error if the cluster never comes up
            self.last_check = f"the node query exited {query.returncode}: {tail_text(stderr)}"
            return []
        self.last_check = ""
        return [n for n in json.loads(stdout.strip().splitlines()[-1]) if n["alive"]]

    def _exited(self, names) -> dict[str, int]:
        """The nodes of ``names`` whose `ray start --block` has exited, with its code."""
        return {m: self.procs[m].returncode for m in names
                if m in self.procs and self.procs[m].poll() is not None}

    def wait_nodes(self, n: int, names: list[str] | None = None,
                   timeout: float = NODE_START_S) -> None:
        """Wait for ``n`` alive nodes; a node of ``names`` (default: all) whose
        `ray start --block` exited will never register, so that ends the wait at once."""
        watch = list(self.procs) if names is None else names
        t0 = time.monotonic()
        alive: list[dict] = []
        while time.monotonic() - t0 < timeout:
            left = timeout - (time.monotonic() - t0)
            alive = self.alive_nodes(watch, timeout=max(5.0, min(60.0, left)))
            if len(alive) >= n:
                return
            if exited := self._exited(watch):
                raise NodeStartError(self._why(n, alive, t0, exited))
            time.sleep(2)
        raise NodeStartError(self._why(n, alive, t0, {}))

    def _why(self, n: int, alive: list[dict], t0: float, exited: dict[str, int]) -> str:
        said = ", ".join(f"{m}'s `ray start` exited with {code}" for m, code in exited.items())
        lines = [f"the local cluster did not reach {n} nodes ({len(alive)} alive after "
                 f"{time.monotonic() - t0:.0f} s{'; ' + said if said else ''})"]
        if self.last_check:
            lines.append(f"  {self.last_check}")
        for name in self.procs:
            lines.append(f"  {name} start.log:\n{indent(tail(self.root / name / 'start.log'))}")
            for log in ("raylet.err", "raylet.out", "gcs_server.err"):
                path = self.root / name / "session_latest" / "logs" / log
                if path.exists() and (text := tail(path, 5)):
                    lines.append(f"  {name} {log}:\n{indent(text)}")
        return "\n".join(lines)

    def keep_logs(self, attempt: int) -> Path:
        """Copy the nodes' start logs and Ray's session logs where stop() does not delete
        them (``/tmp/rc-failed-XXXX/attempt-N``); returns that folder."""
        base = self.kept[0].parent if self.kept else Path(
            tempfile.mkdtemp(prefix=self.root.name.replace("rc-", "rc-failed-"), dir="/tmp"))
        dest = base / f"attempt-{attempt}"
        for name in self.procs:
            folder = self.root / name
            with contextlib.suppress(OSError):
                (dest / name).mkdir(parents=True, exist_ok=True)
                shutil.copy2(folder / "start.log", dest / name / "start.log")
            logs = folder / "session_latest" / "logs"
            with contextlib.suppress(OSError):
                shutil.copytree(logs, dest / name / "logs", dirs_exist_ok=True,
                                ignore=shutil.ignore_patterns("*.sock", "events", "old"))
        self.kept.append(dest)
        return dest

    def ensure_workers(self) -> None:
        """Restart worker nodes a test killed."""
        dead = [f"w{i}" for i in range(1, self.n_workers + 1)
                if self.procs.get(f"w{i}") is None or self.procs[f"w{i}"].poll() is not None]
        for name in dead:
            self.kill_node(name)
        if dead:
            self.bring_up(dead, 1 + self.n_workers)
        else:
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
        """Kill every node; the temp dir goes, logs kept by keep_logs() stay."""
        for name in list(self.procs)[::-1]:
            self.kill_node(name)
        for pid in with_descendants(pids_mentioning(str(self.root))):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        shutil.rmtree(self.root, ignore_errors=True)


def indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


def tail_text(text: str, lines: int = 5) -> str:
    return " | ".join(text.strip().splitlines()[-lines:])
