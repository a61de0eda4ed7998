"""The chunk-kind contract, over every registered kind (raudit.runs.dispatch): each
names an importable plain function, the jobs wrap only registered kinds, and a spec
of an unknown kind is refused before anything runs."""

import pytest

from raudit.errors import UnknownNameError
from raudit.registry import import_path
from raudit.runs import dispatch, jobs


@pytest.fixture(params=dispatch.CHUNK_KINDS.names())
def kind(request):
    return request.param


def test_names_an_importable_function(kind):
    fn = dispatch.CHUNK_KINDS.get(kind)
    assert callable(fn) and callable(import_path(fn.path))


def test_run_spec_calls_the_function_where_it_lives_now(kind, monkeypatch):
    module, _, attr = dispatch.CHUNK_KINDS.get(kind).path.partition(":")
    monkeypatch.setattr(f"{module}.{attr}", lambda chunk: ("patched", chunk["device"]))
    assert dispatch.run_spec(jobs.wrap("j", kind, {})) == ("patched", "cpu")


def test_an_unknown_kind_is_refused():
    with pytest.raises(UnknownNameError, match="unknown chunk kind 'os:system'"):
        dispatch.run_spec({"job": "j", "kind": "os:system", "chunk": {}})


def test_a_substitute_replaces_only_what_the_pool_runs(kind, monkeypatch):
    # the test seam: run_spec calls the substitute (that the audit's probe does not is
    # tests/audit/test_trust.py::test_a_run_where_every_model_fails_says_why)
    monkeypatch.setitem(dispatch.SUBSTITUTES, kind, lambda chunk: ("substitute", chunk["device"]))
    assert dispatch.run_spec(jobs.wrap("j", kind, {})) == ("substitute", "cpu")
    monkeypatch.setitem(dispatch.SUBSTITUTES, "os:system", lambda chunk: "ran")
    with pytest.raises(UnknownNameError):  # a substitute never makes a kind runnable
        dispatch.run_spec({"job": "j", "kind": "os:system", "chunk": {}})


@pytest.mark.slow
def test_a_fresh_worker_runs_an_audit_chunk_without_the_analysis_stack(tmp_path):
    """What a new Ray actor imports for its first audit chunk: not the runner, not
    scikit-learn (about a CPU-second of every actor's start-up), and the same rows."""
    import json
    import subprocess
    import sys

    from raudit.audit.runner import AuditRequest

    job = jobs.AuditJob("j", AuditRequest(impl="paper", attack="querybased", shadow_models=5,
                                          chunk_size=2, options={"max_iter": 2}))
    spec = job.open(tmp_path, lambda m: None, None, False)[0]
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    code = ("import json, sys\n"
            "from raudit.runs.dispatch import run_spec\n"
            f"rows = run_spec(json.load(open({str(tmp_path / 'spec.json')!r})))\n"
            "heavy = [m for m in ('sklearn', 'raudit.audit.runner') if m in sys.modules]\n"
            "print(json.dumps({'heavy': heavy, 'seeds': [r['seed'] for r in rows],\n"
            "                  'features': [list(r['features_vec']) for r in rows]}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    got = json.loads(out.strip().splitlines()[-1])
    assert got["heavy"] == []
    here = dispatch.run_spec(spec)  # the runner is loaded in this process
    assert got["seeds"] == [r["seed"] for r in here]
    assert got["features"] == [[float(v) for v in r["features_vec"]] for r in here]
