"""`raudit utility`: the 12-classifier utility benchmark (Settings A/B/C), sweeps, SRA."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import user_errors
from raudit.cli.progress import phase_bars

L = Optional[list[str]]


@user_errors
def utility(
    impl: opt.Impl = "paper",
    dataset: opt.Dataset = "cervical",
    epsilon: Annotated[Optional[list[float]], typer.Option("--epsilon", "-e", help="Privacy budget (repeatable: a sweep). Default 1.")] = None,
    sweep: Annotated[L, typer.Option("--sweep", help="Sweep an axis over the study's grid (repeatable): eps {0.01,...,50} (or the --epsilon values given, at least two), teachers {N/50,...,N/5000}, presets {default, paper}, conditional {false, true}.")] = None,
    control: Annotated[Optional[str], typer.Option("--control", help="Run every point also as a data-free control and report real vs control, paired by fit, and the learning threshold. coin: each released vote replaced by a fair coin (generators that vote or aggregate); shuffle: the training labels permuted before each fit (any generator).")] = None,
    teachers: Annotated[L, typer.Option("--teachers", "-k", help="Teachers: an integer or N/RATIO (repeatable: a sweep). Default: the preset's rule.")] = None,
    preset: Annotated[L, typer.Option("--preset", help="default or paper (repeatable: a sweep).")] = None,
    conditional: Annotated[L, typer.Option("--conditional", help="true/false (repeatable: a sweep), for generators with a conditional mode (original).")] = None,
    delta: Annotated[Optional[float], typer.Option("--delta", help="Privacy delta (default: the generator's own rule, as train and audit use it; the study's sweeps used 10^-5).")] = None,
    lam: opt.Lambda = None,
    max_iter: Annotated[int, typer.Option("--max-iter", help="Cap on training iterations (the study's utility runs: 10,000).")] = 10_000,
    option: opt.Options = None,
    label: opt.Label = None,
    bounds: opt.Bounds = None,
    fits: Annotated[int, typer.Option("--fits", help="Generator fits per sweep point.")] = 5,
    samples: Annotated[int, typer.Option("--samples", help="Synthetic datasets per fit (as many rows as the training set).")] = 5,
    seed: opt.Seed = 0,
    classifier: Annotated[L, typer.Option("--classifier", "-c", help="Classifiers (repeatable; default the study's 12, LR and RF on mnist).")] = None,
    setting: Annotated[L, typer.Option("--setting", help="A (real->real), B (synthetic->real), C (synthetic->synthetic); repeatable, default all.")] = None,
    real_only: Annotated[bool, typer.Option("--real-only", help="Only Setting A: the real-data baselines.")] = False,
    reference: Annotated[Optional[float], typer.Option("--reference", help="A published AUROC to report the drop against, (ref - ours) / (ref - 0.5).")] = None,
    out: Annotated[Optional[Path], typer.Option("--out", parser=opt.out_folder, help="Result folder (Parquet store; rerun the same command to resume).")] = None,
    chunk_size: Annotated[Optional[int], typer.Option("--chunk-size", "-M", help="Fits trained together in one batched call (default: all fits of a sweep point).")] = None,
    workers: Annotated[Optional[int], typer.Option("--workers", "-w", help="Ray actors (default: one per CPU).")] = None,
    backend: opt.Backend = "ray",
    device: opt.Device = "auto",
    retries: Annotated[int, typer.Option("--retries", help="Further attempts of a failed chunk.")] = 1,
    as_json: Annotated[bool, typer.Option("--json", help="Print the results as JSON.")] = False,
) -> None:
    """Utility benchmark: fit a generator F times, sample S datasets per fit, score 12 classifiers in Settings A/B/C.

    Prints the per-classifier table (best of F x S, like the study's table 5) and the summary per sweep point (its table 4: the best-of average, mean +- standard error, SRA between A and C, feature-ranking agreement). Writes utility_vs_eps.png when sweeping eps.
    """
    from raudit.cli.progress import notice
    from raudit.runs.utility_settings import UtilitySettings, run

    settings = UtilitySettings(  # checked once, in the run layer
        impl=impl, dataset=dataset, epsilon=epsilon, sweep=sweep, control=control,
        teachers=teachers, preset=preset, conditional=conditional, delta=delta, lam=lam,
        max_iter=max_iter, options=option, label=label, bounds=bounds, fits=fits,
        samples=samples, seed=seed, classifier=classifier, setting=setting, real_only=real_only,
        reference=reference, out=out, chunk_size=chunk_size, workers=workers, backend=backend,
        device=device, retries=retries)
    with phase_bars(quiet=as_json) as progress:  # the total first, on stderr
        result = run(settings, progress, notice=notice)
    if as_json:
        typer.echo(json.dumps(result, indent=2, default=_plain))
    else:
        from raudit.cli.utility_tables import show
        show(result)
    failed = result.get("failures") or []
    if failed:  # a failure is recorded (rerun to retry it), never reported as a success
        typer.echo(f"error: {len(failed)} part(s) of the run failed (rerun to retry); first: "
                   f"{failed[0]}", err=True)
        raise typer.Exit(1)


def _plain(v: object) -> str | None:
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return str(v)


