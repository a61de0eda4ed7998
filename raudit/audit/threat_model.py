"""What an audit records about its threat model: what the attacker sees, which
neighbours, which canaries, what a trial is (:class:`ThreatSpec`, in the manifest, so in
every audit id).

A value only: the threat models themselves (their refusals, their sampling, their run)
are the objects of :data:`raudit.runs.threats.THREATS`; each one describes itself by one
of these records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from raudit.errors import ConfigError
from raudit.results.convert import number

__all__ = ["EXTERNAL_IMPL", "LEVELS", "ThreatSpec", "Trials", "read_models", "trials_of"]

# the levels a record names (the results' threat_model column); a data-only audit
# records the string "data-only" and a black-box one-run audit the level black-box
LEVELS = ("black-box", "white-box", "transcript", "active")
# the recorded levels whose attack read the trained models (its features have the
# white-box views, raudit.audit.whitebox.views)
_READ_MODELS = frozenset({"white-box"})


def read_models(level: object) -> bool:
    """Whether the audit a stored row's ``threat_model`` column describes read the trained
    models (a reader of results, which has the record and not the threat model object)."""
    return level in _READ_MODELS


@dataclass(frozen=True)
class Trials:
    """What a stored audit's trials were, as its sentences name them."""

    kind: str  # "models" | "files" | "mechanism" | "canaries"
    one: str
    plural: str


# the recorded levels whose trials are drawn from the mechanism alone (nothing trained,
# nothing stored per trial: raudit.runs.transcript)
_MECHANISM_ONLY = frozenset({"transcript", "active"})
#: the generator name a data-only audit records (its synthetic files were made elsewhere;
#: its rows' threat_model column keeps the attacker's level)
EXTERNAL_IMPL = "external"


def trials_of(row: Mapping[str, Any]) -> Trials:
    """What the trials of the audit a stored summary row describes were: trained shadow
    models (black-box, white-box), a data-only audit's synthetic files, mechanism-only
    trials (transcript, active), or one run with canaries (``--one-run`` at any level)."""
    if not math.isnan(number(row.get("eps_one_run"))):
        return Trials("canaries", "canary", "canaries")
    if row.get("threat_model") in _MECHANISM_ONLY:
        return Trials("mechanism", "trial", "mechanism-only trials")
    if row.get("impl") == EXTERNAL_IMPL:
        return Trials("files", "synthetic file", "synthetic files")
    return Trials("models", "shadow model", "shadow models")


@dataclass(frozen=True)
class ThreatSpec:
    """What the attacker sees, which neighbours, which canaries: recorded with the audit."""

    level: str = "black-box"
    sees: str = "the synthetic data of the final model"
    neighbours: str = "D_in = D_out + the target (add-remove) or a replaced row"
    canaries: str = "one target record"
    trials: str = "trained shadow models"

    def __post_init__(self) -> None:
        if self.level not in LEVELS:
            raise ConfigError(f"threat model must be one of {', '.join(LEVELS)}, "
                              f"got {self.level!r}")

    @classmethod
    def white_box(cls, critic: bool) -> "ThreatSpec":
        """The trained model too (raudit.audit.whitebox): unlimited sampling, and the
        student/discriminator's score where the training loop keeps it."""
        sees = ("the synthetic data, the trained generator (unlimited sampling: density "
                "near the target)" + (" and the trained student/discriminator (its score "
                                      "at the target)" if critic else
                                      "; its student/discriminator is not kept"))
        return cls("white-box", sees, cls.neighbours, cls.canaries,
                   "trained shadow models; white-box features computed in the chunk")

    @classmethod
    def transcript(cls, aggregation: str = "argmax") -> "ThreatSpec":
        """The transcript level for a mechanism of this ``aggregation`` (vote histograms by
        default; "dp-sgd"; G-PATE's "confident-gnmax")."""
        if aggregation == "dp-sgd":
            return cls("transcript", "every noisy clipped gradient sum DP-SGD releases",
                       "worst case: the target's gradient of norm C alone in its direction, "
                       "the other records' gradients known, in or out of each Poisson sample",
                       "one gradient canary",
                       "the mechanism alone, step by step (no network trained per trial)")
        if aggregation == "confident-gnmax":
            return cls("transcript", "every noisy top count and noisy gradient-vote histogram "
                       "G-PATE's aggregation draws", "worst case: the target alone moves one "
                       "teacher's vote on every query", "none (the run's queries)",
                       "exact sufficient statistic of the likelihood ratio, no training per trial")
        return cls("transcript", "every noisy vote histogram the teachers release",
                   "worst case: the target alone changes one teacher's vote on every query",
                   "none (the generator's queries; base counts cancel in the likelihood ratio)",
                   "exact sufficient statistic of the likelihood ratio, no training per trial")

    @classmethod
    def transcript_one_run(cls, canaries: int, aggregation: str = "argmax") -> "ThreatSpec":
        if aggregation == "dp-sgd":
            return cls("transcript", "every noisy clipped gradient sum DP-SGD releases",
                       "each canary's gradient of norm C in a direction of its own",
                       f"{canaries} gradient canaries, each in with probability 1/2",
                       "one run of the mechanism (all steps, one coordinate per canary)")
        return cls("transcript", "every noisy vote histogram the teachers release",
                   "each canary moves one teacher's vote on its own share of the queries",
                   f"{canaries} canaries, each in with probability 1/2",
                   "one run of the mechanism (exact sufficient statistic per canary)")

    @classmethod
    def active(cls) -> "ThreatSpec":
        """The auditor also chooses what the mechanism answers (raudit.audit.active)."""
        return cls("active", "every noisy vote histogram the teachers release, on the "
                   "auditor's canary queries",
                   "worst case built by the auditor: the target alone in one teacher's partition "
                   "(replace-one: the target or a record of the other label), so that teacher's "
                   "vote flips on every canary query",
                   "canary queries REPLACE all the student's queries (the accountant is "
                   "data-independent, so the run answers as many either way)",
                   "exact sufficient statistic of the likelihood ratio, no training per trial "
                   "(checked against the generator's own noisy aggregation)")

    @classmethod
    def active_one_run(cls, canaries: int, teachers: int) -> "ThreatSpec":
        return cls("active", "every noisy vote histogram the teachers release, on the "
                   "auditor's canary queries",
                   f"each canary in one of {teachers} teachers (alone when canaries <= teachers): "
                   "it flips that teacher's vote on its share of the canary queries, in a "
                   "direction of its own per query",
                   f"{canaries} canary records, each in with probability 1/2, and canary queries "
                   "replacing all the student's queries",
                   "one run of the mechanism, every query simulated")

    def spec(self) -> dict:
        return asdict(self)
