"""An append-only store of result tables: one folder of Parquet parts per table.

Layout::

    root/raudit.json                      manifest: schema version + audit spec hash
    root/shadow/part-<time>-<uuid>-<sha256>.parquet
    root/summary/part-<time>-<uuid>-<sha256>.parquet

Every ``append`` writes one new part and never touches an existing one, so
threads of one process can append at once. One *run* owns a folder at a time:
:meth:`ResultStore.lock` takes an exclusive ``flock`` on ``root/.lock`` (two audits
into one folder would both train every model), and readers deduplicate by trial
id anyway. A part appears atomically: it is written to a hidden
``.<name>.tmp`` file in the same folder, fsynced, then renamed into place; a crash
leaves at most a hidden temp file, which every reader (this one, and pyarrow's
dataset reader behind ``pandas.read_parquet(root / "shadow")``) ignores. No
writer is kept open between calls.

Parts are verified when listed, once per file version (:mod:`raudit.results.parts`: the
sha256 in the name must match every byte, the footer must parse); a damaged part (a
flipped bit, truncated by a full disk, zeroed by a crash outside our rename) is moved to
``root/quarantine/<table>/`` with a one-line notice, so its trials count as not done and
a resume retrains them. A part's footer names the manifest it was written under; a part
of another manifest (another audit's rows, left when a manifest was deleted) makes the
folder refused, before any work, with one line. Parts that are intact one by one but do
not read together (a column of another type, written by something other than raudit)
are a one-line error naming the folder, never a retry.

The file-level pieces (the atomic write, the writability check, the folder lock) live in
:mod:`raudit.results.files`; this module is the tables, their parts and the manifest.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.dataset as pds
import pyarrow.parquet as pq

from raudit.errors import ConfigError
from raudit.results import parts as part_files
from raudit.results.convert import conform, empty_frame, to_arrow, to_pandas
from raudit.results.files import FolderLock, fsync_dir, write_atomic
from raudit.results.ids import canonical_json, spec_hash
from raudit.results.schema import SCHEMA_VERSION, TABLES, arrow_schema

MANIFEST = "raudit.json"
QUARANTINE = "quarantine"


def _notice(message: str) -> None:
    print(f"warning: {message}", file=sys.stderr)


class ResultStore:
    """Result tables under ``root`` (see the module docstring for the layout)."""

    def __init__(self, root: Path | str, *, notice: Callable[[str], None] = _notice,
                 partition: str | None = None):
        self.root = Path(root)
        # A campaign's job writes into one hive partition of each table
        # (``root/<table>/job=<name>/``), so that ``pd.read_parquet(root / table)`` reads
        # every job with a ``job`` column; its manifest lives in ``root/jobs/job=<name>/``.
        self.partition = partition
        self.notice = notice  # one-line messages (damaged parts); print to stderr by default
        # part -> ((size, mtime_ns) when checked, the manifest hash its footer names)
        self._verified: dict[Path, tuple[tuple[int, int], str | None]] = {}
        self._manifest_hash: str | None = None  # this folder's, once known (see _own_hash)

    def __repr__(self) -> str:
        part = f", partition={self.partition!r}" if self.partition else ""
        return f"ResultStore({str(self.root)!r}{part})"

    def folder(self, table: str) -> Path:
        """Where ``table``'s parts live (its partition's folder for a campaign job)."""
        base = self.root / table
        return base / self.partition if self.partition else base

    # -- writing ------------------------------------------------------------
    def append(self, table: str, rows: Sequence[Mapping[str, Any]] | pd.DataFrame) -> Path:
        """Validate ``rows`` against the schema and write them as one new part.

        Returns the part's path. Raises :class:`raudit.results.schema.SchemaError`
        (before writing anything) for unknown columns or values of the wrong type.
        """
        payload = part_files.encode(to_arrow(table, rows), self._own_hash())
        folder = self.folder(table)
        folder.mkdir(parents=True, exist_ok=True)
        # The time prefix makes parts sort in write order; the checksum comes with the name.
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
        path = folder / part_files.name(stamp, payload)
        write_atomic(path, lambda fh: fh.write(payload))
        return path

    # -- reading ------------------------------------------------------------
    def parts(self, table: str) -> list[Path]:
        """The finished, readable parts of ``table`` in write order (temp files excluded;
        damaged parts are quarantined, see the module docstring)."""
        folder = self.folder(table)
        if not folder.is_dir():
            return []
        found = sorted(p for p in folder.glob(part_files.GLOB) if p.is_file())
        good = [p for p in found if self._verify(table, p)]
        own = self._own_hash()
        for p in good:
            self._refuse_foreign(p, self._verified[p][1], own)
        return good

    def _verify(self, table: str, path: Path) -> bool:
        """True if the part is intact (:func:`raudit.results.parts.check`); otherwise
        quarantine it and return False."""
        try:
            st = path.stat()
        except FileNotFoundError:  # quarantined meanwhile by another reader
            return False
        stamp = (st.st_size, st.st_mtime_ns)
        cached = self._verified.get(path)
        if cached is not None and cached[0] == stamp:
            return True
        try:
            manifest = part_files.check(path)
        except FileNotFoundError:
            return False
        except part_files.DamagedPart as exc:
            self.quarantine(table, path, str(exc))
            return False
        self._verified[path] = (stamp, manifest)
        return True

    def _refuse_foreign(self, path: Path, written_under: str | None, own: str | None) -> None:
        """ConfigError if the part was written under another manifest than ``own``."""
        if written_under is not None and own is not None and written_under != own:
            raise ConfigError(f"output folder {self.root} holds result parts of another audit "
                              f"({path.relative_to(self.root)} was written under another "
                              "manifest); choose another --out or delete the folder")

    def quarantine(self, table: str, path: Path, reason: str) -> Path | None:
        """Move a damaged part to ``root/quarantine/<table>/`` and say so in one line."""
        dest_dir = self.root / QUARANTINE / table
        dest = dest_dir / path.name
        try:
            dest_dir.mkdir(parents=True, exist_ok=True)
            os.replace(path, dest)
        except FileNotFoundError:
            return None
        self._verified.pop(path, None)
        short = " ".join(reason.split())[:160]
        self.notice(f"damaged result part {path.relative_to(self.root)} ({short}) moved to "
                    f"{dest.relative_to(self.root)}; its models will be rerun on resume")
        return dest

    # -- ownership ----------------------------------------------------------
    def lock(self) -> "contextlib.AbstractContextManager[ResultStore]":
        """Hold the folder exclusively for one run (ConfigError naming the holder if taken)."""
        return FolderLock(self)

    def _dataset(self, table: str) -> pds.Dataset | None:
        parts = self.parts(table)
        if not parts:
            return None
        # An explicit schema makes pyarrow fill columns that older parts lack with
        # nulls and drop columns that this version does not know.
        return pds.dataset([str(p) for p in parts], schema=arrow_schema(table),
                           format="parquet")

    def _scan(self, table: str, read: Callable[[pds.Dataset], pa.Table]) -> pa.Table | None:
        """``read`` of the table's dataset (None when it has no parts). A part that does not
        read alone is set aside and the rest read again (finitely often: each retry has
        one part fewer); a failure no single part explains is a one-line ConfigError."""
        while (ds := self._dataset(table)) is not None:
            try:
                return read(ds)
            except (pa.ArrowException, OSError) as exc:
                if not self._scan_pages(table):
                    short = " ".join(str(exc).split())[:200]
                    raise ConfigError(
                        f"the result parts in {self.folder(table)} do not read together "
                        f"({type(exc).__name__}: {short}); one of them was not written by "
                        "this raudit: move it out of the folder, or choose another --out"
                    ) from exc
        return None

    def read_arrow(self, table: str, columns: Sequence[str] | None = None) -> pa.Table:
        """All rows of ``table`` as a pyarrow Table in the current schema."""
        data = self._scan(table, lambda ds: conform(table, ds.to_table()))
        if data is None:
            data = arrow_schema(table).empty_table()
        return data.select(list(columns)) if columns is not None else data

    def _scan_pages(self, table: str) -> int:
        """Quarantine each part whose pages do not read alone; how many there were."""
        moved = 0
        for p in self.parts(table):
            try:
                pq.read_table(p)
            except (pa.ArrowException, OSError) as exc:
                moved += self.quarantine(table, p, f"{type(exc).__name__}: {exc}") is not None
        return moved

    def read(self, table: str) -> pd.DataFrame:
        """All rows of ``table`` (parts in write order); an empty frame if none."""
        if not self.parts(table):
            return empty_frame(table)
        return to_pandas(self.read_arrow(table))

    def done_models(self, table: str = "shadow") -> int:
        """How many models have a row with status ``ok``: distinct training seeds, so a model
        stored as several rows (a selection pool's one per candidate, in either world by
        candidate; several samples of one model) counts once."""
        data = self._scan(table, lambda ds: ds.to_table(columns=["seed"],
                                                        filter=pds.field("status") == "ok"))
        if data is None:
            return 0
        return len(set(data.column("seed").to_pylist()))

    def done_ids(self, table: str = "shadow") -> set[str]:
        """The ``trial_id`` of every row with status ``ok`` (trials a resume skips)."""
        data = self._scan(table, lambda ds: ds.to_table(columns=["trial_id"],
                                                        filter=pds.field("status") == "ok"))
        if data is None:
            return set()
        return {t for t in data.column("trial_id").to_pylist() if t is not None}

    # -- manifest -----------------------------------------------------------
    @property
    def manifest_path(self) -> Path:
        if self.partition:
            return self.root / "jobs" / self.partition / MANIFEST
        return self.root / MANIFEST

    def _own_hash(self) -> str | None:
        """This folder's manifest ``spec_hash`` (None while it has no manifest), read once."""
        if self._manifest_hash is None:
            current = self.manifest()
            if current is not None and isinstance(current.get("spec_hash"), str):
                self._manifest_hash = current["spec_hash"]
        return self._manifest_hash

    def manifest(self) -> dict[str, Any] | None:
        """The manifest's contents, or None if the folder has none yet."""
        try:
            manifest: dict[str, Any] = json.loads(self.manifest_path.read_text(encoding="utf-8"))
            return manifest
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
        wanted = self._wanted(spec)
        current = self.manifest()
        if current is None:
            self._check_parts(wanted["spec_hash"])
            self.manifest_path.parent.mkdir(parents=True, exist_ok=True)
            current = self._create_manifest(wanted)
        self._check(current, wanted)
        return current

    def check_manifest(self, spec: Mapping[str, Any]) -> None:
        """:meth:`ensure_manifest`'s checks without writing anything (a folder without a
        manifest passes): lets a run refuse a folder of another audit before any work."""
        current = self.manifest() if self.manifest_path.parent.is_dir() else None
        wanted = self._wanted(spec)
        if current is not None:
            self._check(current, wanted)
        else:
            self._check_parts(wanted["spec_hash"])

    def _check_parts(self, spec_hash: str) -> None:
        """Refuse a folder without a manifest whose parts name another one (its manifest
        was deleted, e.g. on the advice for an unreadable one). Reads footers only and
        moves nothing: damaged parts are quarantined by the run that holds the folder."""
        for table in TABLES:
            folder = self.folder(table)
            if not folder.is_dir():
                continue
            for p in sorted(folder.glob(part_files.GLOB)):
                try:
                    written_under = part_files.check(p)
                except (OSError, part_files.DamagedPart):
                    continue
                self._refuse_foreign(p, written_under, spec_hash)

    @staticmethod
    def _wanted(spec: Mapping[str, Any]) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "spec_hash": spec_hash(spec),
                "spec": json.loads(canonical_json(spec)),
                "created_at": datetime.now(timezone.utc).isoformat(),
                "written_by": _writer()}

    def _create_manifest(self, wanted: dict[str, Any]) -> dict[str, Any]:
        """Create the manifest unless another writer just did; return the winner's."""
        text = json.dumps(wanted, indent=2, sort_keys=True) + "\n"
        tmp = self.manifest_path.parent / f".{MANIFEST}.{uuid.uuid4().hex}.tmp"
        tmp.write_text(text, encoding="utf-8")
        try:
            os.link(tmp, self.manifest_path)  # fails if it exists: first writer wins
        except FileExistsError:
            pass
        except OSError:  # file systems without hard links: last writer wins
            os.replace(tmp, self.manifest_path)
        finally:
            tmp.unlink(missing_ok=True)
        fsync_dir(self.manifest_path.parent)
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


def _writer() -> dict[str, str]:
    """Who created the folder (the report's provenance block); never compared on resume."""
    import platform

    from raudit import __version__

    return {"raudit": __version__, "host": socket.gethostname(),
            "python": platform.python_version(), "platform": platform.platform(terse=True)}


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
