"""``run_inspect``: an inspection request end to end, without the CLI: what `raudit
inspect` and a campaign's inspect job both call.

``run_inspect(request, out)`` resolves every generator's options (the study's settings
where it takes them), refuses a generator that cannot train on the dataset before any
work (``--all`` records it instead), inspects each one, and writes the ``--out`` folder
(:mod:`raudit.inspect.report`). Returns the runs as plain JSON-ready dicts.
"""

from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import Any

from raudit import data, generators
from raudit.errors import ConfigError, RauditError
from raudit.inspect.job import InspectRequest, generator_options, request_from_settings
from raudit.inspect.report import finish_runs, write_folder
from raudit.inspect.runner import InspectSpec, inspect_generator, skipped_run, trainable
from raudit.results.files import check_writable
from raudit.results.store import ResultStore

__all__ = ["run_inspect", "run_inspect_job", "run_inspect_threads"]


def run_inspect_threads(req: InspectRequest, out: Path | None, threads: int,
                        notice: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """``raudit inspect`` and :func:`raudit.inspect`: torch on ``threads`` threads, then
    :func:`run_inspect`."""
    if threads < 1:
        raise ConfigError(f"--threads must be at least 1, got {threads}")
    import torch

    torch.set_num_threads(threads)
    return run_inspect(req, None if out is None else Path(out), notice)


def run_inspect(req: InspectRequest, out: Path | None = None,
                notice: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Inspect every generator of ``req``; write ``out`` when given; return the runs."""
    names = generators.names() if req.all_ else list(req.impls or ("paper",))
    ds = data.load(req.dataset, label=req.label, bounds=req.bounds)
    data.require_binary(ds, "inspect")
    n, d = ds.train.shape
    specs = [InspectSpec(name, epsilon=req.epsilon, delta=req.delta, seed=req.seed,
                         options=generator_options(name, req, n, d, strict=not req.all_))
             for name in names]
    checked = [trainable(s, ds) for s in specs]  # each run's privacy resolved once, here
    for s, (why, _) in zip(specs, checked):
        if why and not req.all_:
            raise ConfigError(f"{s.impl} cannot train on {ds.name}: {why}")
    manifest = req.manifest(names, ds.name)
    if out is not None:
        check_writable(out)
        ResultStore(out).check_manifest(manifest)
    runs = []
    for s, (why, privacy) in zip(specs, checked):
        if why:
            runs.append(skipped_run(s, ds, why))
            continue
        if notice is not None:
            notice(f"inspecting {s.impl} on {ds.name} ...")
        try:
            runs.append(inspect_generator(s, ds, probes=req.probes, privacy=privacy))
        except RauditError as exc:  # its check passed but training refused the data
            if not req.all_:
                raise
            runs.append(skipped_run(s, ds, str(exc)))
    if out is None:
        return finish_runs(runs, None)
    out.mkdir(parents=True, exist_ok=True)
    with ResultStore(out).lock():
        runs = finish_runs(runs, out)
        write_folder(out, runs, manifest)
    return runs


def run_inspect_job(settings: dict[str, Any], folder: Path) -> dict[str, Any]:
    """A campaign's inspect job: inspect into ``folder``; a short JSON-ready summary."""
    runs = run_inspect(request_from_settings(settings), Path(folder))
    violated = sorted({f"{r['impl']}:{v['category']}" for r in runs
                       for v in r.get("violations", []) if v.get("status") == "violated"})
    return {"runs": len(runs), "violations": violated}
