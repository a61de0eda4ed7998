"""Every size bounded before work: refuse what this machine cannot hold, before ``--out``
is touched, Ray starts or a calibration runs.

::

    limits.check_audit(req, engine)      # -S, --chunk-size, selection models, teachers, ...
    limits.check_utility(req, engine)    # fits, samples, teachers, iterations
    limits.check_engine(engine)          # --workers against this machine's CPUs/GPUs

What is checked, and against what:

- ``--workers`` on this machine (``--backend local``, or ``ray`` without ``RAY_ADDRESS``):
  at most :data:`PER_CORE` actors per CPU (or per GPU share). On a cluster
  (``RAY_ADDRESS``) the engine caps the pool at the cluster's slots with a note, since an
  autoscaler may still add nodes.
- memory: the driver holds ~:data:`ROW_BYTES` per planned model (its trial plan and its
  result row); every actor holds its process (:data:`PROCESS_BYTES`) and one chunk of
  models at a time, the largest any phase trains (:func:`largest_chunk`: a target
  selection's chunks may hold far more models than the game's). A chunk's models are estimated from the generator set-up: the PATE-GAN
  family's networks are MLPs of width ~d (d columns), a generator, a student and k
  teachers, each parameter with its gradient and two Adam moments in float32, plus the
  training and synthetic tables. It is a rough estimate (the point is to refuse 10^11
  models, not to budget bytes): a run is refused when it exceeds the memory available now.
- counts with no memory cost still have a ceiling (:data:`CEILINGS`): iterations, fits,
  samples; teachers cannot exceed the training rows.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from raudit.engine.driver import BACKENDS, EngineConfig
from raudit.errors import ConfigError

if TYPE_CHECKING:
    from raudit.audit.runner import AuditRequest
    from raudit.data.dataset import Dataset
    from raudit.runs.jobs import Job
    from raudit.utility.plan import UtilityRequest

PER_CORE = 4  # actors per CPU (or per GPU share) beyond which only contention grows
ROW_BYTES = 4096  # driver memory per planned model (trial spec + shadow row + features)
PROCESS_BYTES = 400 << 20  # one actor process with torch imported
FLOAT = 4  # float32
CEILINGS = {"max_iter": 10_000_000, "fits": 100_000, "samples": 10_000,
            "samples_per_model": 10_000, "first_stage": 10_000_000}


@dataclass(frozen=True)
class Machine:
    """What this machine offers now."""

    cpus: int
    gpus: int
    memory: int  # bytes available

    @classmethod
    def here(cls) -> "Machine":
        return cls(os.cpu_count() or 1, _gpus(), _available_memory())


def _gpus() -> int:
    try:
        import torch

        return torch.cuda.device_count() if torch.cuda.is_available() else 0
    except Exception:  # noqa: BLE001 - no usable CUDA is no GPU
        return 0


def _available_memory() -> int:
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 1 << 62  # unknown: do not refuse on memory


def _gib(n: float) -> str:
    return f"{n / 2**30:,.1f} GiB"


def on_this_machine(engine: EngineConfig) -> bool:
    return BACKENDS.get(engine.backend).on_this_machine()


def slots(engine: EngineConfig, machine: Machine) -> int:
    """Actors this machine can usefully hold for ``engine``'s device."""
    if engine.device != "cpu" and machine.gpus:
        return machine.gpus * engine.per_gpu
    return machine.cpus


def check_engine(engine: EngineConfig, machine: Machine | None = None) -> int:
    """Refuse a --workers this machine cannot hold (and a RAY_ADDRESS where nothing
    answers); returns the actors the run will have."""
    BACKENDS.get(engine.backend).check()
    if not on_this_machine(engine):
        return engine.workers or 1
    machine = machine or Machine.here()
    most = PER_CORE * slots(engine, machine)
    if engine.workers is not None and engine.workers > most:
        what = (f"{machine.gpus} GPU(s) x --per-gpu {engine.per_gpu}"
                if engine.device != "cpu" and machine.gpus else f"{machine.cpus} CPU(s)")
        raise ConfigError(f"--workers {engine.workers:,} is more than this machine can run "
                          f"({what}: at most {most}); lower --workers, or join a cluster with "
                          "RAY_ADDRESS")
    if BACKENDS.get(engine.backend).in_process:
        return 1
    return engine.workers or slots(engine, machine)


def model_bytes(rows: int, cols: int, teachers: int | None, synthetic_rows: int,
                samples: int = 1) -> int:
    """Estimated memory of one model of the PATE-GAN family while it trains and samples."""
    k = teachers or max(10, rows // 50)
    params = cols * cols * (9 + k)  # generator d-2d-2d-d, student d-d-1, k teachers d-d-1
    tables = cols * (3 * rows + synthetic_rows * samples)
    return FLOAT * (4 * params + tables)


def _check_ceilings(values: dict[str, int | None]) -> None:
    for name, value in values.items():
        top = CEILINGS.get(name)
        if value is not None and top is not None and value > top:
            raise ConfigError(f"--{name.replace('_', '-')} {value:,} is above raudit's ceiling "
                              f"of {top:,}; lower it")


def _check_memory(what: str, driver_models: int, chunk: int, per_model: int, actors: int,
                  machine: Machine, hint: str) -> None:
    driver = driver_models * ROW_BYTES
    workers = actors * (PROCESS_BYTES + chunk * per_model)
    need = driver + workers
    if need > machine.memory:
        raise ConfigError(
            f"{what} needs about {_gib(need)} of memory ({_gib(driver)} in the driver for "
            f"{driver_models:,} models, {_gib(workers)} for {actors} actor(s) with chunks of "
            f"{chunk:,}); this machine has {_gib(machine.memory)} available; {hint}")


def check_audit(req: AuditRequest, engine: EngineConfig, ds: Dataset | None = None,
                machine: Machine | None = None) -> None:
    """Refuse an audit whose sizes this machine cannot hold (see the module docstring)."""
    from raudit import data
    from raudit.attacks import get as get_attack

    machine = machine or Machine.here()
    actors = check_engine(engine, machine)
    opts = req.options or {}
    _check_ceilings({"max_iter": opts.get("max_iter"), "samples_per_model": req.samples_per_model,
                     "first_stage": req.first_stage})
    if ds is None:
        dataset = req.dataset or get_attack(req.attack).default_dataset
        ds = data.load(dataset, label=req.label, bounds=req.bounds)
    data.require_binary(ds, "an audit")  # before sizing it: the right reason, first
    rows, cols = ds.train.shape
    teachers = opts.get("teachers")
    if isinstance(teachers, int) and teachers > rows:
        raise ConfigError(f"--teachers {teachers:,} is more than the {rows:,} training rows; "
                          "each teacher needs at least one")
    synth = req.synthetic_rows if isinstance(req.synthetic_rows, int) else rows
    selection = (req.selection_models if req.target_selection == "pool"
                 else 2 * req.target_candidates * req.target_pairs)
    selects = req.target in (None, "auto")
    models = 2 * req.shadow_models + (selection if selects else 0)
    chunk = largest_chunk(req, selects)
    _check_memory(f"this audit ({req.shadow_models:,} shadow models per world)", models, chunk,
                  model_bytes(rows, cols, teachers if isinstance(teachers, int) else None,
                              synth, req.samples_per_model),
                  actors, machine, "lower --shadow-models (or --chunk-size, --workers, "
                  "--selection-models)")


def largest_chunk(req: AuditRequest, selects: bool) -> int:
    """The most models one chunk of the audit trains at once, over all its phases: the
    game's chunks hold at most one world's shadow models, but a target selection's hold up
    to --chunk-size of its own models (a pool of --selection-models, or --target-pairs per
    world and candidate), however few shadow models the game has."""
    phase = [req.shadow_models]
    if selects:
        phase.append(req.selection_models if req.target_selection == "pool"
                     else req.target_pairs)
    return max(1, min(req.chunk_size, max(phase)))


def check_utility(req: UtilityRequest, engine: EngineConfig, ds: Dataset | None = None,
                  machine: Machine | None = None) -> None:
    """Refuse a utility run whose sizes this machine cannot hold."""
    from raudit import data

    machine = machine or Machine.here()
    actors = check_engine(engine, machine)
    _check_ceilings({"fits": req.fits, "samples": req.samples, "max_iter": req.max_iter})
    if req.real_only:
        return
    ds = ds or data.load(req.dataset, label=req.label, bounds=req.bounds)
    rows, cols = ds.train.shape
    fixed = [int(t) for t in req.teachers if str(t).isdigit()]
    if fixed and max(fixed) > rows:
        raise ConfigError(f"--teachers {max(fixed):,} is more than the {rows:,} training rows; "
                          "each teacher needs at least one")
    points = max(1, len(req.epsilons) * max(1, len(req.teachers)) * len(req.presets))
    chunk = req.chunk_size or req.fits
    _check_memory(f"this utility run ({req.fits:,} fits x {req.samples:,} samples)",
                  points * req.fits * req.samples, chunk,
                  model_bytes(rows, cols, max(fixed) if fixed else None, rows, req.samples),
                  actors, machine, "lower --fits, --samples or --workers")


def check_jobs(jobs: Iterable[Job], engine: EngineConfig, machine: Machine | None = None) -> None:
    """A campaign's jobs, each as its own command would check it."""
    from raudit.runs.jobs import AuditJob
    from raudit.runs.utility_job import UtilityJob

    machine = machine or Machine.here()
    check_engine(engine, machine)
    for job in jobs:
        try:
            if isinstance(job, AuditJob):
                check_audit(job.req, engine, job.ds, machine)
            elif isinstance(job, UtilityJob):
                check_utility(job.req, engine, job.ds, machine)
        except ConfigError as exc:
            raise ConfigError(f"job {job.name}: {exc}") from None
