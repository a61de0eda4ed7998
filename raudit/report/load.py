"""Read any raudit results folder for a report: one audit, one utility run, one inspect
run, or a campaign of them.

Layouts (see the common contracts):

* single store: ``DIR/raudit.json`` and ``DIR/<table>/part-*.parquet``;
* campaign: ``DIR/raudit.json`` (spec ``"kind": "campaign"``) and
  ``DIR/<table>/job=<name>/part-*.parquet``, so every table gains a ``job`` column;
  inspect jobs live in ``DIR/inspect/job=<name>/`` in the inspect layout;
* inspect: ``DIR/raudit.json`` (spec ``"kind": "inspect"``), ``DIR/inspect.json``,
  ``DIR/violations.csv`` and the evidence PNGs beside them.

Reading never writes: a damaged part (:func:`raudit.results.parts.check`: its checksum or
its footer) is skipped with a notice (a later run of the command that wrote it
quarantines it), not moved; so is a part written under another manifest than the one
beside it (rows of another audit are never shown as this one's).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable
from urllib.parse import unquote

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq

from raudit.errors import ConfigError
from raudit.results import parts as part_files
from raudit.results.convert import conform, to_pandas
from raudit.results.schema import SCHEMA_VERSION, TABLES, arrow_schema
from raudit.results.store import MANIFEST

VIOLATION_COLUMNS = ("impl", "category", "status", "evidence", "plot")


@dataclass
class InspectRun:
    """One inspect folder: its runs (inspect.json) and the long violations table."""

    job: str | None
    folder: Path
    runs: list[dict[str, Any]]
    violations: pd.DataFrame


@dataclass
class Results:
    root: Path
    kind: str  # audit | utility | inspect | campaign
    manifest: dict[str, Any]
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)  # each with a "job" column
    inspects: list[InspectRun] = field(default_factory=list)

    def table(self, name: str) -> pd.DataFrame:
        return self.tables.get(name, pd.DataFrame(columns=["job"]))

    @property
    def spec(self) -> dict[str, Any]:
        return self.manifest.get("spec") or {}

    def empty(self) -> bool:
        return all(df.empty for df in self.tables.values()) and not any(
            i.runs or len(i.violations) for i in self.inspects)


def _manifest(folder: Path, what: str) -> dict[str, Any]:
    path = folder / MANIFEST
    if not path.is_file():
        raise ConfigError(f"{what} {folder} is not a raudit results folder (no {MANIFEST}); "
                          "give the --out folder of raudit audit, utility, inspect or campaign")
    data = _json(path, dict, "a raudit manifest (a JSON object)")
    if "schema_version" in data or kind_of(data) != "inspect":  # inspect writes no tables
        _check_version(data.get("schema_version"), path)
    return data


def _check_version(version: Any, where: Path) -> None:
    if not isinstance(version, int) or isinstance(version, bool) or version > SCHEMA_VERSION:
        raise ConfigError(f"{where} was written with result schema version {version!r}, newer "
                          f"than this raudit's {SCHEMA_VERSION}; upgrade raudit to report it")


def kind_of(manifest: dict[str, Any]) -> str:
    spec = manifest.get("spec") or {}
    if spec.get("kind") in ("campaign", "inspect"):
        return spec["kind"]
    if spec.get("command") == "utility" or spec.get("kind") == "utility":
        return "utility"
    return "audit"


def _read_parts(table: str, parts: list[Path], notice: Callable[[str], None],
                owner: str | None) -> pd.DataFrame:
    """The rows of ``parts`` that are intact and were written under the manifest whose
    ``spec_hash`` is ``owner`` (None: unknown, every intact part)."""
    good = []
    for p in parts:
        try:
            written_under = part_files.check(p)
            meta = pq.read_schema(p).metadata or {}
        except (part_files.DamagedPart, pa.ArrowException, OSError) as exc:
            notice(f"skipping damaged result part {p} ({exc})")
            continue
        if owner is not None and written_under is not None and written_under != owner:
            notice(f"skipping result part {p}: written under another manifest (another audit)")
            continue
        version = meta.get(b"raudit.schema_version")
        if version is not None:
            _check_version(int(version), p)
        good.append(str(p))
    if not good:
        return to_pandas(arrow_schema(table).empty_table())
    data = conform(table, pds.dataset(good, schema=arrow_schema(table), format="parquet")
                   .to_table())
    return to_pandas(data)


def _job(folder: Path) -> str:
    """The job name of a hive partition folder (pyarrow percent-encodes odd characters)."""
    return unquote(folder.name.split("=", 1)[1])


def _parts(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob(part_files.GLOB) if p.is_file())


def _owner(manifest: Path) -> str | None:
    """The ``spec_hash`` of the manifest at ``manifest`` (None if it has none readable)."""
    try:
        found = json.loads(manifest.read_text(encoding="utf-8")).get("spec_hash")
    except (OSError, ValueError, AttributeError):
        return None
    return found if isinstance(found, str) else None


def read_table(root: Path, table: str, notice: Callable[[str], None]) -> pd.DataFrame:
    """``root/<table>`` in either layout, with a ``job`` column (None outside campaigns)."""
    folder = root / table
    frames = []
    if folder.is_dir():
        flat = _parts(folder)
        if flat:
            frames.append(_read_parts(table, flat, notice, _owner(root / MANIFEST))
                          .assign(job=None))
        for sub in sorted(folder.glob("job=*")):
            if sub.is_dir() and _parts(sub):
                owner = _owner(root / "jobs" / sub.name / MANIFEST)
                frames.append(_read_parts(table, _parts(sub), notice, owner)
                              .assign(job=_job(sub)))
    frames = [f for f in frames if len(f)]
    if not frames:
        return to_pandas(arrow_schema(table).empty_table()).assign(job=None)
    return pd.concat(frames, ignore_index=True)


def _json(path: Path, kind: type, what: str):
    """The JSON document at ``path``, which must be a ``kind``; ConfigError otherwise."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc
    if not isinstance(data, kind):
        raise ConfigError(f"{path} is not {what}")
    return data


def read_inspect(folder: Path, job: str | None) -> InspectRun:
    runs: list[dict[str, Any]] = []
    path = folder / "inspect.json"
    if path.is_file():
        runs = _json(path, list, "a list of inspect runs")
    vpath = folder / "violations.csv"
    if vpath.is_file():
        viol = pd.read_csv(vpath, dtype=str, keep_default_na=False)
        missing = [c for c in VIOLATION_COLUMNS if c not in viol.columns]
        if missing:
            raise ConfigError(f"{vpath} lacks the column(s) {', '.join(missing)}")
    else:
        viol = pd.DataFrame(columns=list(VIOLATION_COLUMNS))
    return InspectRun(job=job, folder=folder, runs=runs, violations=viol)


def load(root: Path | str, notice: Callable[[str], None] = lambda m: None) -> Results:
    """Everything a report needs from ``root``; ConfigError (one line) for what is not a
    results folder, a store of a newer schema, or a store with nothing in it yet."""
    root = Path(root)
    if not root.exists():
        raise ConfigError(f"results folder {root} does not exist")
    if not root.is_dir():
        raise ConfigError(f"{root} is a file; give a raudit results folder")
    manifest = _manifest(root, "folder")
    res = Results(root=root, kind=kind_of(manifest), manifest=manifest)
    for table in TABLES:
        res.tables[table] = read_table(root, table, notice)
    if res.kind == "inspect":
        res.inspects.append(read_inspect(root, None))
    for sub in sorted((root / "inspect").glob("job=*")):
        if sub.is_dir():
            if (sub / MANIFEST).is_file():
                _manifest(sub, "inspect job")
            res.inspects.append(read_inspect(sub, _job(sub)))
    if res.empty():
        raise ConfigError(f"results folder {root} holds no results yet (a {res.kind} whose "
                          "run has not finished a model); run or resume it first")
    return res
