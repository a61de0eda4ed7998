"""The study comparison: the reproduction study's published values beside raudit's.

The study's numbers live in ``study_values.json`` beside this module (figure 5's AUC and
eps_emp per audit job, table 2's violations per implementation, table 4's utility per
utility job), each with the table or figure it comes from and the study's version cited.
A value the study does not print (figure 5 is a bar chart) is null there and shown as
"not given", never read off a figure.

A campaign job is compared when its name, implementation and dataset are those of a
job of ``configs/study-audit.yaml`` or ``configs/study-utility.yaml``: a job renamed or
pointed at another dataset is not the study's and gets no row. Each row holds the
study's value, raudit's, the difference and, where they differ, one line saying why
(a protocol, a default, or a named port switch).
"""

from __future__ import annotations

import json
import math
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

from raudit.report import utility as ut
from raudit.report.audits import summaries
from raudit.report.load import Results
from raudit.report.model import Para, Section, Table

COLUMNS = ["job", "quantity", "source", "study", "raudit", "difference", "reason"]
#: the study's best-of: 5 fits x 5 samples, 12 classifiers (its section 5, Setup)
STUDY_DATASETS, STUDY_CLASSIFIERS = 25, 12


@lru_cache(maxsize=1)
def values() -> dict[str, Any]:
    """The study's values (the packaged ``study_values.json``), parsed once."""
    text = resources.files("raudit.report").joinpath("study_values.json").read_text("utf-8")
    return json.loads(text)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def _fmt(v: float | None, digits: int = 4) -> str:
    return "" if v is None else f"{v:.{digits}f}"


def _row(job: str, quantity: str, source: str, study: str, raudit: str, diff: str = "",
         reason: str = "") -> dict[str, str]:
    return dict(zip(COLUMNS, (job, quantity, source, study, raudit, diff, reason)))


# -- audits: figure 5 and table 2 ------------------------------------------------
def _audit_rows(study: dict, s: pd.Series, violations: dict[str, set[str]] | None) -> list[dict]:
    job, src = study["job"], study["source"]
    auc, eps, eps_max = _num(s.get("auc")), _num(s.get("eps_cp")), _num(s.get("eps_max"))
    claimed = _num(s.get("epsilon")) or 1.0
    rows = [_row(job, "AUC", src, _fmt(study["auc"], 3) or "not given", _fmt(auc, 3),
                 _diff(study["auc"], auc, 3))]
    if study["eps_emp"] is not None:
        rows.append(_row(job, "eps_emp (CP)", src, _fmt(study["eps_emp"], 2), _fmt(eps, 2),
                         _diff(study["eps_emp"], eps, 2)))
    else:  # the text states eps_emp >> eps for every job; compare with that
        agree = eps is not None and eps > claimed
        reason = "" if agree else _why_not_detected(s, claimed)
        rows.append(_row(job, "eps_emp (CP)", f"{src} (text: eps_emp >> eps)",
                         f"{study['eps_emp_stated']} (bars not given)",
                         f"{_fmt(eps, 2)} of max {_fmt(eps_max, 2)}",
                         "both > eps" if agree else f"not > eps = {claimed:g}", reason))
    rows.append(_violation_row(job, study["impl"], violations))
    return rows


def _why_not_detected(s: pd.Series, claimed: float) -> str:
    ceiling = values()["audit"][0]["eps_emp_ceiling"]
    eps_max = _num(s.get("eps_max"))
    if eps_max is not None and eps_max <= claimed:
        return (f"protocol: too few test models to show eps > {claimed:g}: raudit's ceiling "
                f"here is {eps_max:.2f}, the study's about {ceiling}")
    if str(s.get("synthetic_protocol")) == "same":
        return ("protocol differs: raudit samples the same number of synthetic rows in both "
                "worlds, the study's harness per world (on the worst case that count alone "
                "separates the worlds, docs/findings.md); `synthetic_rows: per-world` runs the "
                "study's")
    return "not explained by a known protocol, default or port switch"


def _violation_row(job: str, impl: str, measured: dict[str, set[str]] | None) -> dict:
    v = values()["violations"]
    private = v["privacy_columns"]
    study = {c for c in v["ticked"].get(impl, []) if c in private}
    n_study = f"{len(study)} ({', '.join(sorted(study)) or 'none'})"
    if measured is None or impl not in measured:
        return _row(job, "privacy violations", v["source"], n_study, "not measured",
                    "", f"no inspect job of {impl} in this campaign (`raudit inspect "
                    f"--impl {impl}` measures it)")
    mine = {c for c in measured[impl] if c in private}
    more, fewer = sorted(mine - study), sorted(study - mine)
    diff = ", ".join([f"+{c}" for c in more] + [f"-{c}" for c in fewer])
    known = values()["raudit_differences"]["violations"]
    reasons = [f"{c}: {known.get(f'{impl}:{c}', 'not a known difference; see the inspect evidence')}"
               for c in more + fewer]
    return _row(job, "privacy violations", v["source"], n_study,
                f"{len(mine)} ({', '.join(sorted(mine)) or 'none'})", diff or "same",
                "; ".join(reasons))


def _measured_violations(res: Results) -> dict[str, set[str]] | None:
    """impl -> the columns an inspect job of this campaign found violated (the last run of
    an impl wins); None when the campaign has no inspect job."""
    if not res.inspects:
        return None
    out: dict[str, set[str]] = {}
    for ins in res.inspects:
        viol = ins.violations
        for impl, g in viol.groupby("impl", sort=False):
            out[str(impl)] = set(g.loc[g["status"] == "violated", "category"].astype(str))
    return out


# -- utility: table 4 ----------------------------------------------------------
UTILITY = "AUROC (B, best of 25, mean of 12 classifiers)"


def _utility_row(study: dict, run: dict) -> dict:
    job, src, quantity = study["job"], study["source"], UTILITY
    point = next((p for p in run["points"] if p.get("control") is None
                  and p.get("epsilon") == 1.0), None)
    mine = _num(point.get("auroc_B")) if point else None
    diff = _diff(study["auroc"], mine, 4)
    reason = ""
    if mine is None:
        reason = (point or {}).get("reason") or "no eps = 1 point without a control"
    elif diff not in ("", "+0.0000", "-0.0000"):
        n_sets, n_clf = _sizes(run)
        if point and _num(point.get("single_class_share")) == 1.0:
            # not the best-of's seeds: no table gave the classifiers two classes to learn
            reason = ("every synthetic table has one label class: the classifiers score a "
                      "constant (AUROC 0.5)")
        elif (n_sets, n_clf) != (STUDY_DATASETS, STUDY_CLASSIFIERS):
            reason = (f"protocol: best of {n_sets} synthetic dataset(s) and {n_clf} "
                      f"classifier(s), the study's {STUDY_DATASETS} and {STUDY_CLASSIFIERS}")
        else:
            reason = ("protocol: the best of 25 is chosen on the test set itself, so it moves "
                      "with the seeds (docs/findings.md: up to 0.12 between two seed sets)")
    control = next((p for p in run["points"] if p.get("control") is not None
                    and p.get("epsilon") == 1.0 and _num(p.get("auroc_B")) is not None), None)
    if control is not None:  # whether raudit's number reflects learning (its control beside it)
        scores = f"its {control['control']} control scores {_fmt(_num(control['auroc_B']))}"
        fits, c_fits = (point or {}).get("fits_ok"), control.get("fits_ok")
        if fits and c_fits != fits:  # a best-of over fewer tables is lower: say so
            scores += f" over {c_fits} fit(s), this job's over {fits}"
        reason = "; ".join(filter(None, [reason, scores]))
    elif mine is not None:  # a partly run job, or one without a control: nothing says learning
        reason = "; ".join(filter(None, [reason, "no control has run beside it"]))
    return _row(job, quantity, src, _fmt(study["auroc"]), _fmt(mine), diff, reason)


def _sizes(run: dict) -> tuple[int, int]:
    """(synthetic datasets, classifiers) behind a run's best-of, from its table rows."""
    clf = {r["classifier"] for r in run["per_classifier"]
           if r["setting"] == "B" and r["metric"] == "auroc" and r["label"] != "real"}
    n = max((r["n"] for r in run["per_classifier"] if r["setting"] == "B"), default=0)
    return int(n), len(clf)


def _diff(study: float | None, mine: float | None, digits: int) -> str:
    if study is None or mine is None:
        return ""
    return f"{mine - study:+.{digits}f}"


# -- the table -----------------------------------------------------------------
def comparison(res: Results) -> pd.DataFrame:
    """One row per (study job run in this campaign, quantity), in the data file's order;
    an empty frame when no job of the campaign is one of the study's."""
    if res.kind != "campaign":
        return pd.DataFrame(columns=COLUMNS)
    rows: list[dict] = []
    summ = summaries(res)
    by_job = {str(r["job"]): r for _, r in summ.iterrows()} if not summ.empty else {}
    measured = _measured_violations(res)
    missing = "no rows in this campaign yet (not run, or skipped: e.g. its dataset is not available here)"
    audits = [a for a in values()["audit"] if _matches(by_job.get(a["job"]), a)]
    if audits:  # a study-audit campaign: every job of the file gets a row
        for study in values()["audit"]:
            s = by_job.get(study["job"])
            if study in audits:
                rows.extend(_audit_rows(study, s, measured))
            else:
                rows.append(_row(study["job"], "AUC, eps_emp", study["source"], "not given",
                                 *_absent(s, study, missing)))
    runs = {r["job"]: r for r in ut.runs(res)}
    utils = [u for u in values()["utility"] if _matches(runs.get(u["job"]), u)]
    if utils:
        for study in values()["utility"]:
            run = runs.get(study["job"])
            if run is not None and study in utils:
                rows.append(_utility_row(study, run))
            else:
                rows.append(_row(study["job"], UTILITY, study["source"],
                                 _fmt(study["auroc"]), *_absent(run, study, missing)))
    return pd.DataFrame(rows, columns=COLUMNS)


def _absent(got: Any, study: dict, missing: str) -> tuple[str, str, str]:
    """(raudit, difference, reason) of a study job without a comparable result here."""
    if got is None:
        return "not run", "", missing
    if got["impl"] == "real" and got["dataset"] == study["dataset"]:
        return "not run", "", ("only its Setting A pass (real data) is stored so far: run the "
                               "campaign again to resume it")
    why = (f"this campaign's job of that name runs {got['impl']} on {got['dataset']}, "
           f"not the study's {study['impl']} on {study['dataset']}")
    return "not compared", "", why


def _matches(got: Any, study: dict) -> bool:
    """Whether a campaign job (an audit's summary row or a utility run) is the study's job
    of that name: the same implementation and dataset (and attack for an audit)."""
    if got is None:
        return False
    keys = ("impl", "dataset", "attack") if "attack" in study else ("impl", "dataset")
    return all(str(got[k]) == study[k] for k in keys)


def section(res: Results, out: Path) -> Section | None:
    frame = comparison(res)
    if frame.empty:
        return None
    study = values()["study"]
    sec = Section("Study comparison", anchor="study-comparison")
    sec.add(Para(f"The reproduction study's published values ({study['title']}, "
                 f"{study['version']}) beside this campaign's, for each job of "
                 "configs/study-audit.yaml and configs/study-utility.yaml (a job of the "
                 "file that wrote nothing yet says \"not run\"). Figure 5 is a bar chart whose "
                 "values the study's text does not give, so its AUC and eps_emp are \"not "
                 "given\" (never read off the bars); eps_emp is compared with what the text "
                 "states: eps_emp >> eps = 1 for all six implementations, with a ceiling of "
                 "about 4.7 for its 400 test models. Privacy violations (table 2) are "
                 "measured only by an inspect job of the same implementation in the "
                 "campaign; table 4's AUROC is each classifier's best over 5 fits x 5 "
                 "samples, averaged over 12 classifiers, Setting B, eps = 1."))
    sec.add(Table("Study comparison", frame, "study-comparison.csv",
                  note="difference = raudit - study; reason: why they differ (a protocol, "
                       "a default, or a named port switch), empty where they agree"))
    return sec


__all__ = ["COLUMNS", "comparison", "section", "values"]
