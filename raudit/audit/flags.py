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
from raudit.wording import FLAGS

__all__ = ["ENGINE", "GENERATOR", "SELECTION", "WHEN", "refuse_given"]

_SHADOW = "an audit of trained shadow models (black-box, white-box)"
_ENGINE = ("an audit of trained shadow models (black-box, white-box), whose chunks run on "
           "the engine")
_GENERATOR = "an audit that runs the generator (every kind but a data-only audit)"
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
    "shadow_models": "an audit of shadow models or mechanism-only trials (black-box, "
                     "white-box, transcript, active)",
    "attack": "an attack on synthetic data (black-box, white-box, data-only)",
    "neighbours": "an audit of shadow models or synthetic files (black-box, white-box, "
                  "data-only; the others make their own neighbours)",
    "chunk_size": _ENGINE,
    "workers": _ENGINE,
    "per_gpu": _ENGINE,
    "retries": _ENGINE,
    "device": _ENGINE,
    "impl": _GENERATOR,
    "preset": _GENERATOR,
    "teachers": _GENERATOR,
    "lam": _GENERATOR,
    "max_iter": _GENERATOR,
    "options": _GENERATOR,
}

#: the flags of a target selection
SELECTION = ("target_candidates", "target_selection", "target_pairs", "selection_models")
#: the flags of the engine that runs a shadow-model audit's chunks (no other kind has chunks)
ENGINE = ("chunk_size", "workers", "per_gpu", "retries", "device")
#: the flags that choose and shape the generator
GENERATOR = ("impl", "preset", "teachers", "lam", "max_iter", "options")


def refuse_given(settings: Any, names: Iterable[str], here: str) -> None:
    """A one-line ConfigError for the first of ``names`` (fields of the dataclass
    ``settings``) whose value is not its default; ``here``: what this audit is, as in
    "not to {here}"."""
    defaults = {f.name: f.default for f in dataclasses.fields(settings)}
    for name in names:
        value = getattr(settings, name)
        if not _is_default(value, defaults[name]):
            raise ConfigError(f"{_given(name, value)} applies to {WHEN[name]}, "
                              f"not to {here}: drop it")


def _is_default(value: Any, default: Any) -> bool:
    # the command passes -S and -M as text ("1000", "auto"), the API as given (1000, "AUTO")
    if value == default:
        return True
    if default is None and isinstance(value, (list, tuple, dict)) and not value:
        return True  # -o given no value: typer's [] and the API's {} are no option
    return isinstance(value, str) and not isinstance(default, bool) and default is not None \
        and value.strip().lower() == str(default).lower()


def _given(name: str, value: Any) -> str:
    """The flag as a user gave it: ``--lambda 0.5``, ``-o a=1 -o b=2``."""
    flag = FLAGS.setting(name)  # an error names the command's flag, from the API too
    if name == "options" and isinstance(value, dict):
        value = [f"{k}={v}" for k, v in value.items()]
    if name == "options" and isinstance(value, (list, tuple)):
        return " ".join(f"{flag} {v}" for v in value)
    return f"{flag} {value}"
