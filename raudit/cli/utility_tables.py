"""Rich tables of a utility result: per classifier (study table 5) and summary (table 4)."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.table import Table

from raudit.utility import controls


def _f(x: float | None, d: int = 4) -> str:
    return "n/a" if x is None else f"{x:.{d}f}"


def _pm(m: float | None, se: float | None) -> str:
    return "n/a" if m is None else f"{m:.4f} ± {_f(se)}"


def per_classifier(r: dict[str, Any]) -> Table:
    from raudit import classifiers

    real = (r.get("real") or {}).get("per_classifier", {})
    pc = r.get("per_classifier", [])
    labels = list(dict.fromkeys(p["label"] for p in pc if p["label"] != "real"))
    names = list(dict.fromkeys([p["classifier"] for p in pc] + list(real)))
    order = {n: i for i, n in enumerate(classifiers.STUDY_12)}
    names.sort(key=lambda n: order.get(n, 99))
    cell = {(p["label"], p["classifier"], p["setting"], p["metric"]): p for p in pc}
    single = len(labels) == 1
    t = Table(title=f"AUROC per classifier: best of {r['fits']} fits x {r['samples']} samples"
              if labels else "Setting A (train real, test real)", title_justify="left")
    t.add_column("classifier")
    if real:
        t.add_column("A AUROC", justify="right")
        t.add_column("A AUPRC", justify="right")
    cols = ([(labels[0], "B", "auroc"), (labels[0], "B", "auprc"), (labels[0], "C", "auroc")]
            if single else [(lab, "B", "auroc") for lab in labels])
    for lab, s, m in cols:
        t.add_column(f"{s} {m.upper()}" + ("" if single else f" {lab}"), justify="right")
    if single:
        t.add_column("B AUROC mean ± se", justify="right")
    sums: dict[int, list[float]] = {}
    for n in names:
        row = [classifiers.get(n).label]
        vals = []
        if real:
            vals += [real.get(n, {}).get("auroc"), real.get(n, {}).get("auprc")]
        vals += [(cell.get((lab, n, s, m)) or {}).get("best") for lab, s, m in cols]
        for i, v in enumerate(vals):
            if v is not None:
                sums.setdefault(i, []).append(v)
        row += [_f(v) for v in vals]
        if single:
            c = cell.get((labels[0], n, "B", "auroc")) or {}
            row.append(_pm(c.get("mean"), c.get("se")))
        t.add_row(*row)
    avg = [_f(sum(v) / len(v)) if (v := sums.get(i)) else "n/a"
           for i in range(len(t.columns) - 1 - (1 if single else 0))]
    t.add_row("Average", *avg, *([""] if single else []), style="bold")
    return t


def summary(r: dict[str, Any]) -> Table:
    t = Table(title=f"{r['impl']} on {r['dataset']}: average over classifiers of the best "
              f"of {r['fits']} x {r['samples']}", title_justify="left")
    for c in ("point", "fits", "AUROC B", "AUPRC B", "B mean ± se", "AUROC C",
              "SRA A~C", "feat. agr.", "drop vs A", "iters", "eps_hat", "1-class"):
        t.add_column(c, justify="left" if c == "point" else "right")
    for p in r["points"]:
        if p.get("status") != "ok":
            t.add_row(p["label"], "0", f"[yellow]{p.get('status')}[/yellow]", *[""] * 9)
            continue
        drop = p.get("drop_vs_real")
        t.add_row(p["label"], str(p["fits_ok"]), _f(p.get("auroc_B")), _f(p.get("auprc_B")),
                  _pm(p.get("auroc_B_mean"), p.get("auroc_B_se")), _f(p.get("auroc_C")),
                  _f(p.get("sra"), 3), _f(p.get("feature_agreement"), 3),
                  "n/a" if drop is None else f"{100 * drop:.1f}%",
                  _f(p.get("iterations"), 0), _f(p.get("eps_hat"), 3),
                  _f(p.get("single_class_share"), 2))
    return t


def learning(r: dict[str, Any], curve: dict[str, Any]) -> Table:
    """Real vs its data-free control per eps (B AUROC mean +- se over fits x samples), the
    paired one-sided test over fits, and the learning threshold."""
    thr = curve.get("threshold")
    alpha = curve.get("alpha", 0.05)
    top = max((row["epsilon"] for row in curve["rows"]), default=None)
    says = (f"{thr:g}" if thr is not None else f"> {top:g}" if top is not None else "n/a")
    group = f" ({curve['group']})" if curve.get("group") else ""
    t = Table(title=f"{r['impl']} on {r['dataset']}{group}: real vs {controls.title(curve.get('control'))}; learning "
              f"threshold (smallest eps, paired one-sided t over fits, p < {alpha:g}): {says}",
              title_justify="left")
    for c in ("eps", "real B mean ± se", "control B mean ± se", "diff ± se", "p", "fits",
              "1-class real/ctrl"):
        t.add_column(c, justify="right")
    for row in curve["rows"]:
        sc = "/".join(_f(row.get(k), 2) for k in ("real_single_class", "control_single_class"))
        # a data-dependent release above eps: the row is shown, it never sets the threshold
        spent = f" (eps_hat {row['eps_hat_max']:.4g}!)" if row.get("over_eps") else ""
        t.add_row(f"{row['epsilon']:g}{spent}", _pm(row.get("real_mean"), row.get("real_se")),
                  _pm(row.get("control_mean"), row.get("control_se")),
                  _pm(row.get("diff"), row.get("se")), _f(row.get("p"), 4),
                  str(row.get("fits")), sc)
    return t


def show(r: dict[str, Any]) -> None:
    import sys

    con = Console() if sys.stdout.isatty() else Console(width=160)
    con.print(per_classifier(r))
    if r["points"]:
        con.print(summary(r))
    for curve in r.get("learning") or []:
        con.print(learning(r, curve))
    for p in r["points"]:
        if p.get("status") != "ok":
            con.print(f"[yellow]{p['label']} {p.get('status')}[/yellow]: {p.get('reason')}")
        elif p.get("fits_no_step"):
            con.print(f"[yellow]{p['label']}[/yellow]: {p['fits_no_step']} of {p['fits_ok']} fits "
                      f"took no step (0 iterations: the generator is its initialisation)")
    real = r.get("real") or {}
    if real:
        con.print(f"Setting A (real): AUROC {_f(real.get('auroc'))}, AUPRC {_f(real.get('auprc'))}")
    if any(p.get("drop_vs_reference") is not None for p in r["points"]):
        for p in r["points"]:
            if p.get("drop_vs_reference") is not None:
                con.print(f"{p['label']}: AUROC drop vs --reference {100 * p['drop_vs_reference']:.1f}%")
    from raudit.utility.verdict import learning_sentence, sentence

    for p in r["points"]:
        con.print(f"verdict: {sentence(r['impl'], r['dataset'], p, real)}", markup=False,
                  highlight=False)
    for c in r.get("learning") or []:
        if line := learning_sentence(r["impl"], r["dataset"], c, real):
            con.print(f"learning: {line}", markup=False, highlight=False)
    what = " + ".join(([f"{r['fits_run']} fits"] if r["fits_run"] else [])
                      + (["Setting A"] if r.get("real_run") else []))
    run = (f"{what} in {r['wall_s']:.1f} s on {r['placement']}" if what
           else "nothing to run: every fit was already in --out (resumed)")
    con.print(f"this run: {run}")
    for n in r.get("notes") or []:
        con.print(f"note: {n}")
    if r.get("plot"):
        con.print(f"plot: {r['plot']}")
    if r.get("learning_plot"):
        con.print(f"plot: {r['learning_plot']}")
    con.print(f"results: {r['out']} (table utility)")
