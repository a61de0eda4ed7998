"""When each of an audit's mode-specific flags acts, and the refusal of one given where it
does nothing (issue 48): the audit would run as if it were absent, and the user would
read its result as that of the audit they asked for.

A flag counts as given when its value differs from its default (the command's, the API's
and a campaign's defaults are the same: the dataclass's field defaults). Who checks what:
the threat model refuses the flags it never uses (:mod:`raudit.runs.threats`); the shadow
game's request refuses those its own settings make idle (:class:`raudit.audit.runner.AuditRequest`,
and, for the default target, which the dataset decides, :func:`raudit.audit.runner.prepare`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any

from raudit.errors import ConfigError

__all__ = ["SELECTION", "WHEN", "refuse_given"]

_SHADOW = "an audit of trained shadow models (black-box, white-box)"
_AUTO = "--target auto (a black-box or white-box audit's target selection)"

#: each flag and when it acts, for the refusal's message
WHEN: dict[str, str] = {
    "target": "black-box, white-box and data-only audits",
    "features": "an attack on synthetic data (black-box, white-box, data-only)",
    "target_candidates": _AUTO,
    "target_selection": _AUTO,
    "target_pairs": "--target auto with --target-selection per-candidate",
    "selection_models": "--target auto with --target-selection pool (the default)",
    "first_stage": "a sequential black-box or white-box audit (--target-width, "
                   "--until-ceiling, -S auto or --sequential anytime)",
    "samples_per_model": _SHADOW,
    "synthetic_rows": _SHADOW,
}

#: the flags of a target selection
SELECTION = ("target_candidates", "target_selection", "target_pairs", "selection_models")


def refuse_given(settings: Any, names: Iterable[str], here: str) -> None:
    """A one-line ConfigError for the first of ``names`` (fields of the dataclass
    ``settings``) whose value is not its default; ``here``: what this audit is, as in
    "not to {here}"."""
    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    for name in names:
        value = getattr(settings, name)
        if value != defaults[name]:
            raise ConfigError(f"--{name.replace('_', '-')} {value} applies to {WHEN[name]}, "
                              f"not to {here}: drop it")
