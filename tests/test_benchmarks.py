"""The benchmark suite's plumbing (not its speed): every README figure names a script that
exists, reads its number from that script's real output format, and every figure in the
results files is one the suite still measures, so the README's table can be regenerated."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import readme, table  # noqa: E402


@pytest.mark.parametrize("device", ["cpu", "cuda"])
@pytest.mark.parametrize("smoke", [False, True])
def test_figures_name_existing_scripts_and_unique_keys(device, smoke):
    figs = readme.figures(device, smoke)
    keys = [f.key for f in figs]
    assert len(keys) == len(set(keys)), keys
    assert keys == [f.key for f in readme.figures(device)]  # smoke measures the same figures
    for f in figs:
        assert (ROOT / f.argv[0]).is_file(), f.argv[0]
        assert f.command().startswith("OMP_NUM_THREADS=1 ")


def test_every_results_figure_is_one_the_suite_measures():
    known = {f.key for d in ("cpu", "cuda") for f in readme.figures(d)}
    for doc in table.newest():
        unknown = {f["key"] for f in doc["figures"]} - known
        assert not unknown, f"{doc['file']}: {sorted(unknown)}"


def test_readers_parse_the_scripts_output():
    figs = {f.key: f for f in readme.figures("cpu")}
    throughput = json.dumps({"impl": "gpate", "device": "cpu", "threads": 1, "rows": [
        {"M": 1, "model_it_per_s": 230.0, "per_core": 230.0, "speedup": 1.0},
        {"M": 8, "model_it_per_s": 923.0, "per_core": 923.0, "speedup": 4.013}]})
    assert figs["gpate-eager"].read("  warm-up\n" + throughput) == 923.0
    assert figs["gpate-batching"].read(throughput) == pytest.approx(4.013)
    released = "\n".join(json.dumps(r) for r in (
        {"side": "port", "M": 32, "iterations": [33], "cpu_s_per_model": 0.095},
        {"side": "released", "seed": 1000, "train_cpu_s": 2.64},
        {"side": "released", "seed": 1001, "train_cpu_s": 2.53}))
    assert figs["released-vs-port"].read(released) == pytest.approx(2.585 / 0.095)
    assert figs["workers-1-to-2"].read(
        "campaign, 1 worker(s) ...\nspeed-up 1 -> 2 workers, preload on: 1.89x\n") == 1.89
    assert figs["study-campaign-training"].read(
        "total (cpu clock): 3.7 core-hours of training; on 2 cores here ~1.9 h") == 3.7
    assert figs["gpate-mnist-step-eps1"].read(  # 500 teachers measured, scaled to 4,000
        "k=500 rows=7,000 batch=14: CPU s per step [18.5, 18.54] (median 18.52); ...") == \
        pytest.approx(8 * 18.52)
    as_user = json.dumps({"command": "raudit audit --impl smartnoise --attack groundhog",
                          "cold": {"estimate_s": 120.0, "measured_total_s": 146.2},
                          "warm": {"estimate_s": 120.0, "measured_total_s": 131.0}}, indent=2)
    assert figs["advertised-audit"].read(as_user) == 146.2
    assert figs["advertised-audit-warm"].read(as_user) == 131.0
    white = "paper: black-box eps_cp 0.100 ...\n" + json.dumps({"rows": [], "min_gain": 0.25})
    assert figs["white-box-gain"].read(white) == 0.25
    with pytest.raises(ValueError):
        figs["workers-1-to-2"].read("no such line")


def test_a_figure_that_cannot_run_here_is_not_a_number(monkeypatch):
    monkeypatch.delenv("RAUDIT_UPSTREAM_DIR", raising=False)
    fig = next(f for f in readme.figures("cpu") if f.key == "released-vs-port")
    row = readme.measure(fig, timeout=1)
    assert row["value"] is None and "RAUDIT_UPSTREAM_DIR" in row["skipped"]


def test_the_advertised_audit_runs_as_a_user_runs_it(monkeypatch, tmp_path):
    """The raudit command, no flag but the advertised ones, without the variables that tune
    raudit, Ray or the threads (whatever the suite runs under), a fresh cache; one run of the
    script gives the cold and the warm figure."""
    from benchmarks import estimate

    figs = [f for f in readme.figures("cpu") if f.key.startswith("advertised-audit")]
    assert [f.argv for f in figs] == [("benchmarks/estimate.py", "--scale", "1", "--as-user")] * 2
    assert all(not f.env for f in figs)  # no RAY_worker_niceness=0 or any other tweak
    for k, v in {"OMP_NUM_THREADS": "1", "RAY_worker_niceness": "0", "RAUDIT_COMPILE": "step",
                 "RAUDIT_CACHE_DIR": "/old", "MKL_NUM_THREADS": "1",
                 "RAUDIT_DATA_DIR": "/data", "HOME": "/home/u"}.items():
        monkeypatch.setenv(k, v)
    env = estimate.user_env(tmp_path / "fresh")
    assert env["RAUDIT_CACHE_DIR"] == str(tmp_path / "fresh") and env["RAUDIT_DATA_DIR"] == "/data"
    assert env["HOME"] == "/home/u"
    assert not {"OMP_NUM_THREADS", "RAY_worker_niceness", "RAUDIT_COMPILE",
                "MKL_NUM_THREADS"} & set(env)
    runs = []

    def execute(fig, timeout):
        runs.append(fig.key)
        return type("Done", (), {"returncode": 0, "stdout": json.dumps(
            {"cold": {"measured_total_s": 140.0}, "warm": {"measured_total_s": 130.0}}),
            "stderr": ""})(), 300.0
    monkeypatch.setattr(readme, "_execute", execute)
    monkeypatch.setattr(readme, "missing", lambda needs: None)
    ran: dict = {}
    assert [readme.measure(f, 10, ran)["value"] for f in figs] == [140.0, 130.0]
    assert runs == ["advertised-audit"]  # the command ran once for both figures


def test_an_only_run_carries_the_hosts_other_figures(monkeypatch, tmp_path):
    """`--only KEY` re-measures KEY and keeps the host's other figures from its newest file,
    each with its own commit: the tables read one file per host kind, so a partial run must
    not empty the rest of the table (nor take another host's or a smoke run's rows)."""
    host = readme.host_kind("cpu")
    keys = [f.key for f in readme.figures("cpu")]

    def doc(kind, date, smoke=False, commit="old"):
        return {"schema": 1, "host": {**host, "kind": kind}, "commit": commit, "date": date,
                "smoke": smoke, "figures": [{"key": k, "value": 1.0, "commit": commit}
                                            for k in keys]}
    (tmp_path / "a.json").write_text(json.dumps(doc(host["kind"], "2026-01-01", commit="old")))
    (tmp_path / "b.json").write_text(json.dumps(doc(host["kind"], "2026-02-01", commit="newer")))
    (tmp_path / "c.json").write_text(json.dumps(doc("other-host", "2026-03-01", commit="x")))
    (tmp_path / "d.json").write_text(json.dumps(doc(host["kind"], "2026-04-01", True, "smoke")))
    monkeypatch.setattr(readme, "measure", lambda fig, timeout, ran: {
        "key": fig.key, "label": fig.label, "unit": fig.unit, "value": 2.0})
    monkeypatch.setattr(readme, "commit", lambda: ("new", False))
    path = readme.run(only=[keys[3]], out=tmp_path)
    written = json.loads(path.read_text())
    assert [f["key"] for f in written["figures"]] == keys  # the suite's order, none dropped
    by_key = {f["key"]: f for f in written["figures"]}
    assert by_key[keys[3]]["value"] == 2.0 and by_key[keys[3]]["commit"] == "new"
    assert {by_key[k]["commit"] for k in keys if k != keys[3]} == {"newer"}
    assert written["carried"] == [k for k in keys if k != keys[3]]


def test_extrapolate_counts_audit_jobs_and_passes_over_inspections(tmp_path, capsys):
    # the study campaign has inspect jobs: the extrapolation crashed on them ('InspectJob'
    # object has no attribute 'req') and the README's figure could not be measured
    from benchmarks import campaign

    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: c\njobs:\n"
                   "  - {name: wc, kind: audit, impl: paper, attack: querybased,"
                   " dataset: worst-case, shadow_models: 5, max_iter: 2}\n"
                   "  - {name: look, kind: inspect, impl: paper, dataset: worst-case}\n")
    campaign.extrapolate(str(cfg), 2, 1, cap=1)
    out = capsys.readouterr().out
    assert "wc: 10 models x" in out
    assert "look: an inspection, run once after the pool (not counted)" in out
    assert "total (cpu clock):" in out
