"""Ray started in the background while the driver does its own work
(raudit.engine.prestart): a session inside uses that instance (one ray.init), and the
block's end stops it, also when the block failed before any chunk ran (an audit whose
probe fails leaves no Ray and no folder behind); a campaign starts it before its probes."""

from __future__ import annotations

import os

import pytest

ray = pytest.importorskip("ray")
pytestmark = [pytest.mark.ray, pytest.mark.slow]

from raudit.engine import actors  # noqa: E402
from raudit.engine.prestart import prestart  # noqa: E402


@pytest.fixture(autouse=True)
def _own_instance():
    if ray.is_initialized() or os.environ.get("RAY_ADDRESS"):
        pytest.skip("needs a local instance started by the test")


def _count_inits(monkeypatch) -> list:
    calls = []
    real = ray.init

    def init(*args, **kwargs):
        calls.append(kwargs.get("address"))
        return real(*args, **kwargs)

    monkeypatch.setattr(ray, "init", init)
    return calls


def test_the_caller_imports_no_ray_to_prestart_it():
    # the thread imports Ray (about a second of wall time on a loaded machine), so a
    # command's own path from its input check to its first chunk does not wait for it
    import subprocess
    import sys

    code = ("import sys, raudit.cli.app, raudit.runs.audit, raudit.campaign.run, "
            "raudit.engine.driver, raudit.engine.prestart; print('ray' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_a_session_inside_uses_the_instance_started_early(monkeypatch):
    calls = _count_inits(monkeypatch)
    with prestart(1):
        with actors.session(1):
            assert ray.is_initialized()
            assert ray.get(ray.put(41)) + 1 == 42
        assert ray.is_initialized()  # the session did not stop what it did not start
        with actors.session(1):  # a second run (the calibration's, then the audit's)
            assert ray.is_initialized()
    assert calls == ["local"]
    assert not ray.is_initialized()


def test_a_block_that_fails_before_any_session_stops_ray(monkeypatch):
    calls = _count_inits(monkeypatch)
    with pytest.raises(RuntimeError, match="the probe failed"):
        with prestart(1):
            raise RuntimeError("the probe failed")
    assert calls == ["local"]  # it had started
    assert not ray.is_initialized()


def test_an_audit_whose_probe_fails_leaves_no_ray_and_no_folder(monkeypatch, tmp_path):
    from raudit.audit.guard import AuditFailed
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.runs import audit as ra

    calls = _count_inits(monkeypatch)

    def broken(game, audit_id):
        raise AuditFailed("paper failed on the audit's data before any work started")

    monkeypatch.setattr(ra, "probe", broken)
    out = tmp_path / "a"
    with pytest.raises(AuditFailed, match="before any work started"):
        ra.run_audit(AuditRequest(impl="paper", attack="querybased", dataset="worst-case",
                                  shadow_models=5, options={"max_iter": 2}), out,
                     EngineConfig(backend="ray", workers=1))
    assert calls == ["local"] and not ray.is_initialized()
    assert not out.exists()


def test_a_campaign_starts_ray_before_its_probes_and_once(monkeypatch, tmp_path):
    import textwrap

    from raudit.audit import guard
    from raudit.campaign.run import run_campaign
    from raudit.engine import prestart as pre
    from raudit.engine.driver import EngineConfig
    from raudit.runs import jobs

    calls = _count_inits(monkeypatch)
    seen = []
    real_probe = guard.probe

    def probe(game, audit_id):
        seen.append(("probe", bool(pre._early)))  # a start already under way
        return real_probe(game, audit_id)

    monkeypatch.setattr(jobs, "probe", probe)
    cfg = tmp_path / "c.yaml"
    cfg.write_text(textwrap.dedent("""\
        name: t
        jobs:
          - name: wc
            impl: paper
            attack: querybased
            dataset: worst-case
            shadow_models: 5
            max_iter: 2
        """))
    res = run_campaign(cfg, tmp_path / "c", EngineConfig(backend="ray", workers=1))
    assert res["jobs"]["wc"]["status"] == "ok"
    assert seen == [("probe", True)]
    assert calls == ["local"] and not ray.is_initialized()
