"""An audit's settings as one value: what a user chose, before any check.

``raudit audit`` (its flags) and :func:`raudit.audit` (its keyword arguments) both build
an :class:`AuditSettings`; :func:`raudit.runs.audit_plan.prepare` checks it, once, and
the threat model it names (:data:`raudit.runs.threats.THREATS`) runs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from raudit.errors import ConfigError

__all__ = ["AuditSettings", "option_list"]


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
    options: Sequence[str] | Mapping[str, object] | None = None
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
        """Files a user made elsewhere are the shadow models (--synthetic-in/-out)."""
        return self.synthetic_in is not None or self.synthetic_out is not None


def option_list(options: object) -> list[str] | None:
    """``options`` as the CLI's KEY=VALUE strings (a mapping's values as JSON)."""
    if options is None or isinstance(options, (list, tuple)):
        return None if options is None else [str(o) for o in options]
    if isinstance(options, Mapping):
        import json
        return [f"{k}={v if isinstance(v, str) else json.dumps(v)}" for k, v in options.items()]
    raise ConfigError(f"options must be KEY=VALUE strings or a mapping, got {options!r}")
