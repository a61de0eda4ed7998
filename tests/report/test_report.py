"""`raudit report` as a user sees it: a report of real stores (audit, utility, inspect, a
campaign of them) whose HTML parses and whose every image and table exists; the tables
carry the stored numbers; bad input is one line and exit 2."""

from __future__ import annotations

import json
import math
import re

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
    """The page parses, every file it references exists, and every link into a page of the
    report (``page.html#id`` or ``#id``) lands on an element with that id."""
    doc = parse(page)
    assert not doc.errors and not doc.stack, (doc.errors, doc.stack)
    for src in doc.images + doc.links:
        if src.startswith("data:"):
            continue
        path, _, frag = src.partition("#")
        target = page.parent / path if path else page
        assert target.is_file(), src
        if frag:
            assert frag in (doc if not path else parse(target)).ids, src
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
    evidence = _check_page(tmp_path / "rep" / "inspect-evidence.html")
    # the evidence plot sits on the evidence page; the summary shows the coverage figure
    assert evidence.images == ["figures/inspect-borealis-teacher-data.png"]
    assert doc.images == ["figures/inspect-coverage.png"]
    viol = pd.read_csv(tmp_path / "rep" / "tables" / "violations.csv")
    assert list(viol["status"]) == ["violated", "ok"]
    assert "1 violated, 1 ok, 10 not checked" in "".join(doc.text)  # 12 categories in all


def test_inspect_page_reads_first_and_keeps_raw_lists_off_the_page(tmp_path):
    folder = inspect_folder(tmp_path / "ins", _png(tmp_path / "e.png"), SCHEMA_VERSION)
    r = build(folder, tmp_path / "rep")
    page = r["page"].read_text()
    text = "".join(parse(r["page"]).text)
    # the plain-language reading, then the matrix, then the per-run details
    reading = text.index("raudit trained 1 implementation(s) once each on cervical")
    assert reading < text.index("Violations per implementation") < text.index("Each run")
    assert "break a privacy promise" in text and "(borealis)" in text
    # every cell of the matrix links to its evidence row on the evidence page
    assert 'href="inspect-evidence.html#ev-borealis-data_partition"' in page
    # raw lists are linked, not inline: no full-precision eps_hat, no row-id list
    assert "1.0074419767378342" not in page and "[0, 1, 2]" not in page
    assert "1.0074" in text and "above eps = 1" in text  # rounded, and said why
    eps = pd.read_csv(tmp_path / "rep" / "tables" / "inspect_eps_hat.csv")
    assert list(eps["eps_hat"]) == [0.25, 0.5, 1.0074419767378342]  # full precision kept
    seen = pd.read_csv(tmp_path / "rep" / "tables" / "inspect_teachers_seen.csv")
    assert list(seen["teacher"]) == [0, 0, 0, 1, 1] and list(seen["row"]) == [0, 1, 2, 2, 3]
    runs = pd.read_csv(tmp_path / "rep" / "tables" / "inspect_runs.csv")
    assert runs.loc[0, "rows shared by teachers"] == 1 and runs.loc[0, "teachers"] == 2


def test_inspect_markdown_links_its_evidence_page(tmp_path):
    folder = inspect_folder(tmp_path / "ins", _png(tmp_path / "e.png"), SCHEMA_VERSION)
    r = build(folder, tmp_path / "md", fmt="md")
    assert [p.name for p in r["pages"]] == ["report.md", "inspect-evidence.md"]
    assert "(inspect-evidence.md#ev-borealis-data_partition)" in r["page"].read_text()
    ev = (tmp_path / "md" / "inspect-evidence.md").read_text()
    assert '<a id="ev-borealis-data_partition"></a>' in ev and "(report.md)" in ev


def test_inspect_plot_named_but_absent_is_said(tmp_path):
    folder = inspect_folder(tmp_path / "ins", _png(tmp_path / "e.png"), schema_version=None)
    (folder / "borealis-teacher-data.png").unlink()
    r = build(folder, tmp_path / "rep")
    doc = _check_page(r["page"])
    assert doc.images == ["figures/inspect-coverage.png"]
    assert not _check_page(tmp_path / "rep" / "inspect-evidence.html").images
    assert "named in violations.csv but absent" in "".join(doc.text)


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
    # the claimed / mechanism / audited line; max_iter = 3 stops before paper's budget, and
    # the dry run of its schedule stops there too (3 iterations spend far less than the claim)
    assert row["eps_true_source"].startswith("dry run of the schedule: 3 iterations")
    assert 0 < row["eps_true"] < 0.5
    assert row["verdict_line"].startswith(f"claimed 1.00, mechanism {row['eps_true']:.2f}; ")
    assert " ".join(row["verdict_line"].split()) in text and row["threat_model"] == "black-box"
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


def test_every_eps_cp_bar_keeps_its_arrow_inside_the_axes(tmp_path, monkeypatch):
    """matplotlib draws no annotation whose head lies outside the axes: the tallest bar (a
    saturated audit's eps_cp at its ceiling) lost its [eps_cp, inf) arrow, the only mark
    that says the bound is one-sided."""
    from raudit.report import audits

    figs = []
    monkeypatch.setattr(audits, "save", lambda fig, path: figs.append(fig) or path)
    rows = pd.DataFrame({"impl": ["identity", "paper"], "attack": ["querybased"] * 2,
                         "job": ["", ""], "epsilon": [1.0, 1.0], "eps_cp": [1.597, 0.0],
                         "eps_max": [1.597, 1.597], "eps_jeffreys": [None, 0.4],
                         "eps_bayes": [None, 0.5]})
    audits.eps_figure(rows, tmp_path / "eps.png")
    (ax,) = figs[0].axes
    top = ax.get_ylim()[1]
    heads = [a.xy[1] for a in ax.texts]
    assert len(heads) == 2 and all(cp < head <= top for cp, head in zip([1.597, 0.0], heads))
    assert heads[0] - 1.597 == pytest.approx(heads[1], rel=1e-9)  # one length, the plot's scale


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


def test_learning_table_and_figure_from_a_run_with_its_coin_control(tmp_path):
    from raudit.engine.driver import EngineConfig
    from raudit.utility.plan import UtilityRequest
    from raudit.runs.utility import run_utility

    req = UtilityRequest(impl="fixed", dataset="breast-cancer", epsilons=(0.5, 5.0),
                         options={"iterations": 3}, fits=2, samples=1, classifiers=("lr",),
                         settings=("B",), control="coin", max_iter=None)
    res = run_utility(req, tmp_path / "u", EngineConfig(backend="local"))
    r = build(tmp_path / "u", tmp_path / "rep")
    doc = _check_page(r["page"])
    assert any("learning_vs_eps" in s for s in doc.images)
    t = pd.read_csv(tmp_path / "rep" / "tables" / "utility_learning.csv")
    (curve,) = res["learning"]
    want = "> 5" if curve["threshold"] is None else f"{curve['threshold']:g}"
    assert list(t["learning threshold"].astype(str)) == [want]
    assert t["B mean at eps 1"].isna().all() and list(t["eps swept"]) == ["0.5, 5"]
    assert t["fits"].tolist() == [2]


def test_campaign_pools_the_runs_of_one_setting_at_several_seeds(tmp_path):
    from raudit.engine.driver import EngineConfig
    from raudit.runs.utility import run_utility
    from raudit.utility.learning import fit_means, paired_one_sided
    from raudit.utility.plan import UtilityRequest

    stores, diffs = {}, []
    for seed in (0, 1):
        req = UtilityRequest(impl="fixed", dataset="breast-cancer", epsilons=(5.0,),
                             options={"iterations": 3}, fits=2, samples=1, classifiers=("lr",),
                             settings=("B",), control="coin", max_iter=None, seed=seed)
        run_utility(req, tmp_path / f"s{seed}", EngineConfig(backend="local"))
        rows = pd.read_parquet(tmp_path / f"s{seed}" / "utility")
        real, ctrl = (fit_means(rows[m]) for m in (rows["control"].isna(), rows["control"] == "coin"))
        diffs += [real[f] - ctrl[f] for f in sorted(real)]
        stores[f"seed{seed}"] = tmp_path / f"s{seed}"
    camp = as_campaign(stores, tmp_path / "camp", tables=("utility",))
    build(camp, tmp_path / "rep")
    (row,) = pd.read_csv(tmp_path / "rep" / "tables" / "utility_pooled.csv").to_dict("records")
    want = paired_one_sided(dict(enumerate(diffs)), dict.fromkeys(range(4), 0.0))
    assert (row["runs"], row["fits"], row["jobs"]) == (2, 4, "seed0, seed1")
    assert row["diff"] == pytest.approx(want.diff, abs=1e-12)
    assert row["p"] == pytest.approx(want.p, abs=1e-12) or (math.isnan(row["p"]) and math.isnan(want.p))
    build(tmp_path / "s0", tmp_path / "rep1")  # one run: no pooled table
    assert not (tmp_path / "rep1" / "tables" / "utility_pooled.csv").exists()
    # the two single-run folders read and pooled directly (no campaign, no job column: what
    # lab/probes/pooled_test.py does) give the same test
    from raudit.report.load import load
    from raudit.utility.learning import pooled_controls

    both = pd.concat([load(tmp_path / f"s{seed}").table("utility") for seed in (0, 1)],
                     ignore_index=True)
    (pooled,) = pooled_controls(both)
    assert (pooled["runs"], pooled["fits"], pooled["control"]) == (2, 4, "coin")
    assert pooled["diff"] == pytest.approx(want.diff, abs=1e-12)


HOSTILE = "<img src=x onerror=alert(1)> [click](javascript:alert(2)) *a*|b ``` `x`"


def test_markdown_writes_every_field_value_as_text():
    # issue 46.3: `report --format md` wrote raw HTML from field values into report.md
    # (Markdown passes inline HTML through); the HTML page escaped them all along
    from raudit.report.model import (Figure, KeyValues, Links, Para, Pre, Report, Section,
                                     Table, Verdict)
    from raudit.report.render import markdown

    h = HOSTILE
    frame = pd.DataFrame({h: [h, 1.5], "b": ["x", "y"]})
    sec = Section(h, [Para(h), Verdict(h, h, True),
                      Table(h, frame, f"{h}.csv", note=h, links={(0, "b"): f"page:{h}#{h}"},
                            row_ids=[f'"{h}', ""]),
                      Figure(h, f"figures/{h}.png", caption=h), KeyValues([(h, h)]),
                      Links(h, [(h, f"raw/{h}.csv")]), Pre(f"{h}\n````\n{h}")])
    text = markdown(Report(h, [sec]))
    pre = text.index("`````\n")  # the fence is longer than any backtick run inside
    outside, inside = text[:pre], text[pre:]
    assert "<img" not in outside and not re.search(r"(?<!\\)\]\(javascript:", outside)
    assert "\\[click\\]" in outside and "&lt;img src=x onerror=alert(1)&gt;" in outside
    assert all(line.startswith(("|", "#", "", "-", "*", "_", "!", "&", "\\")) or not line
               for line in outside.splitlines())  # no value broke out of its line
    lines = [ln for ln in outside.splitlines() if ln.startswith("|")]
    assert {ln.count(" | ") for ln in lines if "---" not in ln} == {1}  # two cells a row
    assert inside.splitlines()[:4] == ["`````", h, "````", h]  # literal inside the fence
    assert inside.splitlines()[4] == "`````"


def test_markdown_report_of_a_hostile_job_name_holds_no_html(utility_store, tmp_path):
    camp = as_campaign({"<img src=x onerror=alert(1)>": utility_store}, tmp_path / "camp")
    text = build(camp, tmp_path / "md", fmt="md")["page"].read_text()
    outside_code = text.split("```")[::2]  # the provenance's manifest is a literal block
    assert not any("<img" in part for part in outside_code)
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
