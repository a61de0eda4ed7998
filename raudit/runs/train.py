"""``run_train``: fit one generator, write its synthetic data and ``summary.json``.

``raudit train`` (its flags) and :func:`raudit.train` (keyword arguments) both build a
:class:`TrainSettings` and call :func:`run_train`; every check runs before training, and
``out`` is written only once the model is trained (each file whole, ``summary.json`` last).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from raudit.errors import ConfigError

if TYPE_CHECKING:
    import pandas as pd

    from raudit.data.dataset import Dataset
    from raudit.generators.base import Generator

__all__ = ["TrainSettings", "TrainResult", "run_train", "FORMATS"]

FORMATS = ("parquet", "csv")
Bar = Callable[[str, "int | None"], contextlib.AbstractContextManager[Callable[[int], None]]]


@dataclass(frozen=True)
class TrainSettings:
    """``raudit train``'s flags with their defaults (``options``: KEY=VALUE strings or a
    mapping)."""

    impl: str = "paper"
    dataset: str = "breast-cancer"
    epsilon: float = 1.0
    delta: float | None = None
    teachers: int | None = None
    lam: float | None = None
    max_iter: int | None = None
    seed: int = 0
    preset: str = "default"
    label: str | None = None
    bounds: Path | str | None = None
    device: str = "auto"
    threads: int = 1
    options: Sequence[str] | Mapping[str, object] | None = None
    rows: int | None = None
    out: Path | str | None = None
    fmt: str = "parquet"
    parallel: str = "none"
    workers: int = 2
    events: bool = False


@dataclass(frozen=True)
class TrainResult:
    summary: dict[str, Any]  # what summary.json holds
    synthetic: pd.DataFrame
    out: Path
    warnings: list[str]  # one line each: 0 iterations, a budget overshoot


def check(s: TrainSettings) -> None:
    """The settings' own refusals (before a dataset is read)."""
    if s.fmt not in FORMATS:
        raise ConfigError(f"--format must be parquet or csv, got {s.fmt!r}")
    if s.parallel not in ("none", "teachers"):
        raise ConfigError(f"--parallel must be none or teachers, got {s.parallel!r}")
    if s.threads < 1:
        raise ConfigError(f"--threads must be at least 1, got {s.threads}")
    if s.rows is not None and s.rows < 1:
        raise ConfigError(f"--rows must be at least 1, got {s.rows}")


def _no_bar(description: str, total: int | None
            ) -> contextlib.AbstractContextManager[Callable[[int], None]]:
    return contextlib.nullcontext(lambda done: None)


def run_train(s: TrainSettings, bar: Bar | None = None) -> TrainResult:
    """Train, sample and write ``out``; ``bar(description, total)`` shows the iterations."""
    from raudit.generators.kwargs import check_generator_args, generator_kwargs
    from raudit.runs.audit_settings import option_list

    check(s)
    check_generator_args(str(s.impl), preset=s.preset, teachers=s.teachers, lam=s.lam,
                         max_iter=s.max_iter, options=option_list(s.options))  # before torch
    from raudit import __version__, data, generators
    from raudit.generators.exec_adapter import folder_name
    from raudit.privacy import PrivacySpec, training_notes
    from raudit.results.convert import number_or_none
    from raudit.results.events import EventSink
    from raudit.results.files import check_writable
    from raudit.seeds import train_seeds

    impl = str(s.impl)
    kwargs = generator_kwargs(impl, preset=s.preset, teachers=s.teachers, lam=s.lam,
                              max_iter=s.max_iter, device=s.device,
                              options=option_list(s.options))  # before the data is read
    ds = data.load(s.dataset, label=s.label, bounds=s.bounds)
    import torch
    torch.set_num_threads(s.threads)
    gen = generators.get(impl)(**kwargs)
    privacy = PrivacySpec(s.epsilon, s.delta).resolve(gen, len(ds.train))  # as the audit does
    delta = privacy.delta
    fit_seed, sample_seed = train_seeds(s.seed)  # the audit's derivation (raudit.seeds)
    out = Path(s.out) if s.out is not None else (
        Path("runs") / f"train-{folder_name(impl)}-{Path(s.dataset).stem}-s{s.seed}")
    check_writable(out)  # before training: a finished model must not be lost at the end
    sink = EventSink(seeds=[fit_seed]) if s.events else None
    total = _expected_iterations(gen, len(ds.train), ds.train.shape[1])
    t0 = time.perf_counter()
    with (bar or _no_bar)(f"training {impl} on {ds.name}", total) as tick:
        if s.parallel == "teachers":
            from raudit.engine.teachers import fit_teacher_parallel
            from raudit.generators.batched import BatchedGenerator

            # any generator without teachers on Ray is refused inside, with its name
            gen = fit_teacher_parallel(cast(BatchedGenerator, gen), ds.train, epsilon=s.epsilon, delta=delta,
                                       seed=fit_seed, columns=ds.columns, workers=s.workers,
                                       progress=tick, observer=sink)
        elif hasattr(gen, "fit_many"):
            gen = gen.fit_many([ds.train], epsilon=s.epsilon, delta=delta, seeds=[fit_seed],
                               columns=ds.columns, observer=sink,
                               **({"progress": tick} if gen.describe().progress else {}))[0]
        else:
            gen.fit(ds.train, epsilon=s.epsilon, delta=delta, seed=fit_seed, columns=ds.columns,
                    observer=sink)
    # a user file's synthetic rows in its own values (categories, the label's two values)
    synth = data.decode(gen.sample(s.rows or len(ds.train), seed=sample_seed), ds.notes)
    wall = time.perf_counter() - t0
    d = gen.summary()
    summary = {
        "impl": impl, "dataset": ds.name, "epsilon": s.epsilon,
        "delta": privacy.delta, "delta_rule": privacy.delta_rule, "seed": s.seed,
        "fit_seed": fit_seed, "sample_seed": sample_seed,
        "iterations": int(d.get("iterations", 0)), "eps_hat": number_or_none(d.get("eps_hat")),
        "wall_s": round(wall, 3), "rows": len(synth), "columns": list(synth.columns),
        "options": {**kwargs, "parallel": s.parallel}, "details": d, "raudit": __version__,
        "synthetic": f"synthetic.{s.fmt}", "events": "events.parquet" if s.events else None,
        "categories": "categories.json" if "label_values" in ds.notes else None,
    }
    if sink is not None:
        out.mkdir(parents=True, exist_ok=True)
        sink.write(out / "events.parquet")
    _write_outputs(out, synth, summary, s.fmt, _mapping(ds))
    warnings = [str(d["no_step"])] if d.get("no_step") else []  # 0 iterations, with its why
    warnings += training_notes(summary["iterations"], summary["eps_hat"], s.epsilon,
                               steps_expected=bool(total) and not d.get("no_step"),
                               why_over=d.get("eps_over_note"))
    return TrainResult(summary, synth, out, warnings)


def _expected_iterations(gen: Generator, n_rows: int, n_cols: int) -> int | None:
    resolve = getattr(gen, "resolve", None)  # the generators with hyper-parameters to resolve
    try:
        hp = resolve(n_rows, n_cols) if resolve is not None else None
    except (AttributeError, NotImplementedError):
        return None
    steps = getattr(hp, "max_iter", None) or getattr(hp, "iterations", None)
    return None if steps is None else int(steps)


def _mapping(ds: Dataset) -> dict[str, Any] | None:
    """How a user file's values were coded for training, and so decoded in the synthetic
    table (None for a registered dataset): each categorical column's values in code order,
    where they were declared, and the label's 0 and 1."""
    if "label_values" not in ds.notes:
        return None
    from raudit.data import categories_file

    declared = categories_file(Path(ds.source)) if ds.notes.get("categories") else None
    negative, positive = ds.notes["label_values"]
    return {"columns": ds.notes.get("categories") or {},
            "declared_in": str(declared) if declared else None,
            "label": {"column": ds.label, "0": negative, "1": positive}}


def _write_outputs(out: Path, synth: pd.DataFrame, summary: Mapping[str, Any], fmt: str,
                   mapping: Mapping[str, Any] | None = None) -> None:
    """Each file lands whole (temp name, then rename); summary.json goes last."""
    from raudit.results.files import write_atomic

    out.mkdir(parents=True, exist_ok=True)
    if mapping is not None:
        coded = json.dumps(mapping, default=str, indent=2).encode()
        write_atomic(out / "categories.json", lambda fh: fh.write(coded))
    if fmt == "parquet":
        write_atomic(out / "synthetic.parquet", lambda fh: synth.to_parquet(fh, index=False))
    else:
        write_atomic(out / "synthetic.csv",
                     lambda fh: fh.write(synth.to_csv(index=False).encode()))
    text = json.dumps(summary, default=str, indent=2).encode()
    write_atomic(out / "summary.json", lambda fh: fh.write(text))
