"""The inspect part of a report, written for a reader who is not a PATE expert (a
data-protection officer): a plain-language paragraph, then the violations table (the
study's columns, then raudit's extra ones), then one line of details per run and a
figure of the teachers' coverage.

The page stays short whatever the number of runs: every cell links to its evidence on a
sub-page (inspect-evidence, with the plots), and the raw per-iteration eps_hat and the
rows each teacher read are written as CSV/JSON and linked, never printed inline.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from raudit.inspect.cells import EXTRA, OTHER_BUGS, STUDY, TITLES
from raudit.inspect.report import run_notes
from raudit.plots import pyplot, save, slug
from raudit.report.inspect_evidence import anchor, evidence_page
from raudit.report.load import Results
from raudit.report.model import Figure, Links, Para, Section, Table
from raudit.results.files import write_atomic

ORDER = {"violated": 0, "ok": 1, "not_checked": 2, "not_applicable": 3}
WORD = {"violated": "violated", "ok": "ok", "not_checked": "?", "not_applicable": "n/a"}
EVIDENCE = "inspect-evidence"


def _runs(res: Results) -> list[tuple[str, dict]]:
    return [(ins.job or "", r) for ins in res.inspects for r in ins.runs if isinstance(r, dict)]


def _statuses(res: Results) -> pd.DataFrame:
    """The long violations table of every inspect folder, with a ``job`` column."""
    frames = [ins.violations.assign(job=ins.job or "") for ins in res.inspects]
    if not frames:
        return pd.DataFrame(columns=["job", "impl", "category", "status", "evidence", "plot"])
    return pd.concat(frames, ignore_index=True)


def _seen(run: dict) -> dict:
    raw = run.get("teachers_seen")
    return raw if isinstance(raw, dict) else {}  # an older folder may hold something else


def coverage(run: dict) -> dict:
    """Counts of what the teachers read (``teachers_seen``: id -> row ids; -1 is a critic
    or student that read real rows): teachers, rows per teacher, rows read by two or more
    teachers, and real rows seen outside the teachers."""
    seen = {int(k): np.asarray(v, dtype=np.int64).ravel() for k, v in _seen(run).items()}
    teach = [seen[t] for t in sorted(seen) if t >= 0]
    sizes = [int(np.unique(r).size) for r in teach]
    rows = np.concatenate([np.unique(r) for r in teach]) if teach else np.zeros(0, np.int64)
    _, counts = np.unique(rows, return_counts=True)
    return {"teachers": len(teach), "min_rows": min(sizes, default=0),
            "max_rows": max(sizes, default=0), "shared_rows": int((counts > 1).sum()),
            "covered_rows": int(counts.size),
            "outside_rows": int(np.unique(seen[-1]).size) if -1 in seen else 0}


def reading(matrix: pd.DataFrame, runs: list[tuple[str, dict]]) -> str:
    """The one paragraph a non-specialist reads first."""
    names = lambda df: ", ".join(  # noqa: E731 - a local formatter
        f"{r['impl']}" + (f" [{r['job']}]" if r["job"] else "") for _, r in df.iterrows())
    priv = [t for k, t in STUDY if k not in OTHER_BUGS]
    bugs = [TITLES[k] for k in OTHER_BUGS]
    extra = [t for _, t in EXTRA]
    is_v = matrix[priv + bugs + extra] == "violated"
    broken = matrix[is_v[priv].any(axis=1)]
    other = matrix[~is_v[priv].any(axis=1) & is_v[bugs + extra].any(axis=1)]
    clean = matrix[~is_v.any(axis=1)]
    eps = sorted({r.get("settings", {}).get("epsilon") for _, r in runs} - {None})
    data = sorted({str(r.get("dataset")) for _, r in runs})
    text = (f"raudit trained {len(matrix)} implementation(s) once each on {', '.join(data)} "
            f"(eps = {', '.join(f'{e:g}' for e in eps) or '?'}) while recording what each one "
            "did, and compared that with the PATE-GAN algorithm. ")
    if len(broken):
        text += (f"{len(broken)} of them break a privacy promise in the way they are built: "
                 "the eps they report is not the protection the training data actually got "
                 f"({names(broken)}). ")
    if len(other):
        text += (f"{len(other)} more show a deviation that raudit also checks (a bug in the "
                 "teachers or the data processing, real rows reaching the generator, "
                 f"uncharged queries, or training past eps): {names(other)}. ")
    if len(clean):
        text += f"No checked violation was found in {names(clean)}. "
    return text + ("A '?' (not checked) means raudit could not measure that point for that "
                   "implementation (it reports no training events), not that it is safe; "
                   "'n/a' means the check does not apply to its design. Each cell links to the "
                   "measurement behind it.")


def _matrix(stat: pd.DataFrame, runs: list[tuple[str, dict]]) -> tuple[pd.DataFrame, dict]:
    cols = [k for k, _ in STUDY + EXTRA]
    keys = list(dict.fromkeys([(j, r.get("impl")) for j, r in runs]
                              + list(zip(stat["job"], stat["impl"]))))
    status = {(j, i, c): s for j, i, c, s in zip(stat["job"], stat["impl"], stat["category"],
                                                 stat["status"])}
    recs, links = [], {}
    for n, (job, impl) in enumerate(keys):
        rec = {"job": job, "impl": impl}
        for c in cols:
            rec[TITLES[c]] = status.get((job, impl, c), "not_checked")
            has_row = (job, impl, c) in status  # else the run's part of the page
            links[(n, TITLES[c])] = f"page:{EVIDENCE}#{anchor(job, impl, c if has_row else None)}"
        links[(n, "impl")] = f"page:{EVIDENCE}#{anchor(job, impl)}"
        recs.append(rec)
    frame = pd.DataFrame(recs, columns=["job", "impl", *(TITLES[c] for c in cols)])
    return frame, links


def _details(runs: list[tuple[str, dict]]) -> tuple[pd.DataFrame, dict]:
    recs, links = [], {}
    for n, (job, r) in enumerate(runs):
        cov = coverage(r)
        eps_hat = r.get("final_eps_hat")
        recs.append({"job": job, "impl": r.get("impl"), "dataset": r.get("dataset"),
                     "eps": (r.get("settings") or {}).get("epsilon"),
                     "iterations": r.get("iterations"),
                     "final eps_hat": "" if eps_hat is None else f"{float(eps_hat):.5g}",
                     "teachers": cov["teachers"],
                     "rows per teacher": (f"{cov['min_rows']}-{cov['max_rows']}"
                                          if cov["teachers"] else ""),
                     "rows shared by teachers": cov["shared_rows"] if cov["teachers"] else "",
                     "real rows outside teachers": cov["outside_rows"] or "",
                     "note": "; ".join(run_notes(r))})
        links[(n, "impl")] = f"page:{EVIDENCE}#{anchor(job, r.get('impl'))}"
    return pd.DataFrame(recs), links


def coverage_figure(runs: list[tuple[str, dict]], path: Path) -> Path | None:
    """Per run: the rows the teachers read between them, the rows two or more teachers
    read (a partition bug) and the real rows read outside the teachers."""
    rows = [(f"{r.get('impl')}" + (f" [{j}]" if j else ""), coverage(r)) for j, r in runs]
    rows = [(name, c) for name, c in rows if c["teachers"] or c["outside_rows"]]
    if not rows:
        return None
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.32 * len(rows)))
    y = np.arange(len(rows))[::-1]
    h = 0.27
    for off, key, label, colour in ((h, "covered_rows", "rows read by the teachers", "tab:blue"),
                                    (0, "shared_rows", "rows read by 2+ teachers", "tab:red"),
                                    (-h, "outside_rows", "real rows read outside the teachers",
                                     "tab:orange")):
        ax.barh(y + off, [c[key] for _, c in rows], height=h, color=colour, label=label)
    ax.set_yticks(y, [f"{name} ({c['teachers'] or 'no'} teachers)" for name, c in rows])
    ax.set_xlabel("training rows")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1), fontsize=8)
    ax.set_title("What the teachers read (rows of the training table)", fontsize=10)
    return save(fig, path, dpi=90)


def _raw(res: Results, runs: list[tuple[str, dict]], stat: pd.DataFrame, out: Path) -> Links:
    """The raw lists, as files: per-iteration eps_hat, the rows each teacher read, and each
    folder's inspect.json as it was written."""
    eps = pd.DataFrame([(j, r.get("impl"), i, e) for j, r in runs
                        for i, e in enumerate(r["eps_hat"] if isinstance(r.get("eps_hat"), list)
                                              else [])],
                       columns=["job", "impl", "iteration", "eps_hat"])
    seen = pd.DataFrame([(j, r.get("impl"), int(t), row) for j, r in runs
                         for t, rows in _seen(r).items() for row in rows],
                        columns=["job", "impl", "teacher", "row"])
    items = []
    (out / "tables").mkdir(parents=True, exist_ok=True)
    (out / "raw").mkdir(parents=True, exist_ok=True)
    for name, frame in (("inspect_eps_hat.csv", eps), ("inspect_teachers_seen.csv", seen),
                        ("violations.csv", stat)):
        text = frame.to_csv(index=False)
        write_atomic(out / "tables" / name, lambda fh, t=text: fh.write(t.encode("utf-8")))
        items.append((name, f"tables/{name}"))
    for ins in res.inspects:
        name = slug("inspect", ins.job, "runs") + ".json"
        text = json.dumps(ins.runs, indent=1)
        write_atomic(out / "raw" / name, lambda fh, t=text: fh.write(t.encode("utf-8")))
        items.append((name, f"raw/{name}"))
    return Links("Raw data (kept off this page): eps_hat per iteration, the row ids each "
                 "teacher read (teacher -1: real rows read outside the teachers), every cell "
                 "with its evidence, and the runs as inspect wrote them:", items)


def section(res: Results, out: Path) -> Section | None:
    if not res.inspects:
        return None
    sec = Section("Inspect: privacy violations found in training")
    runs, stat = _runs(res), _statuses(res)
    matrix, links = _matrix(stat, runs)
    multi = matrix["job"].nunique() > 1 or (matrix["job"] != "").any()
    sec.add(Para(reading(matrix, runs)))
    shown = matrix if multi else matrix.drop(columns="job")
    counts = pd.Series(matrix.iloc[:, 2:].to_numpy().ravel()).value_counts()  # cells shown
    sec.add(Table("Violations per implementation (the study's table 2, then raudit's extra "
                  "checks)", shown, "inspect_matrix.csv", display=WORD, note=(
                      f"The first {len(STUDY)} columns are the reproduction study's table 2 "
                      f"(the last two of them, {', '.join(TITLES[k] for k in OTHER_BUGS)}, are "
                      f"bugs that do not break privacy themselves); the last {len(EXTRA)} are "
                      "measured by raudit as well. Cells: "
                      + ", ".join(f"{counts.get(s, 0)} {s.replace('_', ' ')}" for s in ORDER)
                      + " ('?' not checked, 'n/a' not applicable)."),
                  links=links))
    details, dlinks = _details(runs)
    if not details.empty:
        if not multi:
            details = details.drop(columns="job")
        sec.add(Table("Each run", details, "inspect_runs.csv", links=dlinks, note=(
            "final eps_hat: the eps the implementation itself reports at the end (5 digits here; "
            "full precision in the raw files below).")))
    fig = coverage_figure(runs, out / "figures" / "inspect-coverage.png")
    if fig is not None:
        sec.add(Figure("Teachers' coverage", fig.relative_to(out).as_posix(),
                       "Counts per run; a partition that works has no red bar.", wide=True))
    sec.add(_raw(res, runs, stat, out))
    page, missing = evidence_page(res, stat, out, f"{res.root.name}: inspect evidence")
    sec.pages[EVIDENCE] = page
    if missing:
        sec.add(Para(f"Evidence plot(s) named in violations.csv but absent: "
                     f"{', '.join(missing)}."))
    return sec
