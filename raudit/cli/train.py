"""`raudit train`: fit one generator and write its synthetic data and a JSON summary."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import user_errors
from raudit.cli.progress import iteration_bar
from raudit.privacy import fmt_delta, fmt_eps


@user_errors
def train(
    impl: opt.Impl = "paper",
    dataset: opt.Dataset = "breast-cancer",
    epsilon: opt.Epsilon = 1.0,
    delta: opt.Delta = None,
    teachers: opt.Teachers = None,
    lam: opt.Lambda = None,
    max_iter: opt.MaxIter = None,
    seed: opt.Seed = 0,
    preset: opt.Preset = "default",
    label: opt.Label = None,
    bounds: opt.Bounds = None,
    device: opt.Device = "auto",
    threads: opt.Threads = 1,
    option: opt.Options = None,
    rows: Annotated[Optional[int], typer.Option("--rows", help="Synthetic rows to generate (default: as many as the training set).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", parser=opt.out_folder, help="Output folder (default runs/train-IMPL-DATASET-sSEED).")] = None,
    fmt: Annotated[str, typer.Option("--format", help="Synthetic data file format: parquet or csv.")] = "parquet",
    parallel: Annotated[str, typer.Option("--parallel", help="none, or `teachers`: teacher shards on Ray actors.")] = "none",
    workers: Annotated[int, typer.Option("--workers", help="Ray actors for --parallel teachers.")] = 2,
    events: Annotated[bool, typer.Option("--events", help="Record every training event (teacher batches, votes, accountant steps) to events.parquet in --out.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as JSON.")] = False,
) -> None:
    """Fit one generator on a dataset; write synthetic data and summary.json to --out."""
    from raudit.runs.train import TrainSettings, run_train

    r = run_train(TrainSettings(
        impl=impl, dataset=dataset, epsilon=epsilon, delta=delta, teachers=teachers, lam=lam,
        max_iter=max_iter, seed=seed, preset=preset, label=label, bounds=bounds, device=device,
        threads=threads, options=option, rows=rows, out=out, fmt=fmt, parallel=parallel,
        workers=workers, events=events),
        bar=lambda description, total: iteration_bar(description, total, quiet=as_json))
    summary = r.summary
    if as_json:
        typer.echo(json.dumps(summary, default=str, indent=2))
    else:
        typer.echo(f"{impl} on {summary['dataset']}: {summary['iterations']} iterations, eps_hat "
                   f"{fmt_eps(summary['eps_hat'])} (eps {epsilon:g}, delta "
                   f"{fmt_delta(summary['delta'])}), {summary['wall_s']:.1f} s -> {r.out}/")
        for note in r.warnings:  # 0 iterations is never reported silently: the generator's why
            typer.echo(f"warning: {note}", err=True)
