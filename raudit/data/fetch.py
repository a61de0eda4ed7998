"""Dataset files on this machine, downloading the missing ones.

:func:`fetch` returns local, verified paths (:mod:`raudit.data.cache` says where a file
is and checks it); a file on neither the data dir nor the cache is downloaded from its
URLs (mirrors in order, a zip's member extracted) and stored by
:func:`raudit.data.install.store`, which verifies before it renames into the cache.

A file without a pinned sha256 (credit, the full isolet: no hash could be verified
offline yet) is not downloaded unless the user says so (``RAUDIT_ALLOW_UNPINNED=1`` or
``raudit --allow-unpinned ...``); what is accepted is recorded and checked on every
later load (:mod:`raudit.data.cache`).
"""

from __future__ import annotations

import fnmatch
import logging
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from http.client import HTTPException
from pathlib import Path
from urllib.request import urlopen

from raudit.data.cache import (ACCEPTED, ALLOW_UNPINNED, CHUNK, accepted, allow_unpinned,
                               cache_dir, locate, verify)
from raudit.data.install import store
from raudit.data.sources import DataFile
from raudit.errors import ChecksumError, DataError, DataUnavailable

log = logging.getLogger(__name__)


def _unpinned_refused(file: DataFile, dataset: str) -> DataError:
    name = f" --name {dataset}" if dataset else ""
    return DataUnavailable(
        f"{file.relpath} has no pinned sha256, so raudit cannot verify a download of it; "
        f"set {ALLOW_UNPINNED}=1 (or run `raudit --allow-unpinned ...`) to accept the "
        f"download (its sha256 is then recorded in {cache_dir() / ACCEPTED} and checked on "
        f"every later load), or import a copy you trust with `raudit datasets import PATH{name}`")


def fetch(files: Sequence[DataFile], *, dataset: str = "") -> tuple[Path, ...]:
    """Local, verified paths of ``files``, downloading the missing ones into the cache."""
    found = {f: locate(f) for f in files}
    missing = [f for f in files if found[f] is None]
    by_url: dict[tuple[str, ...], list[DataFile]] = {}
    for f in missing:
        by_url.setdefault(f.urls, []).append(f)
    for urls, group in by_url.items():
        _download_group(urls, group, dataset)
    paths = []
    for f in files:
        place = found[f] or locate(f)
        if place is None:  # only if something removed it while we were downloading
            raise DataError(f"{f.relpath} vanished from the cache while loading it")
        paths.append(verify(place[0], f))
    return tuple(paths)


def _how_to_get(file: DataFile, dataset: str) -> str:
    name = f" --name {dataset}" if dataset else ""
    return (
        f"put it at $RAUDIT_DATA_DIR/{file.relpath} (set RAUDIT_DATA_DIR to the folder "
        f"holding it), or run `raudit datasets import PATH{name}`"
    )


def _download_group(urls: tuple[str, ...], group: list[DataFile], dataset: str) -> None:
    """Download one URL (first that works) and store every file of ``group`` from it."""
    first = group[0]
    if not urls:
        raise DataUnavailable(f"{first.relpath} is not on this machine and has no download URL; "
                        + _how_to_get(first, dataset))
    for f in group:  # decided before a byte is downloaded
        if not f.pinned and f.relpath not in accepted() and not allow_unpinned():
            raise _unpinned_refused(f, dataset)
    target = cache_dir() / first.relpath
    target.parent.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    mismatch: ChecksumError | None = None
    for url in urls:  # mirrors in order; a bad copy on one mirror does not stop the next
        with tempfile.TemporaryDirectory(dir=target.parent, prefix=".download-") as tmp:
            payload = Path(tmp) / "payload"
            try:
                _download(url, payload)
            except (OSError, HTTPException, ValueError) as exc:  # URLError is an OSError
                errors.append(f"{url}: {getattr(exc, 'reason', None) or exc}")
                continue
            try:
                for f in group:
                    if f.member:
                        member = _extract(payload, f.member, Path(tmp), url)
                        store(member, f, origin=f"{url} ({member.name})", downloaded=True)
                    else:
                        store(payload, f, origin=url, downloaded=True)
            except ChecksumError as exc:
                mismatch = exc
                continue
            return
    if mismatch is not None:
        raise mismatch
    raise DataUnavailable(f"cannot download {first.relpath} ({'; '.join(errors)}); "
                    + _how_to_get(first, dataset))


def _download(url: str, dest: Path) -> None:
    log.info("downloading %s", url)
    with urlopen(url, timeout=60) as response, open(dest, "wb") as out:
        total = int(response.headers.get("Content-Length") or 0) or None
        with _Progress(url, total) as advance:
            while block := response.read(CHUNK):
                out.write(block)
                advance(len(block))


class _Progress:
    """A rich progress bar on an interactive stderr; nothing otherwise."""

    def __init__(self, url: str, total: int | None):
        self.bar = None
        if sys.stderr.isatty():
            from rich.progress import Progress  # only imported when shown

            self.bar = Progress(transient=True)
            self.task = self.bar.add_task(url.rsplit("/", 1)[-1], total=total)

    def __enter__(self):
        if self.bar is None:
            return lambda n: None
        self.bar.start()
        return lambda n: self.bar.advance(self.task, n)

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.stop()


def _extract(archive: Path, pattern: str, workdir: Path, url: str) -> Path:
    """The one zip member whose basename matches ``pattern``, written into ``workdir``."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            hits = [n for n in names if fnmatch.fnmatch(n.rsplit("/", 1)[-1], pattern)]
            if len(hits) != 1:
                raise DataError(f"{url} has {len(hits)} members matching {pattern!r} "
                                f"(members: {', '.join(names)}); expected exactly one")
            dest = workdir / hits[0].rsplit("/", 1)[-1]
            with zf.open(hits[0]) as src, open(dest, "wb") as out:
                shutil.copyfileobj(src, out, CHUNK)
            return dest
    except zipfile.BadZipFile as exc:
        raise DataError(f"{url} is not a valid zip archive ({exc})") from exc


