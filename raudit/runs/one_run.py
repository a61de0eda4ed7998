"""The one-run threat model (``raudit audit --one-run --canaries m`` at black-box level)
and its run, ``run_one_run_audit``.

ONE training run with m canaries, each in with probability 1/2, scored on the run's
synthetic data without shadow models (:mod:`raudit.audit.one_run_bb`), and Steinke et
al.'s bound. One summary row (threat model, eps_true where a dry run exists, the
verdict line) goes to ``--out``; everything a user can get wrong is checked before
``--out`` is touched or anything trains.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from raudit import seeds
from raudit.audit import analyse as an
from raudit.audit import runner as ar
from raudit.audit import summary
from raudit.audit.flags import ENGINE, SELECTION
from raudit.audit.mechanisms import mechanism_columns
from raudit.audit.one_run_bb import check_canaries, one_run_black_box
from raudit.audit.threat_model import ThreatSpec
from raudit.audit.verdict import tightness, verdict_line
from raudit.errors import ConfigError
from raudit.generators.plugin_process import cpu_seconds
from raudit.results import ResultStore, spec_hash
from raudit.results.ids import canonical_json
from raudit.results.files import as_folder, check_writable
from raudit.runs.audit_settings import AuditSettings
from raudit.runs.threats import ThreatModel

__all__ = ["ONE_RUN", "OneRun", "run_one_run_audit"]

SCORER = "distance to the nearest base row minus distance to the nearest synthetic row"


class OneRun(ThreatModel):
    """One training run with m canaries, each in with probability 1/2 (its own stream,
    seeds.ONE_RUN), scored on that run's synthetic data: no shadow model. Chosen by
    ``--one-run`` at black-box (transcript and active run their own one-run audits)."""

    name = "one-run"
    # its canaries are the most outlying rows, scored on one run's own synthetic table by
    # their distances (no attack; --attack only named the default dataset), added or
    # removed (no neighbours), in one run in this process (no -S, no chunks)
    idle = ("target", "features", *SELECTION, "first_stage", "samples_per_model",
            "synthetic_rows", "shadow_models", "attack", "neighbours", *ENGINE)
    what = "a one-run audit (its canaries are the most outlying rows)"

    def one_run(self, s: AuditSettings) -> bool:
        return True

    def check(self, s: AuditSettings) -> None:
        if s.data_only:
            raise ConfigError("--one-run trains its one run; a data-only audit "
                              "(--synthetic-in/--synthetic-out) has no canaries")

    def spec(self, canaries: int) -> ThreatSpec:
        return ThreatSpec("black-box", "the synthetic data of ONE training run",
                          "base rows always in; each canary in with probability 1/2",
                          f"{canaries} canaries: the most outlying training rows",
                          f"one training run; canaries scored by {SCORER}")

    def sample(self, game: Any, ds: Any, canaries: int) -> dict[str, Any]:
        """The one run: its canaries drawn in or out, trained and scored, from the stream
        (seed, ONE_RUN) (:func:`raudit.audit.one_run_bb.one_run_black_box`)."""
        seed = seeds.derive_seed(game.seed, seeds.ONE_RUN) % 2**32
        return one_run_black_box(game.impl, game.options, ds.train, ds.columns,
                                 canaries=canaries, epsilon=game.epsilon, delta=game.delta,
                                 seed=seed)

    def run(self, s: AuditSettings, req: ar.AuditRequest, out: Path, engine: Any, *,
            auto_chunk: bool, progress: Any = None,
            notice: Callable[[str], None] | None = None) -> dict[str, Any]:
        return run_one_run_audit(req, out, canaries=s.canaries)


def run_one_run_audit(req: ar.AuditRequest, out: Path | str, *, canaries: int) -> dict[str, Any]:
    """Run the black-box one-run audit of ``req`` with ``canaries`` canaries."""
    out = as_folder(out)
    if req.sequential:
        raise ConfigError("--one-run is one run: it takes no sequential stop (--target-width, "
                          "--until-ceiling, -S auto, --sequential)")
    game, _, ds = ar.prepare(req)
    check_canaries(canaries, len(ds.train))
    threat = ONE_RUN.spec(canaries)
    manifest = {**game.spec(), "threat_model": threat.spec(),
                "one_run": {"canaries": int(canaries), "scorer": "dcr-difference"}}
    del manifest["shadow_models"]  # one run: -S plays no part
    audit_id = spec_hash(manifest)[:16]
    ResultStore(out).check_manifest(manifest)  # another audit's folder: refuse before work
    check_writable(out)
    store = ResultStore(out)
    t0 = cpu_seconds()  # an exec: plugin's program included
    one = ONE_RUN.sample(game, ds, canaries)
    cpu = cpu_seconds() - t0
    row = an.summary_row(game.spec(), {"estimates": {}, "models_ok": 1, "missing": 0},
                         audit_id=audit_id, target_label=f"{canaries} canaries",
                         models_per_hour=3600 / cpu if cpu > 0 else None)
    row.update(canaries=int(canaries), eps_one_run=float(one["eps_lo"]),
               one_run_guesses=int(one["r"]), one_run_correct=int(one["v"]), shadow_models=0,
               features="dcr-difference", synthetic_rows=one["synthetic_rows"],
               synthetic_protocol="same", first_error=None, **mechanism_columns(game))
    row["verdict"] = (f"one-run audit of {canaries} canaries on the synthetic data: "
                      + (f"{one['v']} of {one['r']} guesses right, " if one["r"] else
                         "no guess count beat chance, ")
                      + f"eps >= {one['eps_lo']:.2f} at {100 * (1 - one['beta']):.0f}% "
                      "confidence, assuming pure DP"
                      + (": the claim is VIOLATED" if one["eps_lo"] > game.epsilon else ""))
    row["tightness"] = tightness(row)
    row["verdict_line"] = verdict_line(row)
    with store.lock():
        store.ensure_manifest(manifest)
        summary.append_summary(store, row, {}, alpha=one["beta"])
    notes = [f"one training run on {one['trained_rows']} rows (the base and the canaries drawn "
             f"in); canaries scored by {SCORER}, no shadow model",
             f"threat model: {canonical_json(threat.spec())}"]
    return {**row, "estimates": {}, "out": str(out), "models_run": 1, "failed_chunks": 0,
            "wall_s": cpu, "placement": "in-process", "notes": notes,
            "target_row": f"{canaries} canaries"}


ONE_RUN = OneRun()
