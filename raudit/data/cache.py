"""Where a dataset file is on this machine, and whether to trust it.

A file is looked up, in order, in ``$RAUDIT_DATA_DIR/<relpath>``, then in the cache
``<cache>/data/<relpath>`` (``<cache>`` is ``$RAUDIT_CACHE_DIR`` or
``platformdirs.user_cache_dir("raudit")``). Every file found is verified against its
pinned sha256 (a hash is computed once per (path, mtime, size) in a process); an
unpinned file the user accepted has its sha256 recorded in
``<cache>/data/SHA256SUMS.accepted`` (``sha256sum -c`` format) and is checked against
it on every later load. Split from :mod:`raudit.data.fetch` (which downloads) and
:mod:`raudit.data.install` (which puts files into the cache): this module only reads.
"""

from __future__ import annotations

import gzip
import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

import platformdirs

from raudit.data.sources import DataFile
from raudit.errors import ChecksumError

CHUNK = 1 << 20  # bytes read or copied at a time
ALLOW_UNPINNED = "RAUDIT_ALLOW_UNPINNED"
ACCEPTED = "SHA256SUMS.accepted"
_HASHES: dict[tuple[str, int, int, bool], str] = {}


def data_dir() -> Path | None:
    """The folder named by ``RAUDIT_DATA_DIR``, or None when it is unset."""
    value = os.environ.get("RAUDIT_DATA_DIR")
    return Path(value).expanduser().resolve() if value else None


def cache_dir() -> Path:
    """Where downloaded and imported files live (``<cache>/data``)."""
    root = os.environ.get("RAUDIT_CACHE_DIR") or platformdirs.user_cache_dir("raudit")
    return Path(root).expanduser() / "data"


def locate(file: DataFile) -> tuple[Path, str] | None:
    """Where ``file`` is on this machine, as (path, "data dir" | "cache"), without downloading."""
    root = data_dir()
    if root is not None and (root / file.relpath).is_file():
        return root / file.relpath, "data dir"
    cached = cache_dir() / file.relpath
    return (cached, "cache") if cached.is_file() else None


def sha256_of(path: Path, *, raw: bool = False) -> str:
    """sha256 of the file's bytes (``raw``: of its gunzipped bytes), memoised by stat."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size, raw)
    if key not in _HASHES:
        h = hashlib.sha256()
        with (gzip.open(path, "rb") if raw else open(path, "rb")) as fh:
            while block := fh.read(CHUNK):
                h.update(block)
        _HASHES[key] = h.hexdigest()
    return _HASHES[key]


def _is_gzip(path: Path) -> bool:
    with open(path, "rb") as fh:
        return fh.read(2) == b"\x1f\x8b"


def allow_unpinned() -> bool:
    return os.environ.get(ALLOW_UNPINNED, "").strip().lower() not in ("", "0", "false", "no")


def accepted() -> dict[str, str]:
    """relpath -> sha256 of the unpinned files accepted into this cache."""
    path = cache_dir() / ACCEPTED
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        digest, _, rel = line.partition("  ")
        if rel:
            out[rel.strip()] = digest.strip()
    return out


def record_accepted(file: DataFile, digest: str) -> None:
    rows = {**accepted(), file.relpath: digest}
    path = cache_dir() / ACCEPTED
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{ACCEPTED}.tmp")
    tmp.write_text("".join(f"{d}  {r}\n" for r, d in sorted(rows.items())))
    os.replace(tmp, path)


def matches(path: Path, file: DataFile) -> bool:
    """Whether the file at ``path`` hashes to ``file``'s pinned sha256 (raw or as stored)."""
    digest = sha256_of(path)
    if digest in (file.sha256, file.raw_sha256):
        return True
    return bool(file.raw_sha256) and _is_gzip(path) and sha256_of(path, raw=True) == file.raw_sha256


def verify(path: Path, file: DataFile) -> Path:
    """Return ``path`` if it holds ``file``'s pinned content; ChecksumError otherwise."""
    if file.pinned and not matches(path, file):
        raise ChecksumError(
            f"checksum mismatch for {path}: sha256 {sha256_of(path)}, expected "
            f"{file.sha256 or file.raw_sha256} ({file.relpath}); delete the file and load "
            "again to re-download it, or import the original with `raudit datasets import`"
        )
    known = None if file.pinned else accepted().get(file.relpath)
    if known and path.resolve() == (cache_dir() / file.relpath).resolve() \
            and sha256_of(path) != known:
        raise ChecksumError(
            f"{path} changed since it was accepted: sha256 {sha256_of(path)}, accepted "
            f"{known} ({cache_dir() / ACCEPTED}); delete it and load again, or import it again")
    return path


def status(files: Iterable[DataFile]) -> str | None:
    """Where all ``files`` are: "data dir", "cache", or None if any is missing."""
    places = [locate(f) for f in files]
    if not places or any(p is None for p in places):
        return None
    kinds = {p[1] for p in places}
    return kinds.pop() if len(kinds) == 1 else "data dir + cache"
