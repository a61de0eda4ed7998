"""An audit's settings checked once and turned into a plan; the plan run by its threat model.

``raudit audit`` (its flags) and :func:`raudit.audit` (its keyword arguments) both build
an :class:`~raudit.runs.audit_settings.AuditSettings` and call :func:`prepare` then
:func:`execute`, so the two check the same things in the same order with the same
one-line messages::

    plan = prepare(AuditSettings(impl="identity", attack="querybased", dataset="worst-case",
                                 shadow_models=50, backend="local"))
    result = execute(plan)      # the summary dict that `raudit audit --json` prints

The threat model (:func:`raudit.runs.threats.select`) owns its refusals and its run; the
checks shared by all of them (the sequential rules, one run's canaries, -S and -M) live
here. Every check runs before ``out`` is touched or Ray starts.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from os import PathLike
from pathlib import Path
from typing import Any

from raudit.errors import ConfigError
from raudit.runs.audit_settings import AuditSettings, option_list
from raudit.runs.threats import ThreatModel, select

__all__ = ["AuditPlan", "prepare", "execute"]


@dataclass(frozen=True)
class AuditPlan:
    """Checked settings, ready to run: the request, its folder, its engine and threat model."""

    settings: AuditSettings
    req: Any  # raudit.audit.runner.AuditRequest
    out: Path
    engine: Any  # raudit.engine.driver.EngineConfig
    threat: ThreatModel
    auto_chunk: bool


def _check_sequential(s: AuditSettings, one_run: bool) -> None:
    if s.sequential is not None:
        if s.sequential != "anytime":
            raise ConfigError(f"--sequential takes anytime, got {s.sequential!r} (alpha "
                              "spending: --target-width / --until-ceiling)")
        if s.alpha_spending or one_run:
            raise ConfigError("--sequential anytime is its own stopping rule: drop "
                              "--target-width / --until-ceiling / -S auto / --one-run")
    if one_run:
        if s.alpha_spending:
            raise ConfigError("--one-run is one run: it takes no sequential stop (--target-width, "
                              "--until-ceiling, -S auto)")
        if s.canaries < 2:
            raise ConfigError(f"--canaries must be at least 2, got {s.canaries}")
    elif s.canaries != AuditSettings.canaries:  # refused, not silently ignored
        raise ConfigError(f"--canaries {s.canaries} applies to a one-run audit: add --one-run, "
                          "or drop --canaries")


def _count(value: int | str, flag: str) -> int:
    # a whole number: from Python, int(10.5) would run 10 models where the command refuses 10.5
    if isinstance(value, bool) or (isinstance(value, float)
                                    and not (math.isfinite(value) and value == int(value))):
        raise ConfigError(f"{flag} takes a number or auto, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{flag} takes a number or auto, got {value!r}") from None


def prepare(s: AuditSettings) -> AuditPlan:
    """Check every setting (before any work) and build the request; raises ConfigError."""
    from raudit.generators.kwargs import check_generator_args, generator_kwargs

    # a mistyped generator option first: the threat models' modules and a built-in
    # generator's import torch, seconds before the check below could say so (a data-only
    # audit runs no generator: its threat model refuses every generator flag instead)
    if not s.data_only:
        check_generator_args(str(s.impl), preset=s.preset, teachers=s.teachers, lam=s.lam,
                             max_iter=s.max_iter, options=option_list(s.options))
    from raudit.audit.runner import DEFAULT_CHUNK, AuditRequest
    from raudit.engine.driver import EngineConfig

    threat = select(s)
    _check_sequential(s, threat.one_run(s))
    threat.check(s)  # every check before --out is touched
    threat.refuse_idle(s)  # a flag this kind of audit never reads
    engine = EngineConfig(backend=s.backend, workers=s.workers, device=s.device,
                          per_gpu=s.per_gpu, retries=s.retries)
    impl = str(s.impl)
    kwargs = generator_kwargs(impl, preset=s.preset, teachers=s.teachers, lam=s.lam,
                              max_iter=s.max_iter, device=None, options=option_list(s.options))
    until_ceiling = s.until_ceiling
    if str(s.shadow_models).strip().lower() == "auto":
        shadow_models, until_ceiling = 2000, until_ceiling or s.target_width is None
    else:
        shadow_models = _count(s.shadow_models, "--shadow-models")
    auto_chunk = str(s.chunk_size).strip().lower() == "auto"
    chunk_size = DEFAULT_CHUNK if auto_chunk else _count(s.chunk_size, "--chunk-size")
    req = AuditRequest(impl=impl, attack=s.attack, features=s.features, dataset=s.dataset,
                       label=s.label, bounds=None if s.bounds is None else str(s.bounds),
                       target=s.target, options=kwargs, epsilon=s.epsilon, delta=s.delta,
                       shadow_models=shadow_models, seed=s.seed, synthetic_rows=s.synthetic_rows,
                       neighbours=s.neighbours, chunk_size=chunk_size,
                       target_candidates=s.target_candidates, target_pairs=s.target_pairs,
                       target_selection=s.target_selection, selection_models=s.selection_models,
                       samples_per_model=s.samples_per_model, target_width=s.target_width,
                       until_ceiling=until_ceiling, first_stage=s.first_stage,
                       anytime=threat.shadow_anytime(s), white_box=threat.reads_models)
    if s.out is not None and not isinstance(s.out, (str, PathLike)):
        raise ConfigError(f"--out must be a folder path, got {s.out!r}")  # Path(3): TypeError
    out = Path(s.out) if s.out is not None else threat.default_out(s, shadow_models)
    # The sizes this machine can hold are checked by run_audit, before --out is touched
    # (limits.check_audit, once, with the loaded dataset).
    return AuditPlan(s, req, out, engine, threat, auto_chunk)


def execute(plan: AuditPlan, progress: Any = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Run (or resume) a prepared audit; the summary row plus run details."""
    return plan.threat.run(plan.settings, plan.req, plan.out, plan.engine,
                           auto_chunk=plan.auto_chunk, progress=progress, notice=notice)
