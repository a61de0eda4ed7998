"""Options shared by `raudit train` and `raudit audit`, and how they become generator kwargs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from raudit import generators
from raudit.errors import ConfigError

Impl = Annotated[str, typer.Option("--impl", "-i", help="Generator name (see `raudit generators`) or a plugin module:Class.")]
Dataset = Annotated[str, typer.Option("--dataset", "-d", help="Dataset name (see `raudit datasets list`) or a CSV/Parquet path.")]
Epsilon = Annotated[float, typer.Option("--epsilon", "-e", help="Privacy budget epsilon (> 0).")]
Delta = Annotated[Optional[float], typer.Option("--delta", help="Privacy delta in (0, 1); default: the implementation's own.")]
Teachers = Annotated[Optional[int], typer.Option("--teachers", "-k", help="Number of PATE teachers; default: the preset's rule.")]
Lambda = Annotated[Optional[float], typer.Option("--lambda", help="PATE noise parameter lambda.")]
MaxIter = Annotated[Optional[int], typer.Option("--max-iter", help="Cap on training iterations.")]
Seed = Annotated[int, typer.Option("--seed", help="Root seed; every model's seed derives from it.")]
Preset = Annotated[str, typer.Option("--preset", help="Hyperparameters: `default` (the implementation's, as the study ran it) or `paper` (the PATE-GAN paper's).")]
Label = Annotated[Optional[str], typer.Option("--label", help="Label column of a user file (default: the last column).")]
Bounds = Annotated[Optional[Path], typer.Option("--bounds", help="JSON file of public bounds per column (column -> lo, hi) for a user file.")]
Device = Annotated[str, typer.Option("--device", help="auto (CUDA when available), cpu or cuda.")]
Threads = Annotated[int, typer.Option("--threads", help="Torch threads per process. The batched engine gets its parallelism from training many models at once; extra threads mostly add contention on tiny networks.")]
Options = Annotated[Optional[list[str]], typer.Option("--option", "-o", help="Implementation option KEY=VALUE (repeatable), e.g. -o noise_scale=direct.")]


def parse_value(text: str) -> Any:
    """JSON-ish values for -o KEY=VALUE: numbers, true/false, null, else a string."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def generator_kwargs(impl: str, *, preset: str | None, teachers: int | None, lam: float | None,
                     max_iter: int | None, device: str | None, options: list[str] | None) -> dict:
    """Keyword arguments for the generator, keeping only what it accepts."""
    cls = generators.get(impl)
    caps = cls.describe()
    given = {"preset": preset, "teachers": teachers, "lam": lam, "max_iter": max_iter, "device": device}
    kwargs = {k: v for k, v in given.items() if v is not None and caps.accepts(k)}
    for k, flag in (("teachers", "--teachers"), ("lam", "--lambda"), ("max_iter", "--max-iter")):
        if given[k] is not None and k not in kwargs:
            raise ConfigError(f"{impl} has no option {flag}; its options: {', '.join(option_names(cls)) or 'none'}")
    for item in options or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"--option {item!r} must be KEY=VALUE")
        key = key.replace("-", "_")
        if not caps.accepts(key):
            raise ConfigError(f"{impl} has no option {key!r}; its options: {', '.join(option_names(cls))}")
        kwargs[key] = parse_value(value)
    return kwargs


def option_names(cls: type) -> list[str]:
    return cls.describe().option_names()
