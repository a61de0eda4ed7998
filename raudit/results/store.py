"""An append-only store of result tables: one folder of Parquet parts per table.

Layout::

    root/raudit.json                      manifest: schema version + audit spec hash
    root/shadow/part-<time>-<uuid>.parquet
    root/summary/part-<time>-<uuid>.parquet

Every ``append`` writes one new part and never touches an existing one, so any
number of writers (threads, processes, Ray workers on a shared disk) can append
at once without locks. A part appears atomically: it is written to a hidden
``.<name>.tmp`` file in the same folder, fsynced, then renamed into place; a crash
leaves at most a hidden temp file, which every reader (this one, and pyarrow's
dataset reader behind ``pandas.read_parquet(root / "shadow")``) ignores. No
writer is kept open between calls.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq

from raudit.errors import ConfigError
from raudit.results.ids import canonical_json, spec_hash
from raudit.results.schema import (SCHEMA_VERSION, arrow_schema, conform, empty_frame, to_arrow,
                                   to_pandas)

MANIFEST = "raudit.json"


def _fsync_dir(path: Path) -> None:
    """Persist a rename (POSIX); a no-op where directories cannot be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_atomic(path: Path, write) -> None:
    """Call ``write(file)`` on a hidden temp file next to ``path``, then rename it in."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(path.parent)


class ResultStore:
    """Result tables under ``root`` (see the module docstring for the layout)."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"ResultStore({str(self.root)!r})"

    # -- writing ------------------------------------------------------------
    def append(self, table: str, rows: Sequence[Mapping[str, Any]] | pd.DataFrame) -> Path:
        """Validate ``rows`` against the schema and write them as one new part.

        Returns the part's path. Raises :class:`raudit.results.schema.SchemaError`
        (before writing anything) for unknown columns or values of the wrong type.
        """
        data = to_arrow(table, rows)
        folder = self.root / table
        folder.mkdir(parents=True, exist_ok=True)
        # The time prefix makes parts sort in write order; the uuid makes names unique
        # across threads and machines.
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        path = folder / f"part-{stamp}-{uuid.uuid4().hex}.parquet"
        write_atomic(path, lambda fh: pq.write_table(data, fh))
        return path

    # -- reading ------------------------------------------------------------
    def parts(self, table: str) -> list[Path]:
        """The finished parts of ``table`` in write order (temp files excluded)."""
        folder = self.root / table
        if not folder.is_dir():
            return []
        return sorted(p for p in folder.glob("part-*.parquet") if p.is_file())

    def _dataset(self, table: str) -> pds.Dataset | None:
        parts = self.parts(table)
        if not parts:
            return None
        # An explicit schema makes pyarrow fill columns that older parts lack with
        # nulls and drop columns that this version does not know.
        return pds.dataset([str(p) for p in parts], schema=arrow_schema(table),
                           format="parquet")

    def read_arrow(self, table: str, columns: Sequence[str] | None = None) -> pa.Table:
        """All rows of ``table`` as a pyarrow Table in the current schema."""
        ds = self._dataset(table)
        if ds is None:
            data = arrow_schema(table).empty_table()
        else:
            data = conform(table, ds.to_table())
        return data.select(list(columns)) if columns is not None else data

    def read(self, table: str) -> pd.DataFrame:
        """All rows of ``table`` (parts in write order); an empty frame if none."""
        if not self.parts(table):
            return empty_frame(table)
        return to_pandas(self.read_arrow(table))

    def done_ids(self, table: str = "shadow") -> set[str]:
        """The ``trial_id`` of every row with status ``ok`` (trials a resume skips)."""
        ds = self._dataset(table)
        if ds is None:
            return set()
        data = ds.to_table(columns=["trial_id"], filter=pds.field("status") == "ok")
        return {t for t in data.column("trial_id").to_pylist() if t is not None}

    # -- manifest -----------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    def manifest(self) -> dict[str, Any] | None:
        """The manifest's contents, or None if the folder has none yet."""
        try:
            return json.loads(self.manifest_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read the manifest {self.manifest_path}: {exc}; "
                              "delete it or choose another --out") from exc

    def ensure_manifest(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """Record ``spec`` as this folder's audit, or check that it already is.

        Raises :class:`ConfigError` if the folder holds a different audit (so a
        resume never mixes results of two specs) or was written by a newer schema.
        Returns the manifest.
        """
        wanted = {"schema_version": SCHEMA_VERSION, "spec_hash": spec_hash(spec),
                  "spec": json.loads(canonical_json(spec)),
                  "created_at": datetime.now(timezone.utc).isoformat()}
        current = self.manifest()
        if current is None:
            self.root.mkdir(parents=True, exist_ok=True)
            current = self._create_manifest(wanted)
        self._check(current, wanted)
        return current

    def _create_manifest(self, wanted: dict[str, Any]) -> dict[str, Any]:
        """Create the manifest unless another writer just did; return the winner's."""
        text = json.dumps(wanted, indent=2, sort_keys=True) + "\n"
        tmp = self.root / f".{MANIFEST}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(text, encoding="utf-8")
        try:
            os.link(tmp, self.manifest_path)  # fails if it exists: first writer wins
        except FileExistsError:
            pass
        except OSError:  # file systems without hard links: last writer wins
            os.replace(tmp, self.manifest_path)
        finally:
            tmp.unlink(missing_ok=True)
        _fsync_dir(self.root)
        return self.manifest() or wanted

    def _check(self, current: dict[str, Any], wanted: dict[str, Any]) -> None:
        version = current.get("schema_version")
        if not isinstance(version, int) or version > SCHEMA_VERSION:
            raise ConfigError(f"output folder {self.root} was written with result schema "
                              f"version {version!r}, newer than this raudit's "
                              f"{SCHEMA_VERSION}; upgrade raudit or choose another --out")
        if current.get("spec_hash") != wanted["spec_hash"]:
            raise ConfigError(f"output folder {self.root} holds a different audit "
                              f"({_differences(current.get('spec'), wanted['spec'])}); "
                              "choose another --out or delete it")


def _differences(old: Any, new: Any) -> str:
    """A short description of how two specs differ, for the mismatch message."""
    if not isinstance(old, dict) or not isinstance(new, dict):
        return "spec hashes differ"
    keys = sorted(k for k in set(old) | set(new) if old.get(k, ...) != new.get(k, ...))
    if not keys:
        return "spec hashes differ"
    shown = [f"{k}: {old.get(k, '<absent>')!r} there, {new.get(k, '<absent>')!r} now"
             for k in keys[:3]]
    more = f" and {len(keys) - 3} more" if len(keys) > 3 else ""
    return "; ".join(shown) + more
