"""The transcript and active threat models (``raudit audit --threat-model transcript``,
``--threat-model active``) and their run, ``run_transcript_audit``.

The attacker sees every noisy vote histogram the teachers release, with the worst-case
neighbours its :class:`raudit.audit.threat_model.ThreatSpec` records; a trial is the mechanism
only (:mod:`raudit.audit.mechanisms`: a dry run of the generator's vote schedule at
the budget), drawn from the likelihood ratio's exact distribution, so
``--shadow-models`` trials per world cost seconds. The existing estimators
(:func:`raudit.audit.analyse.bounds`) read the scores; one summary row (with the
threat model, eps_true and the verdict line) and its estimates go to ``--out``.

Everything a user can get wrong is checked before ``--out`` is touched.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit import runner as ar
from raudit.audit import summary
from raudit.audit.active import check_active, one_run_active, teachers_of
from raudit.audit.anytime import anytime_transcript
from raudit.audit.dpsgd import FixedConfidentReleases
from raudit.audit.mechanisms import (check_one_run_transcript, check_transcript, dry_runs,
                                     has_dry_run, schedule_eps_true, schedule_of)
from raudit.audit.run_schedule import schedule_from_run
from raudit.audit.threat_model import ThreatSpec
from raudit.audit.transcript import (VoteMechanism, mu_equivalent, one_run_transcript,
                                     transcript_scores)
from raudit.audit.estimators import known_false
from raudit.audit.flags import ENGINE, SELECTION, refuse_given
from raudit.audit.verdict import ALPHA, tightness, verdict, verdict_line
from raudit.errors import ConfigError
from raudit.results import ResultStore, spec_hash
from raudit.results.ids import canonical_json
from raudit.results.files import as_folder, check_writable
from raudit.runs.audit_settings import AuditSettings
from raudit.runs.threats import ThreatModel

__all__ = ["ACTIVE", "TRANSCRIPT", "Active", "Transcript", "run_transcript_audit"]

LOOK_EVERY = 100  # trials between two looks of an anytime audit (any schedule stays valid)


class Transcript(ThreatModel):
    """The attack sees every noisy release of the mechanism; a trial is the mechanism alone
    (its schedule dry-run at the budget, or one training run's events), the likelihood
    ratio drawn from its exact law from the stream (seed, TRANSCRIPT)."""

    name = "transcript"
    tag = "-transcript"
    # its trials are the mechanism's worst case: no target, attack, neighbours or synthetic
    # data (--attack only named the default dataset), drawn in this process (no chunks)
    idle = ("target", "features", *SELECTION, "first_stage", "samples_per_model",
            "synthetic_rows", "attack", "neighbours", *ENGINE)
    what = "a transcript audit (the mechanism's worst case, no synthetic data)"

    def supports(self, impl: str) -> None:
        """A one-line ConfigError unless ``impl`` has a mechanism this level can replay."""
        check_transcript(impl)

    def check(self, s: AuditSettings) -> None:
        impl = str(s.impl)
        self.supports(impl)
        if s.one_run:
            self.supports_one_run(impl)
        if s.data_only:
            raise ConfigError(f"--threat-model {self.name} audits the mechanism; a data-only "
                              "audit (--synthetic-in/--synthetic-out) is black-box")
        if s.alpha_spending:
            raise ConfigError(f"--threat-model {self.name} runs a fixed number of trials; drop "
                              "--target-width / --until-ceiling / -S auto")

    def refuse_idle(self, s: AuditSettings) -> None:
        super().refuse_idle(s)
        if s.one_run:  # one run with --canaries canaries: no trials per world
            refuse_given(s, ("shadow_models",), f"a one-run {self.name} audit (one run "
                         "with --canaries canaries)")

    def supports_one_run(self, impl: str) -> None:
        check_one_run_transcript(impl)

    def run(self, s: AuditSettings, req: ar.AuditRequest, out: Path, engine: Any, *,
            auto_chunk: bool, progress: Any = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
        return run_transcript_audit(req, out, canaries=s.canaries if s.one_run else None,
                                    anytime=s.sequential == "anytime", threat=self)

    # --- the sampling: which mechanism, which trials

    def schedule(self, req: ar.AuditRequest, game: Any, ds: Any,
                 canaries: int | None) -> tuple[Any, Any]:
        """(the release schedule, its eps_true): a dry run where the generator has one,
        else the events of one training run (stream (seed, TRANSCRIPT, 1))."""
        # a generator whose options turn its dry run off releases Confident-GNMax votes
        # (fixed's data-dependent analysis): their one line, before the training run
        if canaries is not None and dry_runs(req.impl) and \
                not has_dry_run(req.impl, game.options):
            FixedConfidentReleases(1.0, 1, 1.0, 0).per_canary(canaries)
        if has_dry_run(req.impl, game.options):  # no training
            return _dry_run(req, game, ds)
        # the votes depend on training: one run's events (before --out is touched)
        return schedule_from_run(req.impl, game.options, ds.train, ds.columns, game.epsilon,
                                 game.delta, seeds.derive_seed(game.seed, seeds.TRANSCRIPT, 1))

    def teachers(self, req: ar.AuditRequest, game: Any, ds: Any,
                 canaries: int | None) -> int | None:
        """The teacher count a one run spreads its canaries over (active only)."""
        return None

    def spec(self, kind: str, canaries: int | None, teachers: int | None) -> ThreatSpec:
        return ThreatSpec.transcript(kind) if canaries is None else \
            ThreatSpec.transcript_one_run(canaries, kind)

    def check_design(self, mech: VoteMechanism, canaries: int, teachers: int | None) -> None:
        """More canaries than the design has queries for: its one line, before --out."""
        mech.per_canary(canaries)  # DP-SGD: every canary has all the steps

    def scores(self, mech: VoteMechanism, *, trials: int, seed: int) -> dict[str, Any]:
        """``trials`` runs per world of the worst case (:func:`transcript_scores`): the same
        law at both levels -- assumed at ``transcript``, built by the auditor at ``active``."""
        return transcript_scores(mech, trials=trials, seed=seed)

    def one_run_scores(self, mech: VoteMechanism, *, canaries: int, seed: int,
                       teachers: int | None = None) -> dict[str, Any]:
        """One run with ``canaries`` canaries, the queries split among them."""
        return one_run_transcript(mech, canaries=canaries, seed=seed)

    def features(self, kind: str) -> str:
        return "gradient-transcript" if kind == "dp-sgd" else "vote-transcript"

    def level_notes(self, mech: VoteMechanism) -> list[str]:
        return []

    def one_run_notes(self, mech: VoteMechanism, kind: str, canaries: int,
                      teachers: int | None, one: dict[str, Any]) -> list[str]:
        if kind == "dp-sgd":
            return [f"one run: each of the {canaries} canaries has a gradient coordinate of "
                    f"its own and is in all {mech.queries:,} steps"]
        return [f"one run: the {mech.queries:,} queries are split among the {canaries} "
                f"canaries ({one['queries_per_canary']} each; a vote histogram has no "
                "coordinate per record), so the bound measures those queries' privacy"]


class Active(Transcript):
    """The auditor also chooses the queries (canary queries replace the student's) and
    builds the worst-case neighbours; always the dry run (no training)."""

    name = "active"
    tag = "-active"
    what = "an active audit (the auditor's worst case, no synthetic data)"

    def supports(self, impl: str) -> None:
        check_active(impl)

    def supports_one_run(self, impl: str) -> None:
        """Every generator active supports spreads its canaries over its teachers."""

    def schedule(self, req: ar.AuditRequest, game: Any, ds: Any,
                 canaries: int | None) -> tuple[Any, Any]:
        return _dry_run(req, game, ds)

    def teachers(self, req: ar.AuditRequest, game: Any, ds: Any,
                 canaries: int | None) -> int | None:
        return None if canaries is None else \
            teachers_of(req.impl, game.options, len(ds.train), len(ds.columns))

    def spec(self, kind: str, canaries: int | None, teachers: int | None) -> ThreatSpec:
        if canaries is None:
            return ThreatSpec.active()
        assert teachers is not None  # teachers() gives them whenever canaries are set
        return ThreatSpec.active_one_run(canaries, teachers)

    def check_design(self, mech: VoteMechanism, canaries: int, teachers: int | None) -> None:
        if teachers is not None and -(-canaries // teachers) > mech.queries:
            self.one_run_scores(mech, canaries=canaries, teachers=teachers, seed=0)

    def one_run_scores(self, mech: VoteMechanism, *, canaries: int, seed: int,
                       teachers: int | None = None) -> dict[str, Any]:
        """One run with each canary flipping its own teacher on every canary query."""
        if teachers is None:
            raise ConfigError("an active one-run audit needs the generator's teacher count")
        return one_run_active(mech, canaries=canaries, teachers=teachers, seed=seed)

    def features(self, kind: str) -> str:
        return "canary-votes"

    def level_notes(self, mech: VoteMechanism) -> list[str]:
        return ["active: the auditor's canary queries replace all the student's "
                f"{mech.queries:,} queries (its accountant is data-independent: the run "
                "answers as many either way); the GAN is not trained"]

    def one_run_notes(self, mech: VoteMechanism, kind: str, canaries: int,
                      teachers: int | None, one: dict[str, Any]) -> list[str]:
        return [f"one run: {canaries} canaries over {teachers} teachers, each flipping "
                f"its teacher's vote on its own {one['queries_per_canary']:,} queries "
                "(two coordinates per query, shared by all teachers), so the bound "
                "measures those queries' privacy"]


TRANSCRIPT, ACTIVE = Transcript(), Active()


def _dry_run(req: ar.AuditRequest, game: Any, ds: Any) -> tuple[Any, Any]:
    sched = schedule_of(req.impl, game.options, game.epsilon, game.delta, table=ds.train,
                        columns=ds.columns)
    return sched, schedule_eps_true(sched, game.delta)


def run_transcript_audit(req: ar.AuditRequest, out: Path | str, *, canaries: int | None = None,
                         anytime: bool = False, threat: Transcript = TRANSCRIPT
                         ) -> dict[str, Any]:
    """Run the transcript-level audit of ``req`` (``shadow_models`` = trials per world),
    or with ``canaries`` a one-run audit of that many canaries
    (:func:`raudit.audit.transcript.one_run_transcript`), or (``anytime``) an
    anytime-valid sequential audit of at most 2 x ``shadow_models`` trials
    (:func:`raudit.audit.anytime.anytime_transcript`). ``threat=ACTIVE``: the auditor's
    canary queries and neighbours (:mod:`raudit.audit.active`; its one run spreads the
    canaries over the teachers). The threat model draws the trials; this runs them."""
    out = as_folder(out)
    threat.supports(req.impl)
    if canaries is not None:
        threat.supports_one_run(req.impl)
    if req.sequential:
        raise ConfigError(f"--threat-model {threat.name} runs a fixed number of trials; drop "
                          "--target-width / --until-ceiling / -S auto")
    game, _, ds = ar.prepare(req)
    if canaries is not None and canaries > len(ds.train):
        raise ConfigError(f"--canaries {canaries} is more than the {len(ds.train)} training "
                          "rows: every canary is a record of the data")
    sched, true = threat.schedule(req, game, ds, canaries)
    kind = sched.mechanism.aggregation
    teachers = threat.teachers(req, game, ds, canaries)
    record = threat.spec(kind, canaries, teachers)
    manifest = {**game.spec(), "threat_model": record.spec(),
                "mechanism": dataclasses.asdict(sched.mechanism)}
    if canaries is not None:
        threat.check_design(sched.mechanism, canaries, teachers)
        manifest["one_run"] = {"canaries": int(canaries)}
        del manifest["shadow_models"]  # one run: -S plays no part
    if anytime:
        manifest["sequential"] = {"rule": "anytime", "look_every": LOOK_EVERY}
    audit_id = spec_hash(manifest)[:16]
    ResultStore(out).check_manifest(manifest)  # another audit's folder: refuse before work
    check_writable(out)
    store = ResultStore(out)
    t0 = time.perf_counter()
    seed = seeds.derive_seed(game.seed, seeds.TRANSCRIPT) % 2**32
    any_ = {}
    if anytime:
        any_ = anytime_transcript(sched.mechanism, trials=2 * game.shadow_models, seed=seed,
                                  claimed=game.epsilon, delta=game.delta or 0.0, alpha=ALPHA,
                                  look_every=LOOK_EVERY)
        result, n, one = {"estimates": {}}, any_["trials_used"], {}
    elif canaries is None:
        scored = threat.scores(sched.mechanism, trials=game.shadow_models, seed=seed)
        result = an.bounds(scored["val"], scored["test"], delta=game.delta or 0.0, alpha=ALPHA,
                           statistic=scored["statistic"])
        n, one = 2 * game.shadow_models, {}
    else:
        result, n = {"estimates": {}}, 1
        one = threat.one_run_scores(sched.mechanism, canaries=canaries, teachers=teachers,
                                    seed=seed)
    wall = time.perf_counter() - t0
    row = an.summary_row(game.spec(), {**result, "models_ok": n, "missing": 0},
                         audit_id=audit_id, target_label=f"worst-case ({threat.name})",
                         models_per_hour=n / wall * 3600 if wall > 0 else None)
    if one:
        row.update(canaries=int(canaries), eps_one_run=float(one["eps_lo"]),
                   one_run_guesses=int(one["r"]), one_run_correct=int(one["v"]),
                   shadow_models=0)
    row.update(attack="likelihood-ratio",
               features=threat.features(kind),
               synthetic_rows=0, synthetic_protocol="none", first_error=None,
               threat_model=record.level, eps_true=float(true.eps),
               eps_true_method=true.method, eps_true_source=sched.source,
               mechanism_releases=sched.mechanism.noise)
    if any_:
        row.update(eps_anytime=any_["eps_anytime"], looks=any_["looks"],
                   stop_reason=any_["stop_reason"], models_ok=n)
    row["verdict"] = verdict(row) if not one else (
        f"one-run audit of {canaries} canaries ({one['queries_per_canary']} "
        f"{'steps' if kind == 'dp-sgd' else 'queries'} each): "
        + (f"{one['v']} of {one['r']} guesses right, " if one["r"] else
           "no guess count beat chance, ")
        + f"eps >= {one['eps_lo']:.2f} at "
        f"{100 * (1 - one['beta']):.0f}% confidence, assuming pure DP"
        # as the black-box one-run audit says it (raudit.runs.one_run)
        + (": the claim is VIOLATED" if one["eps_lo"] > game.epsilon else ""))
    row["tightness"] = tightness(row)
    row["verdict_line"] = verdict_line(row)
    fit = _fit_clause(result.get("mu_fit"), true.eps, game.delta)
    if fit and known_false("gdp_fit", (sched.mechanism.noise,)):
        fit = None  # a Laplace mechanism's trade-off is not Gaussian: no mu to compare
    if fit:  # the tight number beside the assumption-free one, its assumption named
        row["verdict_line"] += f"; GDP fit {fit}"
    values = summary.estimates_of(result)
    with store.lock():
        store.ensure_manifest(manifest)
        summary.append_summary(store, row, values, alpha=ALPHA)
    mech = sched.mechanism
    notes = [f"mechanism-only trials: {mech.describe()}; the likelihood ratio drawn from its "
             f"exact distribution, no training per trial ({sched.source})",
             f"threat model: {canonical_json(record.spec())}"]
    notes += [f"not covered by this transcript: {u}" for u in sched.uncovered]
    notes += threat.level_notes(mech)
    if fit:
        notes.append(f"GDP fit of all {2 * game.shadow_models:,} trials' likelihood ratios: "
                     f"{fit} (one threshold: mu >= {result['mu_gdp']:.4f})")
    if one:
        notes += threat.one_run_notes(mech, kind, int(canaries), teachers, one)
    extra = {"mu_fit": float(result["mu_fit"])} if result.get("mu_fit") is not None else {}
    return {**row, **extra, "estimates": values, "out": str(out), "models_run": n, "failed_chunks": 0,
            "wall_s": wall, "placement": "in-process (numpy)", "notes": notes,
            "target_row": "worst-case"}

def _fit_clause(mu_fit: float | None, eps_true: float, delta: float | None) -> str | None:
    """"mu >= a of the mechanism's b (r %; assumes a Gaussian trade-off)" for the GDP fit."""
    if mu_fit is None:
        return None
    try:
        mu_true = mu_equivalent(eps_true, delta) if delta else float("nan")
    except ValueError:  # beyond mu = 50 (updated's eps_true 4e7): no useful mu
        mu_true = float("nan")
    share = f"{mu_fit / mu_true:.0%}" if mu_true == mu_true and mu_true > 0 else "n/a"
    return (f"mu >= {mu_fit:.3f} of the mechanism's {mu_true:.3f} ({share}; assumes a "
            "Gaussian trade-off)")
