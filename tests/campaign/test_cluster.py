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


def test_aws_has_cpu_and_gpu_workers_in_a_user_made_security_group():
    config = yaml.safe_load((ROOT / "aws.yaml").read_text())
    types = config["available_node_types"]
    assert types[config["head_node_type"]]["resources"] == {"CPU": 0}  # the driver only
    assert types["gpu"]["resources"]["GPU"] >= 1 and "GPU" not in types["cpu"]["resources"]
    assert all(t.get("max_workers", 0) <= config["max_workers"] for t in types.values())
    # every node type names its group: Ray then creates none (see the test below)
    assert all(t["node_config"].get("SecurityGroupIds") for t in types.values())
    assert "security_group" not in config["provider"]  # Ray's own group is never made


# -- Ray's AWS bootstrap with the AWS calls stubbed ---------------------------------------


class _FakeGroup:
    def __init__(self, world, gid, name, vpc):
        self.world, self.id, self.group_id, self.group_name, self.vpc_id = world, gid, gid, name, vpc
        self.ip_permissions: list = []

    def authorize_ingress(self, IpPermissions):  # noqa: N803 - boto3's name
        self.world.ingress += IpPermissions
        self.ip_permissions += IpPermissions


class _Collection:
    def __init__(self, items, key):
        self.items, self.key = items, key

    def all(self):
        return list(self.items())

    def filter(self, Filters):  # noqa: N803 - boto3's name
        wanted = {f["Name"]: set(f["Values"]) for f in Filters}
        return [x for x in self.items() if all(self.key(x, k) in v for k, v in wanted.items())]


class _FakeEC2:
    """Just enough of boto3's EC2 resource for Ray's subnet and security-group steps:
    one public subnet in one VPC, the groups that exist, and a client that creates one."""

    def __init__(self, existing: list[str]):
        self.ingress: list[dict] = []
        self.created: list[str] = []
        subnet = type("Subnet", (), dict(subnet_id="subnet-1", id="subnet-1", vpc_id="vpc-1",
                                         availability_zone="us-east-1a", state="available",
                                         map_public_ip_on_launch=True))
        self._subnets = [subnet()]
        self._groups = [_FakeGroup(self, gid, "raudit-cluster", "vpc-1") for gid in existing]
        self.subnets = _Collection(lambda: self._subnets,
                                   lambda s, k: {"subnet-id": s.subnet_id}.get(k))
        self.security_groups = _Collection(
            lambda: self._groups, lambda g, k: {"group-id": g.id, "vpc-id": g.vpc_id}.get(k))
        world = self

        class Client:
            def create_security_group(self, GroupName, VpcId, **kw):  # noqa: N803
                world.created.append(GroupName)
                world._groups.append(_FakeGroup(world, f"sg-new{len(world.created)}",
                                                GroupName, VpcId))

        self.meta = type("Meta", (), {"client": Client()})()


def _aws_module(monkeypatch):
    """Ray's AWS bootstrap module; where boto3 is not installed (CI installs .[test] only),
    with stand-in boto3/botocore modules: every AWS call it makes is stubbed anyway."""
    import importlib
    import sys
    import types

    try:
        import boto3  # noqa: F401
    except ImportError:
        class ClientError(Exception):
            pass

        mods = {name: types.ModuleType(name) for name in (
            "boto3", "boto3.exceptions", "boto3.resources", "boto3.resources.base",
            "botocore", "botocore.exceptions", "botocore.client", "botocore.config")}
        mods["boto3"].__version__ = "1.34.0"
        mods["boto3.exceptions"].ResourceNotExistsError = type("ResourceNotExistsError",
                                                               (Exception,), {})
        mods["boto3.resources.base"].ServiceResource = object
        mods["botocore.exceptions"].ClientError = ClientError
        mods["botocore.client"].BaseClient = object
        mods["botocore.config"].Config = dict
        mods["boto3"].exceptions, mods["botocore"].exceptions = (mods["boto3.exceptions"],
                                                                 mods["botocore.exceptions"])
        for name, mod in mods.items():
            monkeypatch.setitem(sys.modules, name, mod)
        for name in [m for m in sys.modules if m.startswith("ray.autoscaler._private.aws")]:
            monkeypatch.delitem(sys.modules, name)
    return importlib.import_module("ray.autoscaler._private.aws.config")


def _bootstrap(config: dict, monkeypatch) -> tuple[dict, _FakeEC2]:
    aws = _aws_module(monkeypatch)
    ids = {g for t in config["available_node_types"].values()
           for g in t["node_config"].get("SecurityGroupIds", [])}
    ec2 = _FakeEC2(sorted(ids))
    monkeypatch.setattr(aws, "_resource", lambda name, cfg: ec2)
    aws._get_subnets_or_die.cache_clear()
    # IAM and key pairs are other AWS calls (and the key step writes ~/.ssh): not ours
    monkeypatch.setattr(aws, "_configure_iam_role", lambda cfg: cfg)
    monkeypatch.setattr(aws, "_configure_key_pair", lambda cfg: {
        **cfg, "auth": {**cfg["auth"], "ssh_private_key": "~/.ssh/raudit.pem"}})
    return aws.bootstrap_aws(commands.prepare_config(copy.deepcopy(config))), ec2


def _world_open(rules: list[dict]) -> list[dict]:
    return [r for r in rules
            if any(ip.get("CidrIp") == "0.0.0.0/0" for ip in r.get("IpRanges", []))
            or any(ip.get("CidrIpv6") == "::/0" for ip in r.get("Ipv6Ranges", []))]


def test_aws_bootstrap_opens_nothing_to_the_world(monkeypatch):
    config = yaml.safe_load((ROOT / "aws.yaml").read_text())
    booted, ec2 = _bootstrap(config, monkeypatch)
    assert ec2.created == [] and ec2.ingress == []  # no group made, no rule added
    assert _world_open(ec2.ingress) == []
    for t in booted["available_node_types"].values():
        assert t["node_config"]["SecurityGroupIds"] == ["sg-REPLACE-raudit-cluster"]


def test_without_our_groups_ray_would_open_ssh_to_the_world(monkeypatch):
    # The control: Ray's default group, even with a narrow `security_group` rule, adds
    # SSH from 0.0.0.0/0 -- the reason aws.yaml names its own group.
    config = yaml.safe_load((ROOT / "aws.yaml").read_text())
    for t in config["available_node_types"].values():
        t["node_config"].pop("SecurityGroupIds")
    config["provider"]["security_group"] = {"GroupName": "raudit-ssh-only", "IpPermissions": [
        {"FromPort": 22, "ToPort": 22, "IpProtocol": "tcp",
         "IpRanges": [{"CidrIp": "203.0.113.7/32"}]}]}
    _, ec2 = _bootstrap(config, monkeypatch)
    assert ec2.created == ["raudit-ssh-only"]
    assert [(r["FromPort"], r["IpRanges"]) for r in _world_open(ec2.ingress)] == [
        (22, [{"CidrIp": "0.0.0.0/0"}])]


# -- KubeRay ------------------------------------------------------------------------------
# No KubeRay CRD schema ships in a Python package; the RayCluster is checked by its fields
# and by Ray's own reading of it (the autoscaler's translation of a RayCluster into node
# types, which runs Ray's config schema).


def _kuberay() -> dict:
    docs = list(yaml.safe_load_all((ROOT / "kuberay.yaml").read_text()))
    return {d["kind"]: d for d in docs}


def test_kuberay_raycluster_fields_and_ray_reads_it():
    rc = _kuberay()["RayCluster"]
    assert rc["apiVersion"] == "ray.io/v1"
    pinned = next(line.split("==")[1] for line in (ROOT.parent / "constraints.txt")
                  .read_text().splitlines() if line.startswith("ray=="))
    assert rc["spec"]["rayVersion"] == pinned
    head = rc["spec"]["headGroupSpec"]
    assert head["rayStartParams"]["num-cpus"] == "0"  # the driver only
    assert head.get("serviceType", "ClusterIP") == "ClusterIP"  # nothing outside the cluster
    head_env = {e["name"]: e["value"] for e in head["template"]["spec"]["containers"][0]["env"]}
    assert "RAUDIT_DATA_DIR" in head_env and int(head_env["RAUDIT_NODE_WAIT_S"]) >= 300
    groups = {g["groupName"]: g for g in rc["spec"]["workerGroupSpecs"]}
    assert set(groups) == {"cpu", "gpu"}
    for g in groups.values():
        assert g["minReplicas"] <= g["replicas"] <= g["maxReplicas"]
        (c,) = g["template"]["spec"]["containers"]
        assert not c.get("env")  # workers get no data dir: the driver ships the tables
        assert c["image"] == head["template"]["spec"]["containers"][0]["image"]
        assert not c["image"].endswith(":latest")
    gpu = groups["gpu"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert gpu["nvidia.com/gpu"] == "1"
    kr = pytest.importorskip("ray.autoscaler._private.kuberay.autoscaling_config")
    derived = kr._derive_autoscaling_config_from_ray_cr(copy.deepcopy(rc))  # validates it too
    types = derived["available_node_types"]
    assert types["headgroup"]["resources"]["CPU"] == 0
    assert types["cpu"]["resources"]["CPU"] == 16 and types["cpu"]["max_workers"] == 16
    assert types["gpu"]["resources"]["GPU"] == 1


def test_kuberay_rayjob_runs_a_campaign_into_the_runs_volume():
    docs = _kuberay()
    job, rc = docs["RayJob"], docs["RayCluster"]
    assert job["apiVersion"] == "ray.io/v1"
    assert job["spec"]["clusterSelector"] == {"ray.io/cluster": rc["metadata"]["name"]}
    argv = job["spec"]["entrypoint"].split()
    assert argv[:2] == ["raudit", "campaign"]
    config = argv[2].removeprefix("/home/ray/raudit/")
    assert (ROOT.parent / config).is_file()  # a campaign that exists in the repository
    out = argv[argv.index("--out") + 1]
    head = rc["spec"]["headGroupSpec"]["template"]["spec"]["containers"][0]
    runs = next(m["mountPath"] for m in head["volumeMounts"] if m["name"] == "runs")
    assert out.startswith(runs + "/")  # results land on the persistent volume
