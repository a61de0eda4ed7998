"""The data-only threat model: audit synthetic datasets produced outside raudit.

A user who cannot (or may not) run a generator inside raudit trains it elsewhere,
S times on D_in and S times on D_out, and hands over one synthetic file per
shadow model per world (CSV or Parquet, every file the same number of rows)::

    raudit audit --synthetic-in runs/in --synthetic-out runs/out --dataset cervical \\
        --target 407 --attack groundhog --epsilon 1

Files are taken in name order: the i-th file of a folder is shadow model i of that
world, so the split rule (first 40 % train the attack, 20 % pick the threshold,
40 % test) applies as in an in-process audit. What the attacker knows is the same
too (D_out as the reference, the target record): given the files an in-process
audit's models sampled, this audit computes the same features and the same bounds
(tests/audit/test_external.py). The user vouches that the two folders come from
the two worlds, each model trained with its own randomness; raudit cannot check it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from raudit.attacks import extract
from raudit.attacks import resolve as resolve_attack
from raudit.audit import game as g
from raudit.audit.chunk import attack_context, row_base
from raudit.audit.threat_model import EXTERNAL_IMPL
from raudit.errors import ConfigError, DataError
from raudit.privacy import STUDY_DELTA

SUFFIXES = (".csv", ".parquet")


def synthetic_files(folder: Path | str, flag: str) -> list[Path]:
    """The CSV/Parquet files of ``folder`` in name order; ConfigError if there are none."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"{flag} {folder}: not a folder (give a folder with one synthetic "
                          "CSV or Parquet file per shadow model)")
    files = sorted(p for p in folder.iterdir() if p.suffix.lower() in SUFFIXES
                   and not p.name.startswith("."))
    if not files:
        raise ConfigError(f"{flag} {folder} holds no .csv or .parquet file")
    return files


def files_digest(files: list[Path]) -> str:
    """Content hash of the files, in order: a changed file is a different audit."""
    h = hashlib.sha256()
    for p in files:
        h.update(p.name.encode())
        h.update(hashlib.sha256(p.read_bytes()).digest())
    return h.hexdigest()[:16]


def read_synthetic(path: Path, train: pd.DataFrame) -> pd.DataFrame:
    """One synthetic table with the training table's columns and dtypes, or a DataError."""
    try:
        df = pd.read_parquet(path) if path.suffix.lower() == ".parquet" else pd.read_csv(path)
    except Exception as exc:  # pyarrow and pandas raise many types for a bad file
        raise DataError(f"cannot read synthetic file {path}: {exc}") from None
    df.columns = [str(c) for c in df.columns]
    want = [str(c) for c in train.columns]
    if sorted(df.columns) != sorted(want):
        missing = sorted(set(want) - set(df.columns))
        extra = sorted(set(df.columns) - set(want))
        raise DataError(f"synthetic file {path} does not have the dataset's columns "
                        f"(missing {missing[:5]}, unexpected {extra[:5]})")
    df = df[want]
    df.columns = list(train.columns)
    try:
        return df.astype(train.dtypes.to_dict())
    except (TypeError, ValueError) as exc:
        raise DataError(f"synthetic file {path}: a column does not fit the dataset's type "
                        f"({exc})") from None


def read_worlds(synthetic_in, synthetic_out, train: pd.DataFrame
                ) -> tuple[dict[str, list[pd.DataFrame]], str]:
    """Both folders' tables (world -> list) and a digest of their files.

    Refuses, before any featurising, unequal file counts per world, too few models
    for the three splits, and tables of different sizes.
    """
    files = {"in": synthetic_files(synthetic_in, "--synthetic-in"),
             "out": synthetic_files(synthetic_out, "--synthetic-out")}
    if len(files["in"]) != len(files["out"]):
        raise ConfigError(f"--synthetic-in has {len(files['in'])} files and --synthetic-out "
                          f"{len(files['out'])}: give the same number of shadow models per world")
    if len(files["in"]) < 5:  # each world needs a model in each of the three splits
        raise ConfigError(f"--synthetic-in and --synthetic-out hold {len(files['in'])} files "
                          "each: give at least 5 per world (one per shadow model; 40/20/40 % "
                          "train the attack / pick its threshold / test it)")
    g.split_sizes(len(files["in"]))
    tables = {w: [read_synthetic(p, train) for p in fs] for w, fs in files.items()}
    sizes = sorted({len(t) for ts in tables.values() for t in ts})
    if len(sizes) != 1:
        raise DataError(f"synthetic files must all have the same number of rows (a size "
                        f"difference alone gives the world away); found sizes {sizes[:6]}")
    digest = hashlib.sha256((files_digest(files["out"]) + files_digest(files["in"])).encode())
    return tables, digest.hexdigest()[:16]


def shadow_rows(game: g.Game, tables: dict[str, list[pd.DataFrame]], train: pd.DataFrame,
                audit_id: str, holdout: pd.DataFrame | None = None) -> list[dict[str, Any]]:
    """One ``shadow`` row per table, featurised as an in-process audit featurises samples."""
    ctx = attack_context(train, game.spec(), holdout)
    rows: list[dict[str, Any]] = []
    for world in ("out", "in"):
        X = extract(game.features, tables[world], ctx)
        base = {**row_base({"audit_id": audit_id, "game": game.spec(), "world": world,
                            "trials": tables[world]}), "device": "external"}
        for t, x in zip(g.trials(game, world=world), X):
            rows.append({**base, "trial_id": t["trial_id"], "shadow_index": t["shadow_index"],
                         "seed": None, "sample_seed": None, "split": t["split"],
                         "iterations": None, "eps_hat": float("nan"), "wall_s": None,
                         "status": "ok", "error": None,
                         "features_vec": np.asarray(x, dtype=float)})
    return rows


def external_game(req, tables: dict[str, list[pd.DataFrame]], digest: str, ds, dataset: str,
                  target: Any) -> g.Game:
    """The Game of a data-only audit: the request's dataset, target, attack and claim;
    impl "external", the files' digest as its only option."""
    attack, features = resolve_attack(req.attack, req.features)
    return g.Game(impl=EXTERNAL_IMPL, options={"files": digest}, dataset=dataset, target=target,
                  epsilon=float(req.epsilon), delta=STUDY_DELTA if req.delta is None else float(req.delta),
                  attack=attack.name, features=features, shadow_models=len(tables["in"]),
                  seed=int(req.seed), synthetic_rows=len(tables["in"][0]),
                  data_digest=g.data_digest(ds.train), label=req.label,
                  bounds=None if req.bounds is None else str(req.bounds),
                  neighbours=req.neighbours, context=g.default_context(req.seed))


def run_external(req, synthetic_in, synthetic_out, out: Path | str) -> dict[str, Any]:
    """Audit the files (see the module docstring); the summary as run_audit returns it.

    ``req`` is an :class:`raudit.audit.runner.AuditRequest` (its impl, options and
    model counts are ignored: the files are the models). The target must be given:
    choosing one needs a generator to train.
    """
    from raudit import data
    from raudit.audit import analyse as an
    from raudit.audit import targets as tg
    from raudit.audit.summary import append_summary, estimates_of
    from raudit.audit.verdict import ALPHA, verdict
    from raudit.results import ResultStore, spec_hash
    from raudit.results.files import check_writable

    attack, _ = resolve_attack(req.attack, req.features)
    dataset = req.dataset or attack.default_dataset
    ds = data.load(dataset, label=req.label, bounds=req.bounds)
    data.require_binary(ds, "an audit")
    target = tg.resolve(req.target, ds.train, ds.notes, dataset)
    if target == "auto":
        raise ConfigError("a data-only audit needs --target ROWID (or worst-case): choosing a "
                          "target trains models, and here there is no generator to train")
    tables, digest = read_worlds(synthetic_in, synthetic_out, ds.train)
    game = external_game(req, tables, digest, ds, dataset, target)
    out = Path(out)
    check_writable(out)
    store = ResultStore(out)
    spec = {**game.spec(), "threat_model": "data-only"}
    audit_id = spec_hash(spec)
    store.check_manifest(spec)
    with store.lock():
        store.ensure_manifest(spec)
        if not store.done_ids():
            store.append("shadow", shadow_rows(game, tables, ds.train, audit_id, ds.test))
        ids = {t["trial_id"] for w in ("out", "in") for t in g.trials(game, world=w)}
        result = an.analyse(store.read("shadow"), trial_ids=ids, seed=game.seed,
                            delta=game.delta)
        label = "worst-case" if req.target == "worst-case" or (
            req.target is None and "target_row" in ds.notes) else f"row:{game.target}"
        row = an.summary_row(game.spec(), result, audit_id=audit_id, target_label=label,
                             models_per_hour=None)
        row["synthetic_protocol"] = "same"
        row["verdict"] = verdict(row)
        row["first_error"] = None
        values = estimates_of(result)
        append_summary(store, row, values, alpha=result.get("alpha", ALPHA))
    return {**row, "estimates": values, "out": str(out), "models_run": 0, "failed_chunks": 0, "wall_s": 0.0,
            "placement": "external files", "notes": [], "target_row": game.target}
