"""The report's audit table counts models in one unit (issue 49 item 5): the summary's
shadow_models is per world, models_ok and missing count both worlds, and the table
showed `shadow_models 1000` beside `models_ok 2000`."""

from __future__ import annotations

import pandas as pd

from raudit.report.audits import summary_table


def test_models_ok_sits_beside_the_models_of_both_worlds():
    rows = pd.DataFrame([{"impl": "paper", "attack": "querybased", "shadow_models": 1000,
                          "models_ok": 2000, "missing": 0, "eps_cp": 1.0}])
    table = summary_table(rows)
    assert "shadow_models" not in table.columns
    assert table["models"].iloc[0] == table["models_ok"].iloc[0] == 2000
    cols = list(table.columns)
    assert cols.index("models_ok") == cols.index("models") + 1


def test_the_report_rebuilds_the_ensembles_views_from_its_dataset():
    """The ensemble's chosen view is a column range that depends on the attack's context;
    the report rebuilds it from the dataset, the target and the audit's seed."""
    from raudit.report.audits import _views

    row = pd.Series({"attack": "ensemble", "dataset": "worst-case", "seed": 0,
                     "threat_model": "black-box", "impl": "paper"})
    views = _views(row, pd.DataFrame({"target": ["4"]}))
    assert isinstance(views, dict)
    assert views["groundhog"] == slice(0, 15) and views["querybased"] == slice(15, 23)
    assert views["domias"] == slice(23, 24)
    missing = _views(pd.Series({**row.to_dict(), "dataset": "no-such-dataset"}),
                     pd.DataFrame({"target": ["4"]}))
    assert isinstance(missing, str) and "need its dataset" in missing


def test_the_reports_red_box_reads_the_verdicts_bound_not_eps_cp_alone(tmp_path):
    """curve > claim >= CP: the verdict says VIOLATED (raudit.audit.verdict.violated), so
    the report's box is red too; it read eps_cp alone and showed a VIOLATED sentence in a
    box that was not."""
    from raudit.report.audits import section
    from raudit.report.load import Results
    from raudit.report.model import Verdict

    row = {"job": "", "audit_id": "a" * 16, "created_at": pd.Timestamp("2026-01-01", tz="UTC"),
           "impl": "paper", "attack": "querybased", "features": "querybased",
           "dataset": "worst-case", "target": "worst-case", "epsilon": 1.0, "delta": 1e-5,
           "shadow_models": 250, "models_ok": 500, "missing": 0, "auc": 0.9, "tpr": 0.6,
           "fpr": 0.1, "tp": 60, "fn": 40, "tn": 90, "fp": 10, "eps_cp": 0.8,
           "eps_curve": 1.3, "eps_max": 3.0, "eps_true": 2.0, "seed": None}
    res = Results(tmp_path, "audit", {}, {"summary": pd.DataFrame([row])})
    sec = section(res, tmp_path)
    assert sec is not None
    (box,) = [b for b in sec.blocks if isinstance(b, Verdict)]
    assert "the claim is VIOLATED" in box.text and box.violated


def test_an_audit_that_could_not_show_a_violation_is_never_a_green_box(tmp_path):
    """eps_max <= the claim ("this audit cannot detect a violation"), a bound above the
    mechanism's eps_true, and no result were green boxes, which read as a pass; they are
    amber (caution), a clean "no violation detected" stays green and a violation red."""
    from raudit.report.audits import section
    from raudit.report.load import Results
    from raudit.report.model import Report, Verdict
    from raudit.report.render import html, markdown

    base = {"job": "", "created_at": pd.Timestamp("2026-01-01", tz="UTC"), "impl": "paper",
            "attack": "groundhog", "features": "naive", "dataset": "cervical", "target": "row:3",
            "epsilon": 1.0, "delta": 1e-5, "shadow_models": 20, "models_ok": 40, "missing": 0,
            "auc": 1.0, "tpr": 1.0, "fpr": 0.25, "tp": 8, "fn": 0, "tn": 6, "fp": 2,
            "eps_cp": 0.0, "eps_curve": 0.0, "eps_max": 0.53, "eps_true": 0.18, "seed": None}
    rows = [base,  # the real audit of paper -S 20: eps_max 0.53 below the claimed 1
            {**base, "eps_max": 3.0, "eps_cp": 0.5, "eps_true": 0.2},  # above eps_true
            {**base, "eps_max": 3.0, "eps_cp": float("nan"), "auc": float("nan")},  # no result
            {**base, "eps_max": 3.0},  # clean: no violation detected, could have shown one
            {**base, "eps_max": 3.0, "eps_cp": 1.5}]  # violated
    rows = [{**r, "audit_id": f"{i:016d}"} for i, r in enumerate(rows)]
    res = Results(tmp_path, "audit", {}, {"summary": pd.DataFrame(rows)})
    sec = section(res, tmp_path)
    assert sec is not None
    boxes = [b for b in sec.blocks if isinstance(b, Verdict)]
    assert [(b.violated, b.caution) for b in boxes] == [
        (False, True), (False, True), (False, True), (False, False), (True, False)]
    assert "cannot detect a violation" in boxes[0].text
    page = html(Report("r", [sec]), tmp_path)
    assert page.count('class="verdict caution"') == 3 and page.count('class="verdict violated"') == 1
    assert markdown(Report("r", [sec])).count("**caution**") == 3
