"""Write the study campaign's results file: one row per job of a finished (or partly
finished) `raudit campaign configs/study-audit.yaml` folder, and the study comparison.

    raudit campaign configs/study-audit.yaml --dry-run --json > plan.json   # on an empty cache
    python tools/study_results.py runs/study-audit --plan plan.json --workers 2
    python tools/study_results.py runs/study-utility     # its comparison rows that ran

writes ``docs/results/study-audit.csv`` (per job: models, model-iterations, training CPU
seconds, model-iterations per CPU-second, the plan's estimate and its error, AUC, eps_cp,
eps_max, verdict) and ``docs/results/study-comparison.csv`` (the report's study comparison:
``raudit.report.study.comparison``), and prints both as Markdown tables for docs/study.md.
Nothing here is computed that the report does not also show; this only freezes it in docs/.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

from raudit.audit.verdict import audited_eps
from raudit.report.load import load
from raudit.report.study import comparison

COLUMNS = ["job", "impl", "dataset", "attack", "models_ok", "model_iterations", "train_cpu_s",
           "model_it_per_cpu_s", "planned_cpu_s", "plan_error", "auc", "eps_cp", "eps_max",
           "verdict"]


def per_job(folder: Path, plan: dict[str, dict], workers: int) -> pd.DataFrame:
    summary = pd.read_parquet(folder / "summary")
    shadow = pd.read_parquet(folder / "shadow", columns=["job", "status", "iterations",
                                                          "train_cpu_s"])
    ok = shadow[shadow["status"] == "ok"]
    work = ok.groupby("job").agg(model_iterations=("iterations", "sum"),
                                 train_cpu_s=("train_cpu_s", "sum"))
    rows = []
    for _, s in summary.sort_values("job").iterrows():
        job = str(s["job"])
        w = work.loc[job] if job in work.index else None
        cpu = float(w["train_cpu_s"]) if w is not None else float("nan")
        its = int(w["model_iterations"]) if w is not None else 0
        planned = plan.get(job, {}).get("wall_s")
        planned_cpu = float(planned) * workers if planned else float("nan")
        rows.append({
            "job": job, "impl": s["impl"], "dataset": s["dataset"], "attack": s["attack"],
            "models_ok": int(s["models_ok"]), "model_iterations": its,
            "train_cpu_s": round(cpu, 1),
            "model_it_per_cpu_s": round(its / cpu, 1) if cpu > 0 else float("nan"),
            "planned_cpu_s": round(planned_cpu, 1),
            # > 0: the plan under-estimated (the run took longer than planned)
            "plan_error": round(cpu / planned_cpu - 1, 3) if planned_cpu > 0 else float("nan"),
            "auc": round(float(s["auc"]), 4), "eps_cp": round(float(s["eps_cp"]), 3),
            "eps_max": round(float(s["eps_max"]), 3),
            # the verdict's own bound (CP or curve, whichever is larger), not eps_cp alone
            "verdict": "VIOLATED" if audited_eps(s) > float(s["epsilon"]) else "not detected",
        })
    return pd.DataFrame(rows, columns=COLUMNS)


def markdown(frame: pd.DataFrame) -> str:
    cells = frame.map(lambda v: "" if pd.isna(v) else str(v))
    head = "| " + " | ".join(cells.columns) + " |"
    rule = "|" + "|".join("---" for _ in cells.columns) + "|"
    return "\n".join([head, rule, *("| " + " | ".join(r) + " |" for r in cells.to_numpy())])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("folder", type=Path, help="the campaign's --out folder")
    ap.add_argument("--plan", type=Path, help="`raudit campaign ... --dry-run --json` output")
    ap.add_argument("--workers", type=int, default=2, help="workers the plan was made for")
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    a = ap.parse_args()
    plan = {}
    if a.plan:
        plan = {r["job"]: r for r in json.loads(a.plan.read_text())["jobs"]}
    comp = comparison(load(a.folder))
    a.out.mkdir(parents=True, exist_ok=True)
    if not (a.folder / "summary").exists():  # a utility campaign: its comparison rows only
        comp = comp[comp["raudit"] != "not run"]
        comp.to_csv(a.out / "study-utility-comparison.csv", index=False)
        print(markdown(comp))
        return
    jobs = per_job(a.folder, plan, a.workers)
    jobs.to_csv(a.out / "study-audit.csv", index=False)
    comp.to_csv(a.out / "study-comparison.csv", index=False)
    print(markdown(jobs))
    print()
    print(markdown(comp))


if __name__ == "__main__":
    main()
