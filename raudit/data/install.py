"""Putting a dataset file into the cache: downloaded content, or a copy the user imports.

:func:`store` writes to a temporary file beside the final place, checks the sha256, then
renames, so the cache never holds a partial or unverified file (``.Z`` content is
decompressed, plain content for a ``.gz`` path gzipped). :func:`import_file` is
``raudit datasets import``: a file matched to a dataset's file by hash, else by name.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import tempfile
import zipfile
from contextlib import suppress
from pathlib import Path

from raudit.data import lzw
from raudit.data.cache import (ACCEPTED, CHUNK, accepted, cache_dir, matches, record_accepted,
                               sha256_of)
from raudit.data.sources import DataFile
from raudit.errors import ChecksumError, DataError, UnknownNameError

log = logging.getLogger(__name__)


def store(src: Path, file: DataFile, *, origin: str, downloaded: bool = False) -> Path:
    """Put ``src``'s content at ``file``'s cache path, verified, atomically.

    ``.Z`` content is decompressed; plain content for a ``.gz`` path is gzipped
    (``raw_sha256`` then vouches for it). A mismatch leaves the cache untouched. An
    unpinned file's sha256 is recorded; a re-download must match what was recorded, an
    import (the user's own choice) replaces the record.
    """
    dest = cache_dir() / file.relpath
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp")
    tmp = Path(tmp_name)
    try:
        with open(src, "rb") as fh:
            head = fh.read(2)
        with os.fdopen(fd, "wb") as out:
            if head == lzw.MAGIC:
                out.write(lzw.decompress(src.read_bytes()))
            elif dest.suffix == ".gz" and head != b"\x1f\x8b":
                with open(src, "rb") as fh, gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
                    shutil.copyfileobj(fh, gz, CHUNK)
            else:
                with open(src, "rb") as fh:
                    shutil.copyfileobj(fh, out, CHUNK)
        if file.pinned and not matches(tmp, file):
            raise ChecksumError(
                f"checksum mismatch for {origin}: sha256 {sha256_of(tmp)}, expected "
                f"{file.sha256 or file.raw_sha256} ({file.relpath}); the file is not the "
                "canonical one (corrupt, truncated or a different version)"
            )
        if not file.pinned:
            digest, known = sha256_of(tmp), accepted().get(file.relpath)
            if downloaded and known and digest != known:
                raise ChecksumError(
                    f"checksum mismatch for {origin}: sha256 {digest}, but {known} was accepted "
                    f"before ({cache_dir() / ACCEPTED}); the file changed upstream or in transit")
            log.warning("%s has no pinned checksum; accepted with sha256 %s (recorded in %s)",
                        file.relpath, digest, cache_dir() / ACCEPTED)
            record_accepted(file, digest)
        os.replace(tmp, dest)
    finally:
        with suppress(FileNotFoundError):
            tmp.unlink()
    return dest


def _stem(name: str) -> str:
    """A file name without .gz/.Z, with '-' and '.' treated alike (mirrors differ)."""
    for suffix in (".gz", ".Z"):
        name = name.removesuffix(suffix)
    return name.replace("-", ".")


def import_file(path: str | Path, name: str | None = None) -> Path:
    """Copy a user-supplied file into the cache after checking its checksum.

    With ``name``, the file must be one of that dataset's files: matched by hash,
    else by file name (a pinned file whose hash differs raises ChecksumError; an
    unpinned one is stored as given). Without ``name``, the file's hash must match
    a pinned file of some dataset. Returns the cached path.
    """
    src = Path(path).expanduser()
    if not src.is_file():
        raise DataError(f"no such file: {src}")
    from raudit.data.registry import DATASETS  # the registry loads through this module

    if name is not None and name not in DATASETS:
        raise UnknownNameError("dataset", name, DATASETS.names())
    sources = [DATASETS.get(n).source for n in ([name] if name else DATASETS.names())]
    candidates = [f for s in sources for f in (*s.files, *s.fallback)]
    for f in candidates:
        if f.pinned and matches(src, f):
            return store(src, f, origin=str(src))
    if zipfile.is_zipfile(src):
        raise DataError(f"{src} is a zip archive; extract the dataset's file from it and import that")
    if name is None:
        raise DataError(f"{src} matches no known dataset file by checksum; "
                        "pass --name NAME to say which dataset it belongs to")
    intended = candidates if len(candidates) == 1 else [
        f for f in candidates if _stem(Path(f.relpath).name) == _stem(src.name)]
    if not intended:
        expected = ", ".join(Path(f.relpath).name for f in candidates) or "no files (built in)"
        raise DataError(f"{src.name} is not a file of dataset {name!r}; expected one of: {expected}")
    if intended[0].pinned:
        raise ChecksumError(
            f"checksum mismatch for {src}: sha256 {sha256_of(src)}, expected "
            f"{intended[0].sha256 or intended[0].raw_sha256} ({intended[0].relpath}); "
            "import the original, unmodified file"
        )
    _check_parses(src, name, intended[0])
    return store(src, intended[0], origin=str(src))


def _check_parses(src: Path, name: str, file: DataFile) -> None:
    """No hash vouches for an unpinned file: it must at least parse as the dataset's file,
    by the dataset's own reader (any bytes were accepted, and a later load failed, or
    trained on them). The reader gets ``src`` in the place of each of its files (the
    unpinned ones, credit's and the full isolet's, share their format)."""
    from raudit.data.registry import DATASETS

    entry = DATASETS.get(name)
    count = len(entry.source.files) if file in entry.source.files else 1
    with open(src, "rb") as fh:
        if fh.read(2) == lzw.MAGIC:
            return  # .Z content: decompressed on store; parsed at its first load
    try:
        cleaned = entry.read([src] * count)
    except DataError as exc:
        raise DataError(f"{src} does not parse as dataset {name!r}'s {Path(file.relpath).name}: "
                        f"{exc}") from None
    except Exception as exc:  # noqa: BLE001 - a reader's failure on foreign bytes
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{src} does not parse as dataset {name!r}'s {Path(file.relpath).name} "
                        f"({type(exc).__name__}: {first[:200]})") from None
    if cleaned.frame.empty:
        raise DataError(f"{src} holds no rows of dataset {name!r}")
