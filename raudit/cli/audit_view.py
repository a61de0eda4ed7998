"""What `raudit audit` prints: the summary as a table (every registered estimator, the
ceiling, what the run did) and its verdict, or as JSON. Split from
:mod:`raudit.cli.audit`, which parses and checks the options and runs the audit.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from raudit.audit.threat_model import read_models
from raudit.privacy import fmt_delta


def jsonable(d: Mapping[str, Any]) -> dict[str, Any]:
    def fix(v: object) -> object:
        if isinstance(v, float) and not math.isfinite(v):
            return None
        if hasattr(v, "isoformat"):
            return v.isoformat()
        return v
    return {k: fix(v) for k, v in d.items()}


def summary_json(result: Mapping[str, Any]) -> dict[str, Any]:
    """The dict `raudit audit --json` prints, which :class:`raudit.api.AuditResult` keeps as
    its ``summary``: models counted in both worlds, the estimates as the table shows them
    (``estimates_shown``; the full values stay in ``estimates``), times as ISO strings."""
    from raudit.audit.estimators import estimate_lines, values_of
    from raudit.audit.summary import counted_both_worlds

    shown = dict(estimate_lines(result, values_of(result)))
    return jsonable(counted_both_worlds({**result, "estimates_shown": shown}))


def _fmt(x: float | None, digits: int = 3) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.{digits}f}"


def claimed(r: Mapping[str, Any]) -> str:
    """The claim as the generator makes it: a pure-DP generator (``default_delta`` None)
    claims delta 0; the bounds still use the audit's delta (a pure-DP mechanism is
    (eps, delta)-DP for every delta), which the line names."""
    from raudit import generators

    impl = r.get("impl") or ""
    if impl in generators.names() and generators.get(impl).default_delta is None:
        return (f"{r['epsilon']:g} (pure DP, delta 0; the bounds are computed at delta "
                f"{fmt_delta(r['delta'])})")
    return f"{r['epsilon']:g} (delta {fmt_delta(r['delta'])})"


def show(r: Mapping[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    from raudit.audit.estimators import ESTIMATORS, bound_names, estimate_lines, values_of
    from raudit.audit.threat_model import trials_of
    from raudit.audit.verdict import no_signal, tail_threshold

    trials = trials_of(r)

    t = Table(title=f"raudit audit: {r['impl']} vs {r['attack']} ({r['features']})",
              show_header=False, title_justify="left")
    t.add_column(style="bold")
    t.add_column()
    t.add_row("dataset / target", f"{r['dataset']} / {r['target']}")
    t.add_row("threat model", r.get("threat_model") or "black-box")
    t.add_row("epsilon (claimed)", claimed(r))
    t.add_row("AUC (test)", _fmt(r["auc"]))
    if no_signal(r):
        t.add_row("TPR / FPR", f"{_fmt(r['tpr'])} / {_fmt(r['fpr'])}: no threshold separates "
                  "the worlds (the attack found no signal)")
    else:  # a tail threshold with a bound above 0 is the best one, not "no signal"
        bound = any((r.get(k) or 0) > 0 for k in ("eps_cp", "eps_curve"))
        tail = "" if not tail_threshold(r) else (
            " (in a tail: the bound comes from the few trials beyond it)" if bound else
            " (in a tail: every test model on one side, yet the test AUC shows signal)")
        t.add_row("TPR / FPR", f"{_fmt(r['tpr'])} / {_fmt(r['fpr'])} at threshold "
                  f"{_fmt(r['threshold'])} ({r['direction'] or 'n/a'}){tail}")
    if r["eps_max"] is not None and r["eps_max"] == 0:  # the ceiling itself is 0
        sat = " [yellow]too few test models to certify any eps > 0: raise --shadow-models[/yellow]"
    elif r["saturated"]:
        sat = " [red]SATURATED: at the ceiling, more models could show more[/red]"
    else:
        sat = ""
    # the bounds (raudit.audit.estimators: valid for any mechanism), CP first with the
    # ceiling; then the estimates apart, each under its assumption
    values = values_of(r)
    t.add_row(ESTIMATORS.get("cp").label, f"{_fmt(values['cp'])}  of max {_fmt(r['eps_max'])}{sat}")
    for name in bound_names():
        if name != "cp" and values[name] is not None:
            t.add_row(ESTIMATORS.get(name).label, _fmt(values[name]))
    rows = estimate_lines(r, values)
    if rows:
        t.add_row("estimates", "not bounds: each holds only under its assumption; never in "
                  "the verdict")
        for label, text in rows:
            t.add_row(f"  {label}", text)
    missing = f" [yellow]({r['missing']} missing)[/yellow]" if r["missing"] else ""
    if r.get("eps_anytime") is not None:
        t.add_row("anytime", f"eps >= {_fmt(r['eps_anytime'])} after {r['models_ok']} trials, "
                  f"{r['looks']} look(s): {r['stop_reason']}")
    elif r.get("canaries"):
        t.add_row("one run", f"{r['canaries']} canaries: {r['one_run_correct']} of "
                  f"{r['one_run_guesses']} guesses right, eps >= {_fmt(r['eps_one_run'])} "
                  "(assumes pure DP)")
    else:  # what the trials were: shadow models, synthetic files or mechanism-only trials
        t.add_row(trials.plural, f"{r['models_ok']} ok of {2 * r['shadow_models']}{missing}")
    if r.get("looks") and r.get("eps_anytime") is None:
        t.add_row("sequential", f"{r['looks']} look(s), stopped: {r['stop_reason']} (each look "
                  "at its share of alpha, so the bound keeps its confidence)")
    if r.get("feature_view"):
        t.add_row(*_view_row(r))
    if r.get("first_error"):
        t.add_row("first error", r["first_error"])
    rows_txt = ("each world its own training size (the study's protocol)"
                if r.get("synthetic_protocol") == "per-world" else "the same in both worlds")
    if r.get("synthetic_protocol") != "none":  # a mechanism-only trial samples no data
        t.add_row("synthetic rows", f"{r['synthetic_rows']} per model, {rows_txt}")
    rate = r.get("models_per_hour")
    # what the run counts: "1 run" of a one-run audit (not "1 models"), mechanism-only trials
    unit, units = {"canaries": ("run", "runs"), "mechanism": ("trials", "trials")}.get(
        trials.kind, ("models", "models"))
    if r.get("impl") == "external":
        t.add_row("this run", f"data-only audit of {r['models_ok']} synthetic files")
    elif r["models_run"] or r.get("failed_chunks"):
        per_hour = f"{rate:,.0f} {units}/hour" if rate else ""
        if r.get("train_s"):  # the rate is of the training alone: beside the wall time with
            # the analysis, the two read as a contradiction (100 models in 10.4 s, 470,543/hour)
            took = (f"trained in {r['train_s']:.1f} s" + (f" ({per_hour})" if rate else "")
                    + f", {r['wall_s']:.1f} s with the analysis")
        else:  # the threat models whose result carries no training time
            took = f"in {r['wall_s']:.1f} s" + (f", {per_hour}" if rate else "")
        t.add_row("this run", f"{r['models_run']} {unit} {took} on {r['placement']}")
    else:
        t.add_row("this run", "nothing to train: every model was already in --out (resumed)")
    if "target_aucs" in r:
        best = r["target_aucs"].get(str(r["target_row"]))
        t.add_row("target selection", f"{len(r['target_aucs'])} candidates scored by "
                  f"{r.get('selection_models', 0)} models trained in this run, best AUC "
                  f"{_fmt(best)} (row {r['target_row']})")
    for note in r.get("notes") or []:
        t.add_row("note", note)
    t.add_row("results", r["out"])
    Console().print(t)
    Console().print(f"[bold]verdict:[/bold] {r['verdict']}")
    if r.get("verdict_line"):
        Console().print(f"[bold]claimed / mechanism / audited:[/bold] {r['verdict_line']}"
                        + (f" (eps_true: {r['eps_true_method']}, {r['eps_true_source']})"
                           # the line itself names the source where eps_true is n/a
                           if r.get("eps_true_source") and r.get("eps_true_method") else ""))


def _view_row(r: Mapping[str, Any]) -> tuple[str, str]:
    """The feature view the audit chose on validation, and what it chose among."""
    why = "the largest bound on the validation split; the test split is not read to choose"
    if read_models(r.get("threat_model")):
        return "white-box features", f"{r['feature_view']} (of black-box, white-box and union: {why})"
    from raudit.attacks import get as get_attack

    names = [v for v, _ in get_attack(r["attack"]).views] + ["union"]
    return "attack chosen", f"{r['feature_view']} (of {', '.join(names)}: {why})"
