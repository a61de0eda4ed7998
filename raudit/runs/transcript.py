"""``run_transcript_audit``: ``raudit audit --threat-model transcript``.

The attacker sees every noisy vote histogram the teachers release, with the worst-case
neighbours of :class:`raudit.audit.transcript.ThreatModel`; a trial is the mechanism
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
from raudit.audit.mechanisms import check_transcript, schedule_eps_true, schedule_of
from raudit.audit.transcript import ThreatModel, transcript_scores
from raudit.audit.verdict import ALPHA, tightness, verdict, verdict_line
from raudit.errors import ConfigError
from raudit.results import ResultStore, spec_hash
from raudit.results.ids import canonical_json
from raudit.results.store import check_writable

__all__ = ["run_transcript_audit"]


def run_transcript_audit(req: ar.AuditRequest, out: Path | str) -> dict[str, Any]:
    """Run the transcript-level audit of ``req`` (``shadow_models`` = trials per world)."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--out {out} is a file; give a folder")
    check_transcript(req.impl)
    if req.sequential:
        raise ConfigError("--threat-model transcript runs a fixed number of trials; drop "
                          "--target-width / --until-ceiling / -S auto")
    game, _, _ = ar.prepare(req)
    sched = schedule_of(req.impl, game.options, game.epsilon, game.delta)
    threat = ThreatModel.transcript()
    manifest = {**game.spec(), "threat_model": threat.spec(),
                "mechanism": dataclasses.asdict(sched.mechanism)}
    audit_id = spec_hash(manifest)[:16]
    ResultStore(out).check_manifest(manifest)  # another audit's folder: refuse before work
    check_writable(out)
    store = ResultStore(out)
    t0 = time.perf_counter()
    scored = transcript_scores(sched.mechanism, trials=game.shadow_models,
                               seed=seeds.derive_seed(game.seed, seeds.TRANSCRIPT) % 2**32)
    result = an.bounds(scored["val"], scored["test"], delta=game.delta or 0.0, alpha=ALPHA)
    true = schedule_eps_true(sched, game.delta)
    wall = time.perf_counter() - t0
    n = 2 * game.shadow_models
    row = an.summary_row(game.spec(), {**result, "models_ok": n, "missing": 0},
                         audit_id=audit_id, target_label="worst-case (transcript)",
                         models_per_hour=n / wall * 3600 if wall > 0 else None)
    row.update(attack="likelihood-ratio", features="vote-transcript",
               synthetic_rows=0, synthetic_protocol="none", first_error=None,
               threat_model=threat.level, eps_true=float(true.eps),
               eps_true_method=true.method, eps_true_source=sched.source)
    row["verdict"] = verdict(row)
    row["tightness"] = tightness(row)
    row["verdict_line"] = verdict_line(row)
    values = ar.estimates_of(result)
    with store.lock():
        store.ensure_manifest(manifest)
        ar.append_summary(store, row, values, alpha=ALPHA)
    mech = sched.mechanism
    notes = [f"mechanism-only trials: {mech.queries:,} {mech.noise} ({mech.aggregation}) "
             f"votes of scale {mech.scale:.4g}, exact sufficient statistic of the likelihood "
             f"ratio, no training ({sched.source})", f"threat model: {canonical_json(threat.spec())}"]
    return {**row, "estimates": values, "out": str(out), "models_run": n, "failed_chunks": 0,
            "wall_s": wall, "placement": "in-process (numpy)", "notes": notes,
            "target_row": "worst-case"}
