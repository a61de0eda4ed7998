"""Putting a dataset file into the cache: downloaded content, or a copy the user imports.

:func:`store` writes to a temporary file beside the final place, checks the sha256, then
renames, so the cache never holds a partial or unverified file (``.Z`` content is
decompressed, plain content for a ``.gz`` path gzipped). ``raudit datasets import``
(:func:`raudit.data.registry.import_file`) stores through it too, once it has matched the
file to a dataset's file by hash, else by name.
"""

from __future__ import annotations

import gzip
import logging
import os
import shutil
import tempfile
from contextlib import suppress
from pathlib import Path

from raudit.data import lzw
from raudit.data.cache import (ACCEPTED, CHUNK, accepted, cache_dir, matches, record_accepted,
                               sha256_of)
from raudit.data.sources import DataFile
from raudit.errors import ChecksumError

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
