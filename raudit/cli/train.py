"""`raudit train`: fit one generator and write its synthetic data and a JSON summary."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit import __version__, data, generators
from raudit.cli import options as opt
from raudit.generators.kwargs import generator_kwargs
from raudit.cli.errors import user_errors
from raudit.cli.progress import iteration_bar
from raudit.errors import ConfigError
from raudit.privacy import PrivacySpec, fmt_delta, fmt_eps, training_notes
from raudit.results.convert import number_or_none
from raudit.results.events import EventSink
from raudit.results.files import check_writable, write_atomic
from raudit.seeds import train_seeds
from raudit.generators.exec_adapter import folder_name

FORMATS = ("parquet", "csv")


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
    if fmt not in FORMATS:
        raise ConfigError(f"--format must be parquet or csv, got {fmt!r}")
    if parallel not in ("none", "teachers"):
        raise ConfigError(f"--parallel must be none or teachers, got {parallel!r}")
    if threads < 1:
        raise ConfigError(f"--threads must be at least 1, got {threads}")
    if rows is not None and rows < 1:
        raise ConfigError(f"--rows must be at least 1, got {rows}")
    ds = data.load(dataset, label=label, bounds=bounds)
    import torch
    torch.set_num_threads(threads)
    kwargs = generator_kwargs(impl, preset=preset, teachers=teachers, lam=lam, max_iter=max_iter,
                                  device=device, options=option)
    gen = generators.get(impl)(**kwargs)
    privacy = PrivacySpec(epsilon, delta).resolve(gen, len(ds.train))  # the audit resolves it alike
    delta = privacy.delta
    fit_seed, sample_seed = train_seeds(seed)  # the audit's derivation (raudit.seeds)
    out = out or Path("runs") / f"train-{folder_name(impl)}-{Path(dataset).stem}-s{seed}"
    check_writable(out)  # before training: a finished model must not be lost at the end
    sink = EventSink(seeds=[fit_seed]) if events else None
    total = _expected_iterations(gen, len(ds.train), ds.train.shape[1])
    t0 = time.perf_counter()
    with iteration_bar(f"training {impl} on {ds.name}", total, quiet=as_json) as tick:
        if parallel == "teachers":
            from raudit.engine.teachers import fit_teacher_parallel
            gen = fit_teacher_parallel(gen, ds.train, epsilon=epsilon, delta=delta, seed=fit_seed,
                                       columns=ds.columns, workers=workers, progress=tick,
                                       observer=sink)
        elif hasattr(gen, "fit_many"):
            gen = gen.fit_many([ds.train], epsilon=epsilon, delta=delta, seeds=[fit_seed],
                               columns=ds.columns, observer=sink, **({"progress": tick} if gen.describe().progress else {}))[0]
        else:
            gen.fit(ds.train, epsilon=epsilon, delta=delta, seed=fit_seed, columns=ds.columns,
                    observer=sink)
    synth = gen.sample(rows or len(ds.train), seed=sample_seed)
    wall = time.perf_counter() - t0
    s = gen.summary()
    summary = {
        "impl": impl, "dataset": ds.name, "epsilon": epsilon,
        "delta": privacy.delta, "delta_rule": privacy.delta_rule, "seed": seed,
        "fit_seed": fit_seed, "sample_seed": sample_seed,
        "iterations": int(s.get("iterations", 0)), "eps_hat": number_or_none(s.get("eps_hat")),
        "wall_s": round(wall, 3), "rows": len(synth), "columns": list(synth.columns),
        "options": {**kwargs, "parallel": parallel}, "details": s, "raudit": __version__,
        "synthetic": f"synthetic.{fmt}", "events": "events.parquet" if events else None,
    }
    if sink is not None:
        out.mkdir(parents=True, exist_ok=True)
        sink.write(out / "events.parquet")
    _write_outputs(out, synth, summary, fmt)
    if as_json:
        typer.echo(json.dumps(summary, default=str, indent=2))
    else:
        typer.echo(f"{impl} on {ds.name}: {summary['iterations']} iterations, eps_hat "
                   f"{fmt_eps(summary['eps_hat'])} (eps {epsilon:g}, delta "
                   f"{fmt_delta(summary['delta'])}), {summary['wall_s']:.1f} s -> {out}/")
        if s.get("no_step"):  # 0 iterations is never reported silently: the generator's why
            typer.echo(f"warning: {s['no_step']}", err=True)
        for note in training_notes(summary["iterations"], summary["eps_hat"], epsilon,
                                   steps_expected=bool(total) and not s.get("no_step"),
                                   why_over=s.get("eps_over_note")):
            typer.echo(f"warning: {note}", err=True)


def _expected_iterations(gen, n_rows: int, n_cols: int) -> int | None:
    try:
        hp = gen.resolve(n_rows, n_cols)
    except (AttributeError, NotImplementedError):
        return None
    return getattr(hp, "max_iter", None) or getattr(hp, "iterations", None)


def _write_outputs(out: Path, synth, summary: dict, fmt: str) -> None:
    """Each file lands whole (temp name, then rename); summary.json goes last."""
    out.mkdir(parents=True, exist_ok=True)
    if fmt == "parquet":
        write_atomic(out / "synthetic.parquet", lambda fh: synth.to_parquet(fh, index=False))
    else:
        write_atomic(out / "synthetic.csv",
                      lambda fh: fh.write(synth.to_csv(index=False).encode()))
    text = json.dumps(summary, default=str, indent=2).encode()
    write_atomic(out / "summary.json", lambda fh: fh.write(text))
