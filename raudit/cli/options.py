"""Options shared by `raudit train`, `raudit audit` and the other commands (their kwargs:
:func:`raudit.generators.kwargs.generator_kwargs`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer

from raudit.engine.driver import backend_help
from raudit.errors import ConfigError
from raudit.seeds import check_root


def parse_seed(text: str | int) -> int:
    """``--seed``'s parser (every command's): :func:`raudit.seeds.check_root`, before any work."""
    try:
        return check_root(text if isinstance(text, int) else int(str(text).strip()), "it")
    except ValueError as exc:  # ConfigError is one; int("x") another
        reason = str(exc) if isinstance(exc, ConfigError) else "it must be an integer"
        raise typer.BadParameter(f"{reason}, got {text!r}" if "got" not in reason
                                 else reason) from None


Impl = Annotated[str, typer.Option("--impl", "-i", help="Generator name (see `raudit generators`) or a plugin module:Class.")]
Dataset = Annotated[str, typer.Option("--dataset", "-d", help="Dataset name (see `raudit datasets list`) or a CSV/Parquet path.")]
Epsilon = Annotated[float, typer.Option("--epsilon", "-e", help="Privacy budget epsilon (> 0).")]
Delta = Annotated[Optional[float], typer.Option("--delta", help="Privacy delta in (0, 1); default: the implementation's own.")]
Teachers = Annotated[Optional[int], typer.Option("--teachers", "-k", help="Number of PATE teachers; default: the preset's rule.")]
Lambda = Annotated[Optional[float], typer.Option("--lambda", help="PATE noise parameter lambda.")]
MaxIter = Annotated[Optional[int], typer.Option("--max-iter", help="Cap on training iterations.")]
Seed = Annotated[int, typer.Option("--seed", parser=parse_seed, metavar="INTEGER", help="Root seed, 0 to 2**63-1; every model's seed derives from it.")]
Preset = Annotated[str, typer.Option("--preset", help="A named set of hyperparameters: `default` (the implementation's, as the study ran it) or one of the generator's own; `raudit generators NAME` lists them (the `preset` row).")]
Label = Annotated[Optional[str], typer.Option("--label", help="Label column of a user file (default: the last column).")]
Bounds = Annotated[Optional[Path], typer.Option("--bounds", help="JSON file of public bounds per column (column -> lo, hi) for a user file.")]
Device = Annotated[str, typer.Option("--device", help="auto (CUDA when available), cpu or cuda.")]
Threads = Annotated[int, typer.Option("--threads", help="Torch threads per process. The batched engine gets its parallelism from training many models at once; extra threads mostly add contention on tiny networks.")]
Backend = Annotated[str, typer.Option("--backend", help=backend_help())]
Options = Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Implementation option KEY=VALUE (repeatable), e.g. -o noise_scale=direct; 'raudit generators NAME' lists a generator's options with their values and defaults.")]


def out_folder(value: str | Path) -> Path:
    """``--out``'s parser: an empty value is refused (Path('') would be the current folder)."""
    from raudit.errors import ConfigError
    from raudit.results.files import as_folder

    if not str(value).strip():
        raise typer.BadParameter("is empty; give the result folder, e.g. --out runs/mine")
    try:
        return as_folder(value)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--out: ")) from None
