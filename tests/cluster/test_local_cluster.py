"""The test cluster's own start-up (tests/cluster/local_cluster.py): ports that no other node
and no outgoing connection holds, a node that does not come up said with its logs and
started once more, and a start that fails twice still failing.

Once, on a fresh-clone CI run, every test of test_multinode.py errored at set-up with "the
local cluster did not reach 3 nodes" and the logs went with the temp folder; these check
the three things that would have told why and got past a transient cause.
"""

from __future__ import annotations

import shutil
import socket
import stat
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import local_cluster as lc  # noqa: E402


def test_port_block_is_free_private_and_below_the_ephemeral_range():
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    first = lc.port_block(lc.PORTS_PER_NODE, set())
    second = lc.port_block(lc.PORTS_PER_NODE, set(first))
    for block in (first, second):
        assert block == list(range(block[0], block[0] + lc.PORTS_PER_NODE))
        assert 20000 <= block[0] and block[-1] < max(low, 20000 + lc.PORTS_PER_NODE)
    assert not set(first) & set(second)
    with socket.socket() as held:  # a port something listens on is never handed out
        held.bind(("", first[0]))
        held.listen()
        assert not lc._bindable(first[0])
        again = lc.port_block(lc.PORTS_PER_NODE, set())
        assert first[0] not in again


def _fake_ray(folder: Path, body: str) -> str:
    """A `ray` executable for the cluster's nodes: ``body`` is a shell script."""
    path = folder / "ray"
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_a_node_that_never_starts_fails_fast_with_its_log_after_one_retry(tmp_path,
                                                                          monkeypatch, capsys):
    pytest.importorskip("ray")
    monkeypatch.setattr(lc, "RAY", _fake_ray(tmp_path, "echo 'fake ray: bind failed'\nexit 7\n"))
    c = lc.LocalCluster(workers=1)
    try:
        with pytest.raises(lc.NodeStartError) as err:
            c.start()
    finally:
        c.stop()
    text = str(err.value)
    # not the 180 s timeout: the exited start ends the wait
    assert "head's `ray start` exited with 7" in text and "second attempt" in text
    assert "fake ray: bind failed" in text  # the start log's tail, in the error itself
    assert "retrying once with fresh ports" in capsys.readouterr().err
    kept = sorted(p.name for p in c.kept)
    assert kept == ["attempt-1", "attempt-2"]
    for folder in c.kept:  # kept after stop() deleted the cluster's temp dir
        assert "fake ray: bind failed" in (folder / "head" / "start.log").read_text()
    assert not c.root.exists()
    shutil.rmtree(c.kept[0].parent)


@pytest.mark.slow
@pytest.mark.cluster
def test_a_transient_start_failure_is_retried_once_and_the_cluster_comes_up(tmp_path,
                                                                             monkeypatch):
    pytest.importorskip("ray")
    marker = tmp_path / "failed-once"
    body = (f'if [ ! -e {marker} ]; then touch {marker}; echo "transient"; exit 1; fi\n'
            f'exec {lc.RAY} "$@"\n')
    monkeypatch.setattr(lc, "RAY", _fake_ray(tmp_path, body))
    c = lc.LocalCluster(workers=0)
    try:
        c.start()
        assert len(c.alive_nodes()) == 1
        assert [p.name for p in c.kept] == ["attempt-1"]
    finally:
        c.stop()
    assert "transient" in (c.kept[0] / "head" / "start.log").read_text()
    shutil.rmtree(c.kept[0].parent)
