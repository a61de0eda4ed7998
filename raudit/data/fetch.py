"""Find, download, verify and import dataset files.

A file is looked up, in order, in ``$RAUDIT_DATA_DIR/<relpath>``, then in the
cache ``<cache>/data/<relpath>`` (``<cache>`` is ``$RAUDIT_CACHE_DIR`` or
``platformdirs.user_cache_dir("raudit")``), and otherwise downloaded from its
URLs into the cache: written to a temporary file beside its final place,
checked against its sha256, then renamed, so a cache never holds a partial or
unverified file. Files found locally are verified too; a hash is computed once
per (path, mtime, size) in a process.

A file without a pinned sha256 (credit, the full isolet: no hash could be verified
offline yet) is not downloaded unless the user says so (``RAUDIT_ALLOW_UNPINNED=1`` or
``raudit --allow-unpinned ...``). What is accepted has its sha256 recorded in
``<cache>/data/SHA256SUMS.accepted`` (``sha256sum -c`` format) and every later load of
the cached copy, or a re-download, is checked against it.
"""

from __future__ import annotations

import fnmatch
import gzip
import hashlib
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from collections.abc import Iterable, Sequence
from contextlib import suppress
from http.client import HTTPException
from pathlib import Path
from urllib.request import urlopen

import platformdirs

from raudit.data import lzw
from raudit.data.sources import DataFile
from raudit.errors import ChecksumError, DataError, UnknownNameError

log = logging.getLogger(__name__)
_CHUNK = 1 << 20
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


def _digest(path: Path, *, raw: bool = False) -> str:
    """sha256 of the file's bytes (``raw``: of its gunzipped bytes), memoised by stat."""
    st = path.stat()
    key = (str(path.resolve()), st.st_mtime_ns, st.st_size, raw)
    if key not in _HASHES:
        h = hashlib.sha256()
        with (gzip.open(path, "rb") if raw else open(path, "rb")) as fh:
            while block := fh.read(_CHUNK):
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


def _record(file: DataFile, digest: str) -> None:
    rows = {**accepted(), file.relpath: digest}
    path = cache_dir() / ACCEPTED
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{ACCEPTED}.tmp")
    tmp.write_text("".join(f"{d}  {r}\n" for r, d in sorted(rows.items())))
    os.replace(tmp, path)


def _unpinned_refused(file: DataFile, dataset: str) -> DataError:
    name = f" --name {dataset}" if dataset else ""
    return ChecksumError(
        f"{file.relpath} has no pinned sha256, so raudit cannot verify a download of it; "
        f"set {ALLOW_UNPINNED}=1 (or run `raudit --allow-unpinned ...`) to accept the "
        f"download (its sha256 is then recorded in {cache_dir() / ACCEPTED} and checked on "
        f"every later load), or import a copy you trust with `raudit datasets import PATH{name}`")


def matches(path: Path, file: DataFile) -> bool:
    """Whether the file at ``path`` hashes to ``file``'s pinned sha256 (raw or as stored)."""
    digest = _digest(path)
    if digest in (file.sha256, file.raw_sha256):
        return True
    return bool(file.raw_sha256) and _is_gzip(path) and _digest(path, raw=True) == file.raw_sha256


def verify(path: Path, file: DataFile) -> Path:
    """Return ``path`` if it holds ``file``'s pinned content; ChecksumError otherwise."""
    if file.pinned and not matches(path, file):
        raise ChecksumError(
            f"checksum mismatch for {path}: sha256 {_digest(path)}, expected "
            f"{file.sha256 or file.raw_sha256} ({file.relpath}); delete the file and load "
            "again to re-download it, or import the original with `raudit datasets import`"
        )
    known = None if file.pinned else accepted().get(file.relpath)
    if known and path.resolve() == (cache_dir() / file.relpath).resolve() \
            and _digest(path) != known:
        raise ChecksumError(
            f"{path} changed since it was accepted: sha256 {_digest(path)}, accepted "
            f"{known} ({cache_dir() / ACCEPTED}); delete it and load again, or import it again")
    return path


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
        raise DataError(f"{first.relpath} is not on this machine and has no download URL; "
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
    raise DataError(f"cannot download {first.relpath} ({'; '.join(errors)}); "
                    + _how_to_get(first, dataset))


def _download(url: str, dest: Path) -> None:
    log.info("downloading %s", url)
    with urlopen(url, timeout=60) as response, open(dest, "wb") as out:
        total = int(response.headers.get("Content-Length") or 0) or None
        with _Progress(url, total) as advance:
            while block := response.read(_CHUNK):
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
                shutil.copyfileobj(src, out, _CHUNK)
            return dest
    except zipfile.BadZipFile as exc:
        raise DataError(f"{url} is not a valid zip archive ({exc})") from exc


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
                    shutil.copyfileobj(fh, gz, _CHUNK)
            else:
                with open(src, "rb") as fh:
                    shutil.copyfileobj(fh, out, _CHUNK)
        if file.pinned and not matches(tmp, file):
            raise ChecksumError(
                f"checksum mismatch for {origin}: sha256 {_digest(tmp)}, expected "
                f"{file.sha256 or file.raw_sha256} ({file.relpath}); the file is not the "
                "canonical one (corrupt, truncated or a different version)"
            )
        if not file.pinned:
            digest, known = _digest(tmp), accepted().get(file.relpath)
            if downloaded and known and digest != known:
                raise ChecksumError(
                    f"checksum mismatch for {origin}: sha256 {digest}, but {known} was accepted "
                    f"before ({cache_dir() / ACCEPTED}); the file changed upstream or in transit")
            log.warning("%s has no pinned checksum; accepted with sha256 %s (recorded in %s)",
                        file.relpath, digest, cache_dir() / ACCEPTED)
            _record(file, digest)
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
            f"checksum mismatch for {src}: sha256 {_digest(src)}, expected "
            f"{intended[0].sha256 or intended[0].raw_sha256} ({intended[0].relpath}); "
            "import the original, unmodified file"
        )
    return store(src, intended[0], origin=str(src))


def status(files: Iterable[DataFile]) -> str | None:
    """Where all ``files`` are: "data dir", "cache", or None if any is missing."""
    places = [locate(f) for f in files]
    if not places or any(p is None for p in places):
        return None
    kinds = {p[1] for p in places}
    return kinds.pop() if len(kinds) == 1 else "data dir + cache"
