"""The threat models an audit can run, one registry kind (as TAPAS's threat models): each
object owns its refusals (``check``), how its trials are drawn, and its run (``run``).

::

    THREATS.names()  # active, black-box, external, one-run, transcript, white-box
    threat = select(settings)          # --threat-model, --one-run and --synthetic-in/out
    threat.check(settings)             # one-line ConfigError before any work
    threat.run(settings, req, out, engine, ...)

=============  =====================================================  =====================
name           the attacker sees / a trial is                         sampling lives in
=============  =====================================================  =====================
black-box      the synthetic data / a trained shadow model            raudit.runs.audit
white-box      that and the trained model / a trained shadow model    raudit.runs.audit
transcript     every noisy release / the mechanism alone              raudit.runs.transcript
active         that, on the auditor's queries / the mechanism alone   raudit.runs.transcript
one-run        one run's synthetic data / one run with m canaries     raudit.runs.one_run
external       a user's synthetic files / one file                    raudit.runs.external
=============  =====================================================  =====================

Entries are ``module:attr`` strings, imported on first use, so that choosing a transcript
audit never imports the shadow-model scheduler (and this module imports none of them).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from raudit.audit.flags import refuse_given
from raudit.errors import ConfigError
from raudit.registry import Registry
from raudit.runs.audit_settings import AuditSettings

if TYPE_CHECKING:
    from raudit.audit.runner import AuditRequest
    from raudit.engine.driver import EngineConfig
    from raudit.runs.schedule import Progress

__all__ = ["THREATS", "ThreatModel", "reads_models", "select"]

# the order --threat-model's help and its error name them in
ORDER = ("black-box", "white-box", "transcript", "active", "external", "one-run")


class ThreatModel:
    """What the attacker sees and what a trial is. ``check`` refuses the settings it cannot
    take; ``run`` draws the trials (its own sampling) and writes the summary."""

    name: ClassVar[str] = ""
    # a trial is a trained shadow model (raudit.runs.audit's scheduler): black-box, white-box
    trains_models: ClassVar[bool] = False
    # the shadow-model game's attack also reads each trained model (white-box): the
    # request's ``white_box`` (raudit.audit.runner.AuditRequest)
    reads_models: ClassVar[bool] = False
    # a folder name's tag after -s{seed} (default_out)
    tag: ClassVar[str] = ""
    # the settings this threat model never reads, and what it is instead, for their
    # refusal (raudit.audit.flags): given, the audit would run as if they were absent
    idle: ClassVar[tuple[str, ...]] = ()
    what: ClassVar[str] = ""

    def check(self, s: AuditSettings) -> None:
        """Raise a one-line ConfigError for settings this threat model cannot take."""

    def refuse_idle(self, s: AuditSettings) -> None:
        """A one-line ConfigError for a flag given that this threat model never reads."""
        refuse_given(s, self.idle, self.what)

    def chosen(self, s: AuditSettings) -> "ThreatModel":
        """The threat model the other flags make of this one (black-box: one-run with
        --one-run, external with --synthetic-in/--synthetic-out); itself by default."""
        return self

    def shadow_anytime(self, s: AuditSettings) -> bool:
        """Whether the shadow-model game stops by the anytime rule (--sequential anytime)."""
        return False

    def one_run(self, s: AuditSettings) -> bool:
        """Whether this audit is one run with --canaries canaries."""
        return s.one_run

    def default_out(self, s: AuditSettings, shadow_models: int) -> Path:
        """``runs/audit-IMPL-ATTACK-DATASET-S...-s...`` (the folder named in ``--out``'s help)."""
        from raudit.attacks import get as get_attack
        from raudit.generators.exec_adapter import folder_name

        ds_name = s.dataset or get_attack(s.attack).default_dataset
        return Path("runs") / (f"audit-{folder_name(str(s.impl))}-{s.attack}-"
                               f"{Path(ds_name).stem}-S{shadow_models}-s{s.seed}{self.tag}"
                               + (f"-onerun{s.canaries}" if self.one_run(s) else "")
                               + ("-anytime" if s.sequential else ""))

    def run(self, s: AuditSettings, req: AuditRequest, out: Path, engine: EngineConfig, *,
            auto_chunk: bool, progress: Progress | None = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
        """Run (or resume) the audit of ``req`` (a raudit.audit.runner.AuditRequest) into
        ``out`` on ``engine``; the summary row plus run details."""
        raise NotImplementedError


def _check_threat(obj: object, name: str) -> None:
    if not isinstance(obj, ThreatModel) or obj.name != name:
        raise ConfigError(f"threat model {name!r} must be a ThreatModel named {name!r}, "
                          f"got {obj!r}")


THREATS: Registry[ThreatModel] = Registry("threat model", check=_check_threat)
for _name, _entry in (("black-box", "raudit.runs.audit:BLACK_BOX"),
                      ("white-box", "raudit.runs.audit:WHITE_BOX"),
                      ("transcript", "raudit.runs.transcript:TRANSCRIPT"),
                      ("active", "raudit.runs.transcript:ACTIVE"),
                      ("external", "raudit.runs.external:EXTERNAL"),
                      ("one-run", "raudit.runs.one_run:ONE_RUN")):
    THREATS.register(_name, _entry)


def select(s: AuditSettings) -> ThreatModel:
    """The threat model ``s`` asks for (``--threat-model``, refined by ``--one-run`` and
    ``--synthetic-in/--synthetic-out``); a one-line ConfigError for an unknown name."""
    if s.threat_model not in THREATS:
        raise ConfigError(f"--threat-model must be one of {', '.join(ORDER)}, "
                          f"got {s.threat_model!r}")
    return THREATS.get(s.threat_model).chosen(s)


def reads_models(name: str) -> bool:
    """Whether a shadow-model audit under the threat model ``name`` (a campaign job's
    ``threat_model``) reads each trained model; a one-line ConfigError for an unknown name
    or one whose trials are not trained models."""
    if name not in THREATS:
        raise ConfigError(f"threat_model must be one of {', '.join(ORDER)}, got {name!r}")
    threat = THREATS.get(name)
    if not threat.trains_models:
        shadow = [n for n in ORDER if THREATS.get(n).trains_models]
        raise ConfigError(f"an audit of trained shadow models takes the threat model "
                          f"{' or '.join(shadow)}, got {name!r} (transcript: raudit audit "
                          "--threat-model transcript)")
    return threat.reads_models
