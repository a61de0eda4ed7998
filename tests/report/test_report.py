"""`raudit report` as a user sees it: a report of real stores (audit, utility, inspect, a
campaign of them) whose HTML parses and whose every image and table exists; the tables
carry the stored numbers; bad input is one line and exit 2."""

from __future__ import annotations

import json
import math

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from report_helpers import as_campaign, inspect_folder, parse

from raudit import __version__
from raudit.audit.verdict import verdict
from raudit.report import utility as rep_utility
from raudit.report.build import build
from raudit.results import ResultStore
from raudit.results.schema import SCHEMA_VERSION


def _check_page(page):
    doc = parse(page)
    assert not doc.errors and not doc.stack, (doc.errors, doc.stack)
    for src in doc.images + doc.links:
        if not src.startswith(("#", "data:")):
            assert (page.parent / src).is_file(), src
    return doc


def summ_run(store):
    return ResultStore(store).read("utility")["run_id"].iloc[0][:8]


def test_utility_report_tables_match_the_analysis(utility_store, tmp_path):
    r = build(utility_store, tmp_path / "rep")
    doc = _check_page(r["page"])
    assert r["sections"] == ["Utility", "Provenance"]
    # two eps: the run's curve is drawn; one run: no figure comparing runs
    assert [s for s in doc.images if "utility_vs_eps" in s] == [
        f"figures/utility_vs_eps-identity-breast-cancer-{summ_run(utility_store)}.png"]
    summ = pd.read_csv(tmp_path / "rep" / "tables" / "utility_summary.csv")
    assert list(summ["point"]) == ["eps=1", "eps=2"]
    # identity releases its training table: Setting B is Setting A for LR and GaussianNB
    assert summ["AUROC B"].to_numpy() == pytest.approx(summ["A AUROC"].to_numpy())
    per = pd.read_csv(tmp_path / "rep" / "tables"
                      / "utility-breast-cancer-auroc-per_classifier.csv")
    assert list(per["classifier"]) == ["Logistic Regression", "Gaussian Naive Bayes", "Average"]
    assert per.iloc[2, 1] == pytest.approx(per.iloc[:2, 1].mean())


def test_markdown_report(utility_store, tmp_path):
    r = build(utility_store, tmp_path / "md", fmt="md")
    text = r["page"].read_text()
    assert r["page"].name == "report.md" and "## Utility" in text and "| classifier |" in text
    for fig in r["figures"]:
        assert f"]({fig.relative_to(tmp_path / 'md').as_posix()})" in text and fig.is_file()


def test_campaign_layout_has_a_job_column(utility_store, tmp_path):
    camp = as_campaign({"a": utility_store, "b": utility_store}, tmp_path / "camp")
    r = build(camp, tmp_path / "rep")
    _check_page(r["page"])
    assert r["kind"] == "campaign"
    summ = pd.read_csv(tmp_path / "rep" / "tables" / "utility_summary.csv")
    assert sorted(summ["job"]) == ["a", "a", "b", "b"]
    curves = sorted(f.name for f in r["figures"] if "utility_vs_eps" in f.name)
    # one per job (raudit.utility.plot) and one with both jobs' lines (the study's figure 1)
    assert len(curves) == 3 and "utility_vs_eps-breast-cancer.png" in curves


def test_teacher_and_preset_tables():
    def pt(k, preset, auroc):
        return {"status": "ok", "label": f"k={k} {preset}", "epsilon": 1.0, "teachers": float(k),
                "preset": preset, "auroc_B": auroc}
    res = [{"job": "", "impl": "paper", "dataset": "epileptic", "run_id": "r",
            "points": [pt(10, "default", 0.8), pt(100, "default", 0.7), pt(10, "paper", 0.6),
                       pt(100, "paper", 0.5)], "per_classifier": []}]
    t = rep_utility.teacher_table(res)
    assert list(t["teachers"]) == [10, 100]
    assert list(t["paper (epileptic)"]) == pytest.approx([0.7, 0.6])  # mean over presets
    p = rep_utility.preset_table(res)
    assert p.iloc[0]["D (default)"] == pytest.approx(0.75)
    assert p.iloc[0]["reduction D->P %"] == pytest.approx(100 * 0.2 / 0.75)


def _png(path):
    from raudit.plots import pyplot, save
    fig, ax = pyplot().subplots(figsize=(2, 2))
    ax.plot([0, 1], [1, 0])
    return save(fig, path)


def test_inspect_report_copies_its_evidence(tmp_path):
    folder = inspect_folder(tmp_path / "ins", _png(tmp_path / "e.png"), SCHEMA_VERSION)
    r = build(folder, tmp_path / "rep")
    doc = _check_page(r["page"])
    assert doc.images == ["figures/inspect-borealis-teacher-data.png"]
    viol = pd.read_csv(tmp_path / "rep" / "tables" / "violations.csv")
    assert list(viol["status"]) == ["violated", "ok"]
    assert "1 violated, 1 ok, 0 not checked" in "".join(doc.text)


def test_inspect_plot_named_but_absent_is_said(tmp_path):
    folder = inspect_folder(tmp_path / "ins", _png(tmp_path / "e.png"), schema_version=None)
    (folder / "borealis-teacher-data.png").unlink()
    doc = _check_page(build(folder, tmp_path / "rep")["page"])
    assert not doc.images and "named in violations.csv but absent" in "".join(doc.text)


def _newer_part(folder):
    (folder / "summary").mkdir(parents=True)
    t = pa.table({"audit_id": ["x"]}).replace_schema_metadata(
        {"raudit.schema_version": str(SCHEMA_VERSION + 1)})
    pq.write_table(t, folder / "summary" / "part-0.parquet")


@pytest.mark.parametrize("case,needle", [
    ("missing", "does not exist"),
    ("file", "is a file"),
    ("no-manifest", "is not a raudit results folder"),
    ("empty", "holds no results yet"),
    ("newer-manifest", "newer than this raudit's"),
    ("newer-part", "newer than this raudit's"),
])
def test_bad_input_is_one_line_and_exit_2(case, needle, tmp_path, capsys):
    from raudit.cli.app import main

    d = tmp_path / "res"
    manifest = {"schema_version": SCHEMA_VERSION, "spec_hash": "x", "spec": {"impl": "paper"}}
    if case == "file":
        d.write_text("x")
    elif case != "missing":
        d.mkdir()
        if case != "no-manifest":
            if case == "newer-manifest":
                manifest["schema_version"] = SCHEMA_VERSION + 1
            (d / "raudit.json").write_text(json.dumps(manifest))
        if case == "newer-part":
            _newer_part(d)
    with pytest.raises(SystemExit) as exc:
        main(["report", str(d), "--out", str(tmp_path / "rep")])
    err = capsys.readouterr().err.strip()
    assert exc.value.code == 2 and len(err.splitlines()) == 1 and needle in err, err
    assert not (tmp_path / "rep").exists()  # rejected before anything is written


# ------------------------------------------------------------ a real audit (slow)
@pytest.mark.slow
def test_audit_report_from_a_real_store(audit_store, tmp_path):
    r = build(audit_store, tmp_path / "rep")
    doc = _check_page(r["page"])
    text = " ".join(" ".join(doc.text).split())
    (row,) = ResultStore(audit_store).read("summary").to_dict("records")
    assert " ".join(verdict(row).split()) in text
    names = sorted(p.name.split("-")[0] for p in r["figures"])
    assert names == ["eps_emp.png", "roc", "scores"]  # the ROC was rebuilt: its AUC matched
    table = pd.read_csv(tmp_path / "rep" / "tables" / "audits.csv")
    assert table["eps_cp"].iloc[0] == pytest.approx(row["eps_cp"])
    assert table["eps_max"].iloc[0] == pytest.approx(row["eps_max"])
    assert "20 ok, 0 failed" in text  # provenance: 2 x 10 shadow models
    assert ResultStore(audit_store).manifest()["written_by"]["raudit"] == __version__
    assert "created by host" in text and "not recorded (stores" not in text
    embedded = parse(build(audit_store, tmp_path / "emb", embed=True)["page"])
    assert embedded.images and all(s.startswith("data:image/png;base64,") for s in embedded.images)


@pytest.mark.slow
def test_stored_auc_that_the_scores_do_not_reproduce_drops_the_roc(audit_store, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(audit_store, copy)
    store = ResultStore(copy)
    row = store.read("summary").iloc[-1].to_dict()
    row["auc"] = 1.0 - row["auc"] if not math.isclose(row["auc"], 0.5) else 0.9
    row["created_at"] = pd.Timestamp.now(tz="UTC")
    store.append("summary", [row])
    r = build(copy, tmp_path / "rep")
    assert [p.name for p in r["figures"]] == ["eps_emp.png"]
    assert "figures left out" in r["page"].read_text()


@pytest.mark.slow
def test_audit_campaign_rebuilds_each_job(audit_store, tmp_path):
    camp = as_campaign({"x": audit_store, "y": audit_store}, tmp_path / "camp")
    r = build(camp, tmp_path / "rep")
    _check_page(r["page"])
    assert len([f for f in r["figures"] if f.name.startswith("roc-")]) == 2
    assert list(pd.read_csv(tmp_path / "rep" / "tables" / "audits.csv")["job"]) == ["x", "y"]


@pytest.mark.slow
def test_summary_without_shadow_rows_has_no_roc_and_says_why(audit_store, tmp_path):
    camp = as_campaign({"x": audit_store}, tmp_path / "camp", tables=("summary",))
    r = build(camp, tmp_path / "rep")
    assert [p.name for p in r["figures"]] == ["eps_emp.png"]
    assert "no ROC curve (the folder has no shadow table)" in r["page"].read_text()
