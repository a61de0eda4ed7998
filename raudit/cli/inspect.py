"""`raudit inspect`: instrumented training and a measured privacy-violation table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import user_errors
from raudit.inspect.job import STUDY_LAMBDA, STUDY_MAX_ITER, STUDY_TEACHERS


@user_errors
def inspect(
    impl: Annotated[Optional[list[str]], typer.Option("--impl", "-i", help="Generator name or plugin module:Class (repeatable).")] = None,
    all_: Annotated[bool, typer.Option("--all", help="Inspect every registered generator.")] = False,
    dataset: opt.Dataset = "cervical",
    epsilon: opt.Epsilon = 1.0,
    delta: opt.Delta = None,
    teachers: Annotated[int, typer.Option("--teachers", "-k", help="Teachers, where the generator has them (the study: 5).")] = STUDY_TEACHERS,
    lam: Annotated[float, typer.Option("--lambda", help="PATE lambda, where the generator has one (the study: 1e-3).")] = STUDY_LAMBDA,
    max_iter: Annotated[int, typer.Option("--max-iter", help="Cap on iterations (lowers a generator's own count, never raises it).")] = STUDY_MAX_ITER,
    seed: opt.Seed = 0,
    preset: opt.Preset = "default",
    option: opt.Options = None,
    label: opt.Label = None,
    bounds: opt.Bounds = None,
    probes: Annotated[bool, typer.Option("--probes/--no-probes", help="Run the accountant probe (lambda 1) and the bounds probe (one extra training each).")] = True,
    threads: opt.Threads = 1,
    out: Annotated[Optional[Path], typer.Option("--out", parser=opt.out_folder, help="Folder for inspect.json, violations.csv, the PNGs and raudit.json.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON (what inspect.json holds).")] = False,
) -> None:
    """Train instrumented, measure every privacy check, print the violations table (the study's table 2).

    Each cell comes from a measurement on this run (records seen per teacher, the votes
    re-accounted, the noise drawn, black-box probes); generators without training events
    get 'not checked' event cells and still get the black-box checks.
    """
    from raudit.inspect.job import InspectRequest
    from raudit.inspect.report import runs_json, table_text
    from raudit.runs.inspect import run_inspect_threads

    req = InspectRequest(impls=tuple(impl or (() if all_ else ("paper",))), all_=all_,
                         dataset=dataset, label=label, bounds=None if bounds is None else str(bounds),
                         epsilon=epsilon, delta=delta, teachers=teachers, lam=lam,
                         max_iter=max_iter, seed=seed, preset=preset, options=tuple(option or ()),
                         probes=probes)
    runs = run_inspect_threads(req, out, threads,
                               notice=None if as_json else (lambda m: typer.echo(m, err=True)))
    if as_json:
        typer.echo(runs_json(runs))
    else:
        typer.echo(table_text(runs))
        if out is not None:
            typer.echo(f"\n-> {out}/ (inspect.json, violations.csv, PNGs)")
