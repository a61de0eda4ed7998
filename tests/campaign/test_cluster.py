"""cluster/*.yaml pass Ray's own cluster-config validation, offline (no credentials), and
keep the dashboard and GCS off the internet."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytest.importorskip("jsonschema")
commands = pytest.importorskip("ray.autoscaler._private.commands")
util = pytest.importorskip("ray.autoscaler._private.util")

ROOT = Path(__file__).resolve().parents[2] / "cluster"


def _validated(config: dict) -> dict:
    filled = commands.prepare_config(copy.deepcopy(config))  # Ray's defaults, no cloud call
    util.validate_config(filled)
    return filled


@pytest.mark.parametrize("name", ["aws.yaml", "local.yaml"])
def test_cluster_file_is_valid_and_private(name):
    config = yaml.safe_load((ROOT / name).read_text())
    _validated(config)
    head = " ".join(config["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head  # the dashboard / job server: tunnel only
    assert any("constraints.txt" in c for c in config["setup_commands"])  # pinned versions
    bad = {**config, "max_workerz": 3}
    with pytest.raises(Exception, match="max_workerz"):
        _validated(bad)


def test_aws_has_cpu_and_gpu_workers_and_only_ssh_inbound():
    config = yaml.safe_load((ROOT / "aws.yaml").read_text())
    types = config["available_node_types"]
    assert types[config["head_node_type"]]["resources"] == {"CPU": 0}  # the driver only
    assert types["gpu"]["resources"]["GPU"] >= 1 and "GPU" not in types["cpu"]["resources"]
    assert all(t.get("max_workers", 0) <= config["max_workers"] for t in types.values())
    rules = config["provider"]["security_group"]["IpPermissions"]
    assert [(r["FromPort"], r["ToPort"]) for r in rules] == [(22, 22)]
    assert all(ip["CidrIp"] != "0.0.0.0/0" for r in rules for ip in r["IpRanges"])
