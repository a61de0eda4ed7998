"""`raudit campaign`: many audits and utility runs from one YAML file, over one actor pool."""

from __future__ import annotations

import json
import math
from pathlib import Path
from collections.abc import Mapping
from typing import Annotated, Any, Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import results_only_stdout, user_errors

Only = Annotated[Optional[list[str]], typer.Option("--only", help="Run only these jobs (names or shell patterns, repeatable).")]


@user_errors
def campaign(
    config: Annotated[Path, typer.Argument(help="Campaign file (YAML), e.g. configs/quick-audit.yaml.")],
    out: Annotated[Optional[Path], typer.Option("--out", parser=opt.out_folder, help="Result folder, tables partitioned by job (rerun to resume). Default runs/campaign-NAME.")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Validate, calibrate and print the plan: jobs, fits, model-iterations, estimated time. Trains nothing.")] = False,
    only: Only = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-w", help="Actors (default: one per CPU, or per GPU share).")] = None,
    backend: opt.Backend = "ray",
    device: Annotated[str, typer.Option("--device", help="auto (GPU slots when the cluster has GPUs), cpu or cuda.")] = "auto",
    per_gpu: Annotated[int, typer.Option("--per-gpu", help="Actors sharing one GPU.")] = 1,
    retries: Annotated[int, typer.Option("--retries", help="Further attempts of a failed chunk.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results (or the plan) as JSON.")] = False,
    export: Annotated[Optional[Path], typer.Option("--export", help="Write the rows finished so far in --out to FILE (a self-checking zip of Parquet parts) and stop; continue on another machine with --import.")] = None,
    import_: Annotated[Optional[Path], typer.Option("--import", help="Start a fresh --out from an --export FILE of this campaign, then continue the campaign there.")] = None,
) -> None:
    """Run a campaign: audits, utility benchmarks and inspections of one YAML file, every chunk over one Ray actor pool.

    Each job writes its own partition of each table (OUT/shadow/job=NAME/...): `pd.read_parquet(OUT/"summary")` reads them all with a `job` column. Rerun to resume; a failing job is reported and the others finish. Exits 1 if a job failed.
    """
    from raudit.campaign import config as cf
    from raudit.campaign.run import load_jobs, run_campaign
    from raudit.cli.progress import phase_bars
    from raudit.engine.driver import EngineConfig

    from raudit.campaign.transfer import check_request

    check_request(export, import_, dry_run)
    engine = EngineConfig(backend=backend, workers=workers, device=device, per_gpu=per_gpu,
                          retries=retries)
    if dry_run:
        from raudit.campaign.dryrun import PLAN_COLUMNS, dry_plan, plan_view
        from raudit.cli import tables

        header, jobs = load_jobs(config, only, dry_run=True)  # no plugin imported or run
        rows = dry_plan(jobs, engine, _notice)
        if as_json:
            typer.echo(json.dumps({"name": header["name"], "jobs": rows,
                                   "skipped_jobs": {m.job: m.reason for m in header["skipped"]}},
                                  indent=2))
        else:
            title, cells, notes = plan_view(header, rows, engine)
            from raudit.campaign.plan import skipped_lines
            notes = [*skipped_lines(header["skipped"]), *notes]
            tables.show(PLAN_COLUMNS, cells, title=title, notes=notes,
                        right=PLAN_COLUMNS[4:])
        return
    top, _ = cf.load(config)
    out = out or Path("runs") / f"campaign-{top['name']}"
    if export is not None or import_ is not None:
        from raudit.campaign import transfer

        if export is not None:
            got = transfer.export_campaign(config, out, export)
            typer.echo(f"exported {len(got['jobs'])} job(s), {got['files']} file(s), "
                       f"{got['bytes'] / 1e6:.1f} MB to {got['file']}; continue with `raudit "
                       f"campaign {config} --out DIR --import {got['file']}`")
            return
        assert import_ is not None  # one of the two was given
        got = transfer.import_campaign(config, out, import_)
        _notice(f"imported {len(got['jobs'])} job(s) ({got['files']} file(s)) into {out}; "
                "continuing the campaign")
    # bars per job and for the whole campaign, each with its ETA (nothing off a terminal)
    with results_only_stdout(), phase_bars(quiet=as_json) as progress:
        result = run_campaign(config, out, engine, progress, notice=_notice, only=only,
                              estimate=True)  # the total first, before anything trains
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=_plain))
    else:
        _show(result)
    if result["failed_jobs"]:
        raise typer.Exit(1)




def _notice(message: str) -> None:
    from raudit.cli.progress import notice

    notice(message)


def _plain(v: object) -> str | None:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


def _show(r: Mapping[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"raudit campaign {r['name']}: {len(r['jobs'])} job(s) -> {r['out']}",
              title_justify="left")
    for col in ("job", "kind", "status", "result"):
        t.add_column(col)
    for name, j in r["jobs"].items():
        if j["status"] != "ok":
            res = j.get("error", "")[:160]
        elif j["kind"] == "audit":
            res = (f"AUC {j['auc']:.3f}, eps_cp {j['eps_cp']:.2f} of max {j['eps_max']:.2f}, "
                   f"{j['models_ok']} models ok")
        elif j["kind"] == "utility":
            aucs = ", ".join("n/a" if a is None else f"{a:.3f}" for a in j["auroc_B"])
            res = f"{j['points']} sweep point(s), AUROC (B) {aucs}"
        else:
            res = "see " + str(Path(r["out"]) / "inspect" / f"job={name}")
        t.add_row(name, j["kind"], j["status"], res)
    Console().print(t)
    if r.get("skipped_jobs"):
        Console().print(f"{len(r['skipped_jobs'])} job(s) skipped (dataset not on this machine): "
                        + ", ".join(r["skipped_jobs"]))
    Console().print(f"{r['models_run']:,} models trained in {r['wall_s']:.1f} s on "
                    f"{r['placement']}" + "".join(f"; {n}" for n in r["notes"]))
