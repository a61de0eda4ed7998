"""The versioned schema of the result tables.

Three tables are written by audits:

* ``shadow``: one row per shadow model of the distinguishing game (which world,
  which seed, which split, what training reported, the attack's feature vector);
* ``summary``: one row per audit (AUC, the chosen threshold and its confusion
  counts, the eps lower bounds and their ceiling);
* ``estimates``: the same bounds as a long table, one row per audit and registered
  estimator (:mod:`raudit.audit.estimators`), so an estimator added later needs no new
  summary column.

Evolution rule (the same one ``dp_accounting`` follows for its events): **add
columns freely, never repurpose one.** A column keeps its name, type and meaning
forever; a new meaning gets a new column. Readers fill columns that an older
writer did not know with nulls, so every part file ever written stays readable.
Bump :data:`SCHEMA_VERSION` whenever a column is added; every row records the
version that wrote it in ``schema_version``.

The tables are plain dicts of ``column -> pyarrow type`` (:data:`TABLES`);
:func:`add_column` extends one (e.g. from a plugin) under the same rule. Rows are
validated and converted to and from Arrow by :mod:`raudit.results.convert`.
"""

from __future__ import annotations

import pyarrow as pa

from raudit.errors import ConfigError, UnknownNameError

SCHEMA_VERSION = 13  # 2: shadow target..device, summary eps_jeffreys..models_per_hour
# 3: shadow delta; summary synthetic_protocol, verdict, first_error; 4: the utility table
# 5: summary eps_curve, mu_gdp, eps_gdp, best_estimator (the trade-off-curve bounds)
# 6: shadow features_extra; summary samples_per_model, eps_bayes_multi
# 7: summary looks, stop_reason (sequential audits); 8: the estimates table
# 9: utility control, label_share (coin-flip controls, single-class synthetic tables)
# 10: shadow train_cpu_s (the chunk's training CPU time, per model)
# 11: summary threat_model, eps_true, eps_true_method, eps_true_source, tightness, verdict_line,
#     canaries, eps_one_run, one_run_guesses, one_run_correct (one-run audits), eps_anytime
# 12: shadow eps_true, eps_true_method, eps_true_source (one kept model's events, issue 29)
# 13: summary mechanism_releases (the noise the generator declares: which estimates hold),
#     feature_view (the white-box audit's features, chosen on validation)

_STR, _I64, _F64 = pa.string(), pa.int64(), pa.float64()

SHADOW: dict[str, pa.DataType] = {
    "trial_id": _STR,  # content hash of the trial's spec (raudit.results.ids.trial_id)
    "audit_id": _STR,
    "schema_version": _I64,
    "impl": _STR,
    "dataset": _STR,
    "attack": _STR,
    "features": _STR,  # the feature-set name
    "world": _STR,  # "in" | "out"
    "shadow_index": _I64,
    "seed": _I64,
    "split": _STR,  # "train" | "val" | "test"
    "iterations": _I64,
    "eps_hat": _F64,  # the generator's own accountant; NaN if it has none
    "wall_s": _F64,
    "status": _STR,  # "ok" | "failed"
    "error": _STR,
    "features_vec": pa.list_(_F64),
    "options_json": _STR,
    # version 2 (the audit command)
    "target": _STR,  # the target's row id in the training table
    "sample_seed": _I64,  # seed of the synthetic sample (seed is the fit's)
    "synthetic_rows": _I64,  # rows sampled, the same in both worlds
    "chunk_models": _I64,  # models trained together in the chunk (the batch size M)
    "device": _STR,  # "cpu" | "cuda": where the chunk ran
    # version 3 (one privacy spec)
    "delta": _F64,  # the delta the model trained with (raudit.privacy, the same in both worlds)
    # version 6 (several synthetic datasets per model): the extra ones' feature vectors
    "features_extra": pa.list_(pa.list_(_F64)),
    # version 10: CPU seconds of the chunk's training (its fit_many, in the process that ran
    # it) per model, so a run's rate per CPU-second can be checked against the calibration
    "train_cpu_s": _F64,
    # version 12: eps_true of ONE model per audit (the chunk kept its privacy events while it
    # trained: raudit.generators.transcript.ModelEvents); null on every other row
    "eps_true": _F64,
    "eps_true_method": _STR,
    "eps_true_source": _STR,
}

SUMMARY: dict[str, pa.DataType] = {
    "audit_id": _STR,
    "schema_version": _I64,
    "impl": _STR,
    "dataset": _STR,
    "attack": _STR,
    "features": _STR,
    "target": _STR,  # e.g. "worst-case" or "row:123"
    "shadow_models": _I64,
    "auc": _F64,
    "threshold": _F64,
    "direction": _STR,  # which way the threshold was applied (chosen on validation)
    "tp": _I64,
    "fn": _I64,
    "tn": _I64,
    "fp": _I64,
    "tpr": _F64,
    "fpr": _F64,
    "eps_cp": _F64,
    "eps_bayes": _F64,
    "eps_max": _F64,
    "saturated": pa.bool_(),
    "epsilon": _F64,
    "delta": _F64,
    "missing": _I64,  # shadow models that failed or never reported
    "created_at": pa.timestamp("us", tz="UTC"),
    "options_json": _STR,
    # version 2 (the audit command)
    "eps_jeffreys": _F64,
    "seed": _I64,  # the audit's root seed
    "synthetic_rows": _I64,
    "models_ok": _I64,  # shadow models with status ok (of 2 x shadow_models)
    "models_per_hour": _F64,  # throughput of the run that wrote this row
    # version 3 (the audit a user can trust)
    "synthetic_protocol": _STR,  # "same" (both worlds sample synthetic_rows) | "per-world"
    "verdict": _STR,  # one sentence: violated / not detected, with confidence and ceiling
    "first_error": _STR,  # the first failed model's error when some failed (missing > 0)
    # version 5 (trade-off-curve bounds, raudit.audit.fdp)
    "eps_curve": _F64,  # every threshold of the test split, Bonferroni-corrected CP bands
    "mu_gdp": _F64,  # the largest mu-GDP the curve rules out (a bound on mu, not on eps)
    "eps_gdp": _F64,  # eps at delta of mu_gdp-GDP: valid only for Gaussian-shaped mechanisms
    "best_estimator": _STR,  # "cp" | "curve": the larger of the two distribution-free bounds
    # version 6 (several synthetic datasets per model)
    "samples_per_model": _I64,
    "eps_bayes_multi": _F64,  # Bayes on every (model, sample) pair: assumes them independent
    # version 7 (sequential audits): looks taken, and why the audit stopped
    "looks": _I64,
    "stop_reason": _STR,
    # version 11 (tight audits, issue 29): the threat model and the mechanism's true eps
    "threat_model": _STR,  # "black-box" | "transcript" (raudit.audit.threat_model.THREAT_MODELS)
    "eps_true": _F64,  # eps of the mechanism as implemented (raudit.accountants.true_curve)
    "eps_true_method": _STR,  # pld | pure-dp | rdp-data-dependent | none
    "eps_true_source": _STR,  # where its events came from (e.g. a dry run of the schedule)
    "tightness": _F64,  # audited eps (larger of CP and curve) / eps_true
    "verdict_line": _STR,  # claimed, mechanism and audited eps side by side
    "canaries": _I64,  # one-run audit (raudit.audit.one_run): canaries in the one run
    "eps_one_run": _F64,  # its eps lower bound (pure-DP assumption, confidence 1 - beta)
    "one_run_guesses": _I64,  # r: canaries guessed
    "one_run_correct": _I64,  # v: guesses that were right
    "eps_anytime": _F64,  # anytime-valid sequential audit (raudit.audit.anytime): eps_lo at its stop
    # version 13: the noise kinds the generator's mechanism releases, comma-separated
    # (Capabilities.releases: laplace, gaussian, randomized-response; null: none declared)
    "mechanism_releases": _STR,
    "feature_view": _STR,  # white-box: "black-box" | "white-box" | "union"; ensemble: an attack or "union"
}

# version 4 (the utility command): one row per fit x sample x classifier x setting x metric;
# a skipped or failed fit has one row with setting/classifier/metric null and the reason.
UTILITY: dict[str, pa.DataType] = {
    "trial_id": _STR,  # content hash of one generator fit (all its rows share it)
    "run_id": _STR,  # the utility run's spec hash
    "config_id": _STR,  # the sweep point (impl, options, eps, teachers, preset, ...)
    "schema_version": _I64,
    "impl": _STR,  # "real" for Setting A rows
    "dataset": _STR,
    "epsilon": _F64,
    "delta": _F64,
    "teachers": _I64,  # as passed to the generator; null = its default rule
    "preset": _STR,
    "conditional": pa.bool_(),
    "options_json": _STR,
    "fit_index": _I64,
    "sample_index": _I64,
    "seed": _I64,  # the fit's seed
    "sample_seed": _I64,
    "classifier": _STR,  # registry name, or null for per-sample rows (feature ranking)
    "setting": _STR,  # A | B | C | features
    "metric": _STR,  # auroc | auprc | rank_agreement
    "value": _F64,
    "single_class": pa.bool_(),  # the classifier's training labels had one class
    "nan_scores": _I64,  # non-finite scores replaced (see raudit.classifiers.fit_score)
    "train_rows": _I64,
    "test_rows": _I64,
    "test_positives": _I64,
    "iterations": _I64,
    "eps_hat": _F64,
    "train_wall_s": _F64,  # generator training, per fit (the chunk's share)
    "score_wall_s": _F64,  # this classifier's fit + scoring
    "chunk_models": _I64,
    "device": _STR,
    "status": _STR,  # ok | skipped | failed
    "error": _STR,  # the reason of a skipped or failed fit
    # version 9: the data-free control arm (null: the real run; "coin": every released
    # answer a uniform draw) and the synthetic table's share of label 1 (0 or 1: one class)
    "control": _STR,
    "label_share": _F64,
}

# version 8: one row per audit x estimator, written beside each summary row
ESTIMATES: dict[str, pa.DataType] = {
    "audit_id": _STR,
    "schema_version": _I64,
    "estimator": _STR,  # a name of raudit.audit.estimators.ESTIMATORS
    "eps_lo": _F64,
    "alpha": _F64,  # the level the estimator was run at (its guarantee says how it is used)
    "assumption": _STR,  # what the bound assumes ("none": any (eps, delta)-DP mechanism)
    "created_at": pa.timestamp("us", tz="UTC"),
}

TABLES: dict[str, dict[str, pa.DataType]] = {"shadow": SHADOW, "summary": SUMMARY,
                                             "utility": UTILITY, "estimates": ESTIMATES}

# Values allowed in the enumerated string columns; nulls are always allowed.
ENUMS: dict[str, dict[str, frozenset[str]]] = {
    "shadow": {"world": frozenset({"in", "out"}),
               "split": frozenset({"train", "val", "test"}),
               "status": frozenset({"ok", "failed"})},
    "utility": {"setting": frozenset({"A", "B", "C", "features"}),
                "metric": frozenset({"auroc", "auprc", "rank_agreement"}),
                "status": frozenset({"ok", "skipped", "failed"})},
}


class SchemaError(ConfigError):
    """Rows that do not fit the schema of their table."""


def fields_of(table: str) -> dict[str, pa.DataType]:
    """The columns of ``table`` (UnknownNameError naming the tables otherwise)."""
    if table not in TABLES:
        raise UnknownNameError("result table", table, TABLES)
    return TABLES[table]


def add_column(table: str, name: str, type_: pa.DataType) -> None:
    """Add a column to ``table``; re-adding one with the same type is a no-op.

    Raises :class:`SchemaError` if ``name`` exists with another type: a column is
    never repurposed.
    """
    fields = fields_of(table)
    if name in fields and fields[name] != type_:
        raise SchemaError(f"column {table}.{name} already exists as {fields[name]}; "
                          f"never repurpose a column: add a new one with another name")
    fields[name] = type_


def arrow_schema(table: str) -> pa.Schema:
    """The pyarrow schema of ``table`` (current version), with the version as metadata."""
    fields = fields_of(table)
    return pa.schema([pa.field(k, v) for k, v in fields.items()],
                     metadata={"raudit.schema_version": str(SCHEMA_VERSION),
                               "raudit.table": table})


