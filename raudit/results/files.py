"""Files that appear whole or not at all, and a folder one run owns.

The store's parts, the report's pages, a trained model and its events are written by
:func:`write_atomic` (hidden temp file, fsync, rename), so a crash or a full disk leaves
the old content and never half a file; :func:`check_writable` refuses an unwritable
``--out`` before any work starts; :class:`FolderLock` is the ``flock`` on ``root/.lock``
that :meth:`raudit.results.store.ResultStore.lock` takes. Split from ``store.py``: none of
this knows about tables or schemas.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import sys
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Generic, Protocol, TypeVar

from raudit.errors import ConfigError, RunInterrupted

LOCK = ".lock"


NAME_MAX = 255  # bytes in one file name (Linux, macOS): a longer one fails at mkdir


def as_folder(folder: Path | str, flag: str = "--out") -> Path:
    """``folder`` as a Path; ConfigError if it is a file or a name in it is longer than the
    file system takes (the first check of an output folder, before the request is even
    validated: a 300-character name used to fail at the first write, as a traceback)."""
    folder = Path(folder)
    for part in folder.parts:
        if len(os.fsencode(part)) > NAME_MAX:
            raise ConfigError(f"{flag}: the name {part[:40]}... is {len(os.fsencode(part)):,} "
                              f"bytes; a file system takes at most {NAME_MAX}: shorten it")
    if folder.exists() and not folder.is_dir():
        raise ConfigError(f"{flag} {folder} is a file; give a folder")
    return folder


def check_writable(folder: Path | str, flag: str = "--out") -> None:
    """Raise ConfigError unless ``folder`` exists or can be created, and takes new files.

    Called before any work starts, so that no finished training is lost to a
    PermissionError at the end. Folders it had to create are removed again.
    """
    folder = as_folder(folder, flag)
    missing = [p for p in (folder, *folder.parents) if not p.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = folder / f".write-test-{uuid.uuid4().hex}"
        probe.write_bytes(b"")
        probe.unlink()
        for p in missing:  # leave no trace: the run creates the folder when it writes
            p.rmdir()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(f"cannot write to {flag} {folder} ({reason}); choose a folder you "
                          "can write to") from exc


def fsync_dir(path: Path) -> None:
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


_WHAT_TO_DO = {errno.ENOSPC: "free disk space (or move --out to a larger disk)",
               errno.EDQUOT: "free space in your quota (or move --out)",
               errno.EACCES: "make the folder writable", errno.EROFS: "use a writable disk"}


def write_error(path: Path, exc: OSError) -> RunInterrupted:
    """One line for an OSError while writing ``path``: what failed and what to do."""
    todo = _WHAT_TO_DO.get(exc.errno or 0, "fix the cause")
    return RunInterrupted(
        f"cannot write {path}: {exc.strerror or exc} (errno {exc.errno}); {todo}, then rerun "
        "the same command: everything written before is kept and the run resumes")


def write_atomic(path: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Call ``write(file)`` on a hidden temp file next to ``path``, then rename it in.

    An OSError (a full disk, a lost mount) leaves the old content and no temp file, and is
    raised as :class:`~raudit.errors.RunInterrupted` naming the path and what to do."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with open(tmp, "wb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise write_error(path, exc) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(path.parent)


class _Rooted(Protocol):
    @property
    def root(self) -> Path: ...


S = TypeVar("S", bound=_Rooted)


class FolderLock(Generic[S]):
    """``flock`` on ``root/.lock``; the file names the holder for the error message."""

    def __init__(self, store: S):
        self.store = store
        self.fh: IO[str] | None = None

    def __enter__(self) -> S:
        import fcntl

        root = self.store.root
        root.mkdir(parents=True, exist_ok=True)
        fh = open(root / LOCK, "a+", encoding="utf-8")
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.seek(0)
            holder = " ".join(fh.read().split())[:200] or "another process"
            fh.close()
            raise ConfigError(f"output folder {root} is in use by {holder}; wait for it to "
                              "finish or choose another --out") from None
        fh.seek(0)
        fh.truncate()
        cmd = " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))
        fh.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                 f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M:%S} UTC ({cmd[:120]})\n")
        fh.flush()
        self.fh = fh
        return self.store

    def __exit__(self, *exc: object) -> None:
        import fcntl

        if self.fh is not None:
            fh, self.fh = self.fh, None
            with contextlib.suppress(OSError):
                fh.seek(0)
                fh.truncate()
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
            fh.close()
