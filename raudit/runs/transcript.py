"""``run_transcript_audit``: ``raudit audit --threat-model transcript``.

The attacker sees every noisy vote histogram the teachers release, with the worst-case
neighbours of :class:`raudit.audit.threat_model.ThreatModel`; a trial is the mechanism
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
from pathlib import Path
from typing import Any

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit import runner as ar
from raudit.audit import summary
from raudit.audit.active import check_active, teachers_of
from raudit.audit.anytime import anytime_transcript
from raudit.audit.dpsgd import FixedConfidentReleases
from raudit.audit.mechanisms import (check_one_run_transcript, check_transcript, dry_runs,
                                     has_dry_run, schedule_eps_true, schedule_of)
from raudit.audit.run_schedule import schedule_from_run
from raudit.audit.threat_model import ThreatModel
from raudit.audit.transcript import mu_equivalent
from raudit.audit.estimators import known_false
from raudit.audit.verdict import ALPHA, tightness, verdict, verdict_line
from raudit.errors import ConfigError
from raudit.results import ResultStore, spec_hash
from raudit.results.ids import canonical_json
from raudit.results.files import as_folder, check_writable

__all__ = ["run_transcript_audit"]

LOOK_EVERY = 100  # trials between two looks of an anytime audit (any schedule stays valid)


def run_transcript_audit(req: ar.AuditRequest, out: Path | str, *, canaries: int | None = None,
                         anytime: bool = False, level: str = "transcript") -> dict[str, Any]:
    """Run the transcript-level audit of ``req`` (``shadow_models`` = trials per world),
    or with ``canaries`` a one-run audit of that many canaries
    (:func:`raudit.audit.transcript.one_run_transcript`), or (``anytime``) an
    anytime-valid sequential audit of at most 2 x ``shadow_models`` trials
    (:func:`raudit.audit.anytime.anytime_transcript`). ``level="active"``: the auditor's
    canary queries and neighbours (:mod:`raudit.audit.active`; its one run spreads the
    canaries over the teachers)."""
    out = as_folder(out)
    if level not in ("transcript", "active"):
        raise ConfigError(f"run_transcript_audit runs transcript or active, got {level!r}")
    check_active(req.impl) if level == "active" else check_transcript(req.impl)
    if canaries is not None and level == "transcript":
        check_one_run_transcript(req.impl)
    if req.sequential:
        raise ConfigError(f"--threat-model {level} runs a fixed number of trials; drop "
                          "--target-width / --until-ceiling / -S auto")
    game, _, ds = ar.prepare(req)
    if canaries is not None and canaries > len(ds.train):
        raise ConfigError(f"--canaries {canaries} is more than the {len(ds.train)} training "
                          "rows: every canary is a record of the data")
    # a generator whose options turn its dry run off releases Confident-GNMax votes
    # (fixed's data-dependent analysis): their one line, before the training run
    if canaries is not None and level == "transcript" and dry_runs(req.impl) and \
            not has_dry_run(req.impl, game.options):
        FixedConfidentReleases(1.0, 1, 1.0, 0).per_canary(canaries)
    if level == "active" or has_dry_run(req.impl, game.options):  # no training
        sched = schedule_of(req.impl, game.options, game.epsilon, game.delta, table=ds.train,
                            columns=ds.columns)
        true = schedule_eps_true(sched, game.delta)
    else:  # the votes depend on training: one run's events (before --out is touched)
        sched, true = schedule_from_run(req.impl, game.options, ds.train, ds.columns,
                                        game.epsilon, game.delta,
                                        seeds.derive_seed(game.seed, seeds.TRANSCRIPT, 1))
    kind = sched.mechanism.aggregation
    teachers = teachers_of(req.impl, game.options, len(ds.train), len(ds.columns)) \
        if level == "active" and canaries is not None else None
    if level == "active":
        threat = ThreatModel.active() if canaries is None else \
            ThreatModel.active_one_run(canaries, teachers)
    else:
        threat = ThreatModel.transcript(kind) if canaries is None else \
            ThreatModel.transcript_one_run(canaries, kind)
    manifest = {**game.spec(), "threat_model": threat.spec(),
                "mechanism": dataclasses.asdict(sched.mechanism)}
    if canaries is not None:
        # more canaries than the design has queries for: its one line, before --out
        if level == "transcript":
            sched.mechanism.per_canary(canaries)  # DP-SGD: every canary has all the steps
        elif -(-canaries // teachers) > sched.mechanism.queries:
            threat.one_run(sched.mechanism, canaries=canaries, teachers=teachers, seed=0)
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
        one = threat.one_run(sched.mechanism, canaries=canaries, teachers=teachers, seed=seed)
    wall = time.perf_counter() - t0
    row = an.summary_row(game.spec(), {**result, "models_ok": n, "missing": 0},
                         audit_id=audit_id, target_label=f"worst-case ({level})",
                         models_per_hour=n / wall * 3600 if wall > 0 else None)
    if one:
        row.update(canaries=int(canaries), eps_one_run=float(one["eps_lo"]),
                   one_run_guesses=int(one["r"]), one_run_correct=int(one["v"]),
                   shadow_models=0)
    row.update(attack="likelihood-ratio",
               features="canary-votes" if level == "active" else
               "gradient-transcript" if kind == "dp-sgd" else "vote-transcript",
               synthetic_rows=0, synthetic_protocol="none", first_error=None,
               threat_model=threat.level, eps_true=float(true.eps),
               eps_true_method=true.method, eps_true_source=sched.source,
               mechanism_releases=sched.mechanism.noise)
    if any_:
        row.update(eps_anytime=any_["eps_anytime"], looks=any_["looks"],
                   stop_reason=any_["stop_reason"], models_ok=n)
    row["verdict"] = (f"anytime-valid audit: eps >= {any_['eps_anytime']:.2f} at "
                      f"{100 * (1 - ALPHA):.0f}% confidence after {n} trials "
                      f"({any_['stop_reason']})") if any_ else verdict(row) if not one else (
        f"one-run audit of {canaries} canaries ({one['queries_per_canary']} "
        f"{'steps' if kind == 'dp-sgd' else 'queries'} each): "
        + (f"{one['v']} of {one['r']} guesses right, " if one["r"] else
           "no guess count beat chance, ")
        + f"eps >= {one['eps_lo']:.2f} at "
        f"{100 * (1 - one['beta']):.0f}% confidence, assuming pure DP")
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
             f"threat model: {canonical_json(threat.spec())}"]
    notes += [f"not covered by this transcript: {u}" for u in sched.uncovered]
    if level == "active":
        notes.append("active: the auditor's canary queries replace all the student's "
                     f"{mech.queries:,} queries (its accountant is data-independent: the run "
                     "answers as many either way); the GAN is not trained")
    if fit:
        notes.append(f"GDP fit of all {2 * game.shadow_models:,} trials' likelihood ratios: "
                     f"{fit} (one threshold: mu >= {result['mu_gdp']:.4f})")
    if one and level == "active":
        notes.append(f"one run: {canaries} canaries over {teachers} teachers, each flipping "
                     f"its teacher's vote on its own {one['queries_per_canary']:,} queries "
                     "(two coordinates per query, shared by all teachers), so the bound "
                     "measures those queries' privacy")
    elif one and kind == "dp-sgd":
        notes.append(f"one run: each of the {canaries} canaries has a gradient coordinate of "
                     f"its own and is in all {mech.queries:,} steps")
    elif one:
        notes.append(f"one run: the {mech.queries:,} queries are split among the {canaries} "
                     f"canaries ({one['queries_per_canary']} each; a vote histogram has no "
                     "coordinate per record), so the bound measures those queries' privacy")
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
