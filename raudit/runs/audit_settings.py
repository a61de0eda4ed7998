"""An audit's settings as one value, checked once, and run by the threat model it names.

``raudit audit`` (its flags) and :func:`raudit.audit` (its keyword arguments) both build
an :class:`AuditSettings` and call :func:`prepare` then :func:`execute`, so the two check
the same things in the same order with the same one-line messages::

    plan = prepare(AuditSettings(impl="identity", attack="querybased", dataset="worst-case",
                                 shadow_models=50, backend="local"))
    result = execute(plan)      # the summary dict that `raudit audit --json` prints

Each threat model is an object in :data:`THREATS` that owns its refusals (``check``: which
generators it supports, which other settings it cannot take) and its run (``run``), as
TAPAS's threat models do; the checks shared by all of them (the sequential rules, one run,
data-only pairs, -S and -M) live in :func:`prepare`. Every check runs before ``out`` is
touched or Ray starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from raudit.errors import ConfigError

__all__ = ["AuditSettings", "AuditPlan", "THREATS", "prepare", "execute"]


@dataclass(frozen=True)
class AuditSettings:
    """What a user chose, with the CLI's defaults; the fields are ``raudit audit``'s flags
    (``shadow_models`` and ``chunk_size`` take a number or ``"auto"``; ``options`` are
    ``KEY=VALUE`` strings or a mapping; ``sequential`` is ``--sequential``)."""

    impl: str = "paper"
    attack: str = "groundhog"
    features: str | None = None
    dataset: str | None = None
    target: str | None = None
    shadow_models: int | str = 1000
    epsilon: float = 1.0
    delta: float | None = None
    teachers: int | None = None
    lam: float | None = None
    max_iter: int | None = None
    preset: str = "default"
    options: Any = None
    seed: int = 0
    synthetic_rows: int | str | None = None
    label: str | None = None
    bounds: Path | str | None = None
    neighbours: str = "add-remove"
    target_candidates: int = 64
    target_pairs: int = 100
    target_selection: str = "pool"
    selection_models: int = 200
    out: Path | str | None = None
    chunk_size: int | str = "auto"
    workers: int | None = None
    backend: str = "ray"
    device: str = "auto"
    per_gpu: int = 1
    retries: int = 1
    samples_per_model: int = 1
    target_width: float | None = None
    until_ceiling: bool = False
    first_stage: int = 50
    synthetic_in: Path | str | None = None
    synthetic_out: Path | str | None = None
    threat_model: str = "black-box"
    one_run: bool = False
    canaries: int = 1000
    sequential: str | None = None

    @property
    def alpha_spending(self) -> bool:
        """A sequential audit by alpha spending (--target-width, --until-ceiling, -S auto)."""
        return (self.target_width is not None or self.until_ceiling
                or str(self.shadow_models).strip().lower() == "auto")

    @property
    def data_only(self) -> bool:
        return self.synthetic_in is not None or self.synthetic_out is not None


class ThreatModel:
    """What the attacker sees; ``check`` refuses what it cannot run, ``run`` runs it."""

    name: ClassVar[str] = ""

    def check(self, s: AuditSettings) -> None:
        """Raise a one-line ConfigError for settings this threat model cannot take."""

    def run(self, plan: "AuditPlan", progress, notice) -> dict[str, Any]:
        raise NotImplementedError


class BlackBox(ThreatModel):
    """The attack sees the final synthetic data (shadow models, one run, or files)."""

    name = "black-box"

    def run(self, plan: "AuditPlan", progress, notice) -> dict[str, Any]:
        s = plan.settings
        if s.one_run:
            from raudit.runs.one_run import run_one_run_audit
            return run_one_run_audit(plan.req, plan.out, canaries=s.canaries)
        if s.synthetic_in is not None and s.synthetic_out is not None:  # data-only
            from raudit.audit.external import run_external
            return run_external(plan.req, Path(s.synthetic_in), Path(s.synthetic_out), plan.out)
        from raudit.runs.audit import run_audit
        return run_audit(plan.req, plan.out, plan.engine, progress, notice=notice,
                         auto_chunk=plan.auto_chunk, estimate=True)  # the total first


class WhiteBox(BlackBox):
    """The same shadow models; the attack also reads each trained model."""

    name = "white-box"

    def check(self, s: AuditSettings) -> None:
        from raudit.audit.whitebox import check_white_box
        check_white_box(_impl_name(s))
        if s.data_only:
            raise ConfigError("--threat-model white-box reads the trained models; a data-only "
                              "audit (--synthetic-in/--synthetic-out) has none")
        if s.one_run or s.sequential is not None:
            raise ConfigError("--threat-model white-box runs the shadow-model game: --one-run and "
                              "--sequential anytime are not built for it (use black-box)")


class Transcript(ThreatModel):
    """The attack sees every noisy vote the mechanism releases (mechanism-only trials)."""

    name = "transcript"

    def supports(self, impl: str) -> None:
        from raudit.audit.mechanisms import check_transcript
        check_transcript(impl)

    def check(self, s: AuditSettings) -> None:
        impl = _impl_name(s)
        self.supports(impl)
        if s.one_run and self.name == "transcript":
            from raudit.audit.mechanisms import check_one_run_transcript
            check_one_run_transcript(impl)
        if s.data_only:
            raise ConfigError(f"--threat-model {self.name} audits the mechanism; a data-only "
                              "audit (--synthetic-in/--synthetic-out) is black-box")
        if s.alpha_spending:
            raise ConfigError(f"--threat-model {self.name} runs a fixed number of trials; drop "
                              "--target-width / --until-ceiling / -S auto")

    def run(self, plan: "AuditPlan", progress, notice) -> dict[str, Any]:
        from raudit.runs.transcript import run_transcript_audit
        s = plan.settings
        return run_transcript_audit(plan.req, plan.out, canaries=s.canaries if s.one_run else None,
                                    anytime=s.sequential == "anytime", level=self.name)


class Active(Transcript):
    """The auditor also chooses the queries and builds the worst-case neighbours."""

    name = "active"

    def supports(self, impl: str) -> None:
        from raudit.audit.active import check_active
        check_active(impl)


THREATS: dict[str, ThreatModel] = {t.name: t for t in (BlackBox(), WhiteBox(), Transcript(),
                                                       Active())}


@dataclass(frozen=True)
class AuditPlan:
    """Checked settings, ready to run: the request, its folder, its engine and threat model."""

    settings: AuditSettings
    req: Any  # raudit.audit.runner.AuditRequest
    out: Path
    engine: Any  # raudit.engine.driver.EngineConfig
    threat: ThreatModel
    auto_chunk: bool


def _impl_name(s: AuditSettings) -> str:
    return str(s.impl)


def option_list(options: Any) -> list[str] | None:
    """``options`` as the CLI's KEY=VALUE strings (a mapping's values as JSON)."""
    if options is None or isinstance(options, (list, tuple)):
        return None if options is None else [str(o) for o in options]
    if isinstance(options, dict):
        import json
        return [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in options.items()]
    raise ConfigError(f"options must be KEY=VALUE strings or a mapping, got {options!r}")


def _check_sequential(s: AuditSettings) -> None:
    if s.sequential is not None:
        if s.sequential != "anytime":
            raise ConfigError(f"--sequential takes anytime, got {s.sequential!r} (alpha "
                              "spending: --target-width / --until-ceiling)")
        if s.alpha_spending or s.one_run:
            raise ConfigError("--sequential anytime is its own stopping rule: drop "
                              "--target-width / --until-ceiling / -S auto / --one-run")
    if s.one_run:
        if s.alpha_spending:
            raise ConfigError("--one-run is one run: it takes no sequential stop (--target-width, "
                              "--until-ceiling, -S auto)")
        if s.canaries < 2:
            raise ConfigError(f"--canaries must be at least 2, got {s.canaries}")


def _count(value: int | str, flag: str) -> int:
    if isinstance(value, bool):
        raise ConfigError(f"{flag} takes a number or auto, got {value!r}")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{flag} takes a number or auto, got {value!r}") from None


def default_out(s: AuditSettings, shadow_models: int) -> Path:
    """``runs/audit-IMPL-ATTACK-DATASET-S...-s...`` (the folder named in ``--out``'s help)."""
    from raudit.attacks import get as get_attack
    from raudit.generators.exec_adapter import folder_name

    ds_name = s.dataset or get_attack(s.attack).default_dataset
    if s.data_only:
        return Path("runs") / f"audit-external-{s.attack}-{Path(ds_name).stem}-s{s.seed}"
    return Path("runs") / (f"audit-{folder_name(_impl_name(s))}-{s.attack}-"
                           f"{Path(ds_name).stem}-S{shadow_models}-s{s.seed}"
                           + ("" if s.threat_model == "black-box" else f"-{s.threat_model}")
                           + (f"-onerun{s.canaries}" if s.one_run else "")
                           + ("-anytime" if s.sequential else ""))


def prepare(s: AuditSettings) -> AuditPlan:
    """Check every setting (before any work) and build the request; raises ConfigError."""
    from raudit.audit.runner import DEFAULT_CHUNK, AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.generators.kwargs import generator_kwargs

    threat = THREATS.get(s.threat_model)
    if threat is None:
        raise ConfigError(f"--threat-model must be one of {', '.join(THREATS)}, "
                          f"got {s.threat_model!r}")
    _check_sequential(s)
    threat.check(s)  # every check before --out is touched
    engine = EngineConfig(backend=s.backend, workers=s.workers, device=s.device,
                          per_gpu=s.per_gpu, retries=s.retries)
    impl = _impl_name(s)
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
                       anytime=s.sequential == "anytime" and s.threat_model == "black-box",
                       threat_model=s.threat_model if s.threat_model in ("black-box", "white-box")
                       else "black-box")
    if (s.synthetic_in is None) != (s.synthetic_out is None):
        raise ConfigError("a data-only audit needs both --synthetic-in and --synthetic-out")
    out = Path(s.out) if s.out is not None else default_out(s, shadow_models)
    if s.one_run and s.data_only:
        raise ConfigError("--one-run trains its one run; a data-only audit "
                          "(--synthetic-in/--synthetic-out) has no canaries")
    # The sizes this machine can hold are checked by run_audit, before --out is touched
    # (limits.check_audit, once, with the loaded dataset).
    return AuditPlan(s, req, out, engine, threat, auto_chunk)


def execute(plan: AuditPlan, progress=None, notice: Callable[[str], None] | None = None
            ) -> dict[str, Any]:
    """Run (or resume) a prepared audit; the summary row plus run details."""
    return plan.threat.run(plan, progress, notice)
