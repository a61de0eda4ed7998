"""`raudit inspect`: instrumented training and a measured privacy-violation table."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.cli import options as opt
from raudit.cli.errors import user_errors
from raudit.errors import ConfigError, RauditError

#: the study's inspection and audit settings (section 6.1-6.2): k = 5, lambda = 1e-3,
#: at most 1,000 iterations for the generators that have no stopping rule
STUDY_TEACHERS, STUDY_LAMBDA, STUDY_MAX_ITER = 5, 1e-3, 1000


def _kwargs(impl: str, *, preset, teachers, lam, max_iter, option, strict: bool,
            n_rows: int, n_cols: int) -> dict:
    """Generator kwargs: the study's settings where the generator takes them, then -o.

    ``max_iter`` caps the generator's own iteration count (never raises it). With
    ``strict`` False (``--all``) an -o option a generator lacks is left out for it."""
    from raudit import generators

    cls = generators.get(impl)
    caps = cls.describe()
    given = {"preset": preset, "teachers": teachers, "lam": lam}
    kwargs = {k: v for k, v in given.items() if v is not None and caps.accepts(k)}
    items = option or []
    if not strict:
        items = [i for i in items if caps.accepts(i.partition("=")[0].replace("-", "_"))]
    kwargs.update(opt.generator_kwargs(impl, preset=None, teachers=None, lam=None, max_iter=None,
                                       device=None, options=items))
    if max_iter is not None and caps.accepts("max_iter") and caps.options is not None \
            and "max_iter" not in kwargs:
        own = None
        resolve = getattr(cls(**kwargs), "resolve", None)
        if callable(resolve):
            own = getattr(resolve(n_rows, n_cols), "max_iter", None)
        kwargs["max_iter"] = max_iter if own is None else min(own, max_iter)
    return kwargs


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
    out: Annotated[Optional[Path], typer.Option("--out", help="Folder for inspect.json, violations.csv, the PNGs and raudit.json.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the runs as JSON (what inspect.json holds).")] = False,
) -> None:
    """Train instrumented, measure every privacy check, print the violations table (the study's table 2).

    Each cell comes from a measurement on this run (records seen per teacher, the votes
    re-accounted, the noise drawn, black-box probes); generators without training events
    get 'not checked' event cells and still get the black-box checks.
    """
    import torch

    from raudit import data, generators
    from raudit.inspect.report import finish_runs, runs_json, table_text, write_folder
    from raudit.inspect.runner import InspectSpec, check_trainable, inspect_generator, skipped_run
    from raudit.results.store import ResultStore, check_writable

    if all_ and impl:
        raise ConfigError("give --impl or --all, not both")
    names = generators.names() if all_ else list(impl or ["paper"])
    if teachers < 1 or max_iter < 1:
        raise ConfigError(f"--teachers and --max-iter must be at least 1, got {teachers} and {max_iter}")
    if not (lam > 0 and epsilon > 0):
        raise ConfigError(f"--lambda and --epsilon must be positive, got {lam} and {epsilon}")
    if threads < 1:
        raise ConfigError(f"--threads must be at least 1, got {threads}")
    ds = data.load(dataset, label=label, bounds=bounds)
    n, d = ds.train.shape
    specs = [InspectSpec(name, epsilon=epsilon, delta=delta, seed=seed,
                         options=_kwargs(name, preset=preset, teachers=teachers, lam=lam,
                                         max_iter=max_iter, option=option, strict=not all_,
                                         n_rows=n, n_cols=d))
             for name in names]
    reasons = [check_trainable(s, ds) for s in specs]
    for s, why in zip(specs, reasons):
        if why and not all_:  # refused before any training; --all reports it in the table
            raise ConfigError(f"{s.impl} cannot train on {ds.name}: {why}")
    spec = {"impls": names, "dataset": ds.name, "epsilon": epsilon, "delta": delta,
            "teachers": teachers, "lambda": lam, "max_iter": max_iter, "seed": seed,
            "preset": preset, "options": list(option or []), "probes": probes}
    if out is not None:
        check_writable(out)
        ResultStore(out).check_manifest({"kind": "inspect", **spec})
    torch.set_num_threads(threads)
    runs = []
    for s, why in zip(specs, reasons):
        if why:
            runs.append(skipped_run(s, ds, why))
            continue
        if not as_json:
            typer.echo(f"inspecting {s.impl} on {ds.name} ...", err=True)
        try:
            runs.append(inspect_generator(s, ds, probes=probes))
        except RauditError as exc:  # its check passed but training refused the data
            if not all_:
                raise
            runs.append(skipped_run(s, ds, str(exc)))
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        with ResultStore(out).lock():
            runs = finish_runs(runs, out)
            write_folder(out, runs, spec)
    else:
        runs = finish_runs(runs, None)
    if as_json:
        typer.echo(runs_json(runs))
    else:
        typer.echo(table_text(runs))
        if out is not None:
            typer.echo(f"\n-> {out}/ (inspect.json, violations.csv, PNGs)")
