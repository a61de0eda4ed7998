"""Carry a campaign between machines: its rows so far in one self-checking file.

::

    export_campaign("configs/study-audit.yaml", "runs/study", "study.raudit.zip")  # machine A
    import_campaign("configs/study-audit.yaml", "runs/study", "study.raudit.zip")  # machine B
    run_campaign("configs/study-audit.yaml", "runs/study", ...)                    # resumes

The file is a zip (stored, not compressed: Parquet is already) of the campaign's manifests
and every finished Parquet part of its jobs (the ``shadow``, ``summary``, ``estimates`` and
``utility`` tables, and the target-selection pools), plus ``export.json``: the campaign's
name, each job's spec hash, and every file's size and sha256. Parts are data, never pickle.
A resume skips what the parts hold (trial ids are content hashes), so the imported folder
continues where the export was taken, on any machine.

Importing checks everything before the folder appears: the zip and its CRCs, the format,
that the file list is exactly the manifest's with the same sizes and sha256s, that no path
leaves the folder, that the campaign is the config's and that every job was run with the
config's settings (the store's own manifest check). The files are unpacked into a hidden
folder beside ``--out`` and renamed into place only once all checks pass, so a refused or
interrupted import leaves no folder that a run could read. Only a fresh ``--out`` (absent or
empty) is accepted: the import is the start of that folder's life.

Exporting reads the parts the store lists (finished and readable: a run writes each part
atomically), so it is safe while a campaign still runs in that folder; it holds what was
finished when it was taken.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import uuid
import zipfile
from dataclasses import asdict, dataclass
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath
from collections.abc import Callable, Sequence
from typing import IO, Any

from raudit.campaign.run import load_jobs, pool_jobs
from raudit.runs.jobs import Job
from raudit.errors import ConfigError
from raudit.results import TABLES, ResultStore, spec_hash
from raudit.results.files import check_writable, fsync_dir, write_atomic
from raudit.results.schema import SCHEMA_VERSION
from raudit.results.store import MANIFEST

FORMAT = "raudit-campaign-export"
VERSION = 1
INDEX = "export.json"
#: the stores of a campaign folder, relative to it: the jobs' own, and their target pools
STORES = (".", "target-selection")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _files(out: Path, jobs: Sequence[Job]) -> list[Path]:
    """The campaign's manifests and finished parts, as paths relative to ``out``."""
    found = [Path(MANIFEST)]
    for job in jobs:
        for sub in STORES:
            store = ResultStore(out / sub, partition=job.partition)
            if not store.manifest_path.is_file():
                continue
            found.append(store.manifest_path.relative_to(out))
            for table in TABLES:
                found.extend(p.relative_to(out) for p in store.parts(table))
    return found


@dataclass(frozen=True)
class Entry:
    """One file of an export, as its index lists it."""

    path: str  # relative to the campaign folder, POSIX separators
    bytes: int
    sha256: str


def export_campaign(config: Path | str, out: Path | str, dest: Path | str) -> dict[str, Any]:
    """Write ``dest``: the rows so far of the campaign ``config`` in ``out`` (see the module
    docstring). Returns {"file", "jobs", "files", "bytes"}; ConfigError (one line) when
    ``out`` is not this campaign's folder or holds a job of other settings."""
    out, dest = Path(out), Path(dest)
    header, jobs = load_jobs(config)
    pool = pool_jobs(jobs)
    root = ResultStore(out)
    if (root.manifest() if out.is_dir() else None) is None:
        raise ConfigError(f"--out {out} holds no campaign yet (no {MANIFEST}); nothing to export")
    root.check_manifest({"kind": "campaign", "name": header["name"]})
    exported = {}
    for job in pool:  # the checks of a resume: an export always imports with this file
        store = ResultStore(out, partition=job.partition)
        try:
            store.check_manifest(job.manifest)
        except ConfigError as exc:
            raise ConfigError(f"job {job.name}: {exc} (or rename the job)") from None
        if store.manifest_path.is_file():
            exported[job.name] = spec_hash(job.manifest)
    files = _files(out, pool)
    check_writable(dest.parent, "--export")
    dest.parent.mkdir(parents=True, exist_ok=True)

    def write(fh: IO[bytes]) -> None:  # one file in memory at a time; the index last, once all are hashed
        entries = []
        with zipfile.ZipFile(fh, "w", compression=zipfile.ZIP_STORED) as zf:
            for rel in files:
                data = (out / rel).read_bytes()
                entries.append(Entry(rel.as_posix(), len(data), _sha256(data)))
                zf.writestr(rel.as_posix(), data)
            index = {"format": FORMAT, "version": VERSION, "campaign": header["name"],
                     "schema_version": SCHEMA_VERSION, "jobs": exported,
                     "files": [asdict(e) for e in entries],
                     "created_at": datetime.now(timezone.utc).isoformat()}
            zf.writestr(INDEX, json.dumps(index, indent=1, sort_keys=True))

    write_atomic(dest, write)
    return {"file": str(dest), "jobs": sorted(exported), "files": len(files),
            "bytes": dest.stat().st_size}


def _refuse(src: Path, why: str) -> ConfigError:
    return ConfigError(f"--import {src}: {why}; export it again from the source folder "
                       "(raudit campaign CONFIG --out DIR --export FILE)")


def _read(src: Path) -> tuple[dict[str, Any], dict[str, bytes]]:
    """The export's index and files, every check of the file itself passed."""
    try:
        with zipfile.ZipFile(src) as zf:
            names = zf.namelist()
            blobs = {n: zf.read(n) for n in names}  # each read checks its CRC
    except FileNotFoundError:
        raise ConfigError(f"--import {src}: no such file") from None
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError) as exc:
        raise _refuse(src, f"not a readable export ({type(exc).__name__}: "
                           f"{' '.join(str(exc).split())[:120]})") from None
    if len(set(names)) != len(names):
        raise _refuse(src, "a file is stored twice")
    try:
        index = json.loads(blobs.pop(INDEX))
    except KeyError:
        raise _refuse(src, f"no {INDEX} inside (not a raudit campaign export)") from None
    except ValueError as exc:
        raise _refuse(src, f"{INDEX} is not JSON ({exc})") from None
    if not isinstance(index, dict) or index.get("format") != FORMAT:
        raise _refuse(src, "not a raudit campaign export")
    if index.get("version") != VERSION:
        raise ConfigError(f"--import {src}: export format version {index.get('version')!r}; "
                          f"this raudit reads version {VERSION}: use the raudit that wrote it")
    version = index.get("schema_version")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        raise ConfigError(f"--import {src}: written with result schema version {version!r}, "
                          f"newer than this raudit's {SCHEMA_VERSION}; upgrade raudit")
    listed = {str(e.get("path")): e for e in index.get("files") or [] if isinstance(e, dict)}
    if set(listed) != set(blobs):
        extra, lost = sorted(set(blobs) - set(listed)), sorted(set(listed) - set(blobs))
        raise _refuse(src, f"its files differ from its list (missing {lost[:2]}, "
                           f"unlisted {extra[:2]})")
    for name, data in blobs.items():
        p = PurePosixPath(name)
        if p.is_absolute() or ".." in p.parts or not p.parts:
            raise _refuse(src, f"the path {name!r} leaves the folder")
        e = listed[name]
        if e.get("bytes") != len(data) or e.get("sha256") != _sha256(data):
            raise _refuse(src, f"{name} does not match its sha256 (damaged in transit)")
    return index, blobs


def import_campaign(config: Path | str, out: Path | str, src: Path | str) -> dict[str, Any]:
    """Create ``out`` from the export ``src`` of the campaign ``config`` (see the module
    docstring); a run into ``out`` then continues it. Returns {"jobs", "files"}. Raises
    ConfigError (one line) for a damaged or mismatched file, or an ``out`` in use."""
    out, src = Path(out), Path(src)
    header, jobs = load_jobs(config)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} is not empty; --import starts a fresh folder "
                          "(choose a new --out)")
    index, blobs = _read(src)
    if index.get("campaign") != header["name"]:
        raise ConfigError(f"--import {src} holds campaign {index.get('campaign')!r}, not "
                          f"{header['name']!r} of {config}; give the campaign file it was "
                          "exported with")
    check_writable(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.parent / f".{out.name}.import-{uuid.uuid4().hex[:8]}"
    try:
        for name, data in blobs.items():
            path = tmp / name
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, _writer(data))
        for job in pool_jobs(jobs):
            there = ResultStore(tmp, partition=job.partition).manifest()
            if there is not None and there.get("spec_hash") != spec_hash(job.manifest):
                raise ConfigError(f"--import {src}: job {job.name} was run with other settings "
                                  f"than {config} gives it; give the campaign file it was "
                                  "exported with (or rename the job)")
        with contextlib.suppress(FileNotFoundError):
            out.rmdir()  # absent or empty (checked above)
        os.rename(tmp, out)
        fsync_dir(out.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return {"jobs": sorted(index.get("jobs") or {}), "files": len(blobs)}


__all__ = ["export_campaign", "import_campaign"]


def _writer(data: bytes) -> Callable[[Any], Any]:
    """The body write_atomic runs on its temporary file: ``data`` as it is."""
    return lambda fh: fh.write(data)


def check_request(export: Path | str | None, import_: Path | str | None, dry_run: bool) -> None:
    """One-line ConfigError for a request the CLI and the API both refuse: ``--export`` writes
    its file and stops, so it takes neither ``--import`` nor ``--dry-run``."""
    if export is not None and (import_ is not None or dry_run):
        raise ConfigError("--export stops after writing the file: give it without "
                          f"{'--import' if import_ is not None else '--dry-run'}")
