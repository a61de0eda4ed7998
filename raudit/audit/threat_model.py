"""What the attacker sees, which neighbours, which canaries: the threat model an audit
records, and the sampling of the levels whose trials are a mechanism rather than trained
shadow models (transcript: :mod:`raudit.audit.transcript`; active: :mod:`raudit.audit.active`).

Its own module because it reads both levels' trials, which read nothing of it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from raudit.audit.active import one_run_active
from raudit.audit.transcript import VoteMechanism, one_run_transcript, transcript_scores
from raudit.errors import ConfigError

__all__ = ["THREAT_MODELS", "ThreatModel"]

THREAT_MODELS = ("black-box", "white-box", "transcript", "active")


@dataclass(frozen=True)
class ThreatModel:
    """What the attacker sees, which neighbours, which canaries: recorded with the audit."""

    level: str = "black-box"
    sees: str = "the synthetic data of the final model"
    neighbours: str = "D_in = D_out + the target (add-remove) or a replaced row"
    canaries: str = "one target record"
    trials: str = "trained shadow models"

    def __post_init__(self) -> None:
        if self.level not in THREAT_MODELS:
            raise ConfigError(f"threat model must be one of {', '.join(THREAT_MODELS)}, "
                              f"got {self.level!r}")

    @classmethod
    def white_box(cls, critic: bool) -> "ThreatModel":
        """The trained model too (raudit.audit.whitebox): unlimited sampling, and the
        student/discriminator's score where the training loop keeps it."""
        sees = ("the synthetic data, the trained generator (unlimited sampling: density "
                "near the target)" + (" and the trained student/discriminator (its score "
                                      "at the target)" if critic else
                                      "; its student/discriminator is not kept"))
        return cls("white-box", sees, cls.neighbours, cls.canaries,
                   "trained shadow models; white-box features computed in the chunk")

    @classmethod
    def transcript(cls, aggregation: str = "argmax") -> "ThreatModel":
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
    def transcript_one_run(cls, canaries: int, aggregation: str = "argmax") -> "ThreatModel":
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
    def active(cls) -> "ThreatModel":
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
    def active_one_run(cls, canaries: int, teachers: int) -> "ThreatModel":
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

    # The threat model owns the sampling (as in TAPAS): the runs layer asks it for trials.

    def scores(self, mech: VoteMechanism, *, trials: int, seed: int) -> dict:
        """``trials`` runs per world of the worst case (:func:`transcript_scores`): the same
        law at both levels -- assumed at ``transcript``, built by the auditor at ``active``."""
        if self.level not in ("transcript", "active"):
            raise ConfigError(f"{self.level} trials are trained shadow models, not a mechanism")
        return transcript_scores(mech, trials=trials, seed=seed)

    def one_run(self, mech: VoteMechanism, *, canaries: int, seed: int,
                teachers: int | None = None) -> dict:
        """One run with ``canaries`` canaries: the queries split among them (transcript) or
        each flipping its own teacher on every canary query (active, over ``teachers``)."""
        if self.level == "active":
            if teachers is None:
                raise ConfigError("an active one-run audit needs the generator's teacher count")
            return one_run_active(mech, canaries=canaries, teachers=teachers, seed=seed)
        if self.level != "transcript":
            raise ConfigError(f"no one-run audit at the {self.level} level")
        return one_run_transcript(mech, canaries=canaries, seed=seed)
