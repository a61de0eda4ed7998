"""The dataset registry (a :class:`raudit.registry.Registry` of readers), ``load``/``info``,
and ``import_file`` (a user's copy of a registered dataset's file, into the cache).

Every registered dataset is cleaned as the reproduction study did, has an
all-numeric table with its binary 0/1 label last, and is split 80/20 stratified
on the label with ``random_state=seed`` (13 by default), except ``worst-case``
(no held-out data in the game) and ``mnist10``, whose label is the digit 0-9 (the
G-PATE paper's 10-class evaluation; audits and utility refuse it: :func:`require_binary`). Anything that is not a registered name but is
an existing file is loaded as a user table (see :mod:`raudit.data.userfile`).
"""

from __future__ import annotations

import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from raudit.data import builtin, cache, fetch, lzw, readers, shipped, sources, userfile
from raudit.data.cache import matches, sha256_of
from raudit.data.install import store
from raudit.data.dataset import ColumnMeta, Dataset
from raudit.data.sources import DataFile, Source
from raudit.data.tables import DEFAULT_SEED, Cleaned, check_seed, columns_of, make_dataset
from raudit.errors import ChecksumError, ConfigError, DataError, UnknownNameError
from raudit.registry import Registry


@dataclass(frozen=True)
class Entry:
    """One registered dataset: where its files come from and what they must hash to
    (``source``), and how to build its table from them (``read``)."""

    source: Source
    read: Callable[[Sequence[Path]], Cleaned]
    stratified_split: bool = True
    classes: int = 2  # label classes; only ``mnist10`` has more (its digit)


DATASETS: Registry[Entry] = Registry("dataset")
for _name, _entry in (
    ("cervical", Entry(sources.CERVICAL, readers.cervical)),
    ("epileptic", Entry(sources.EPILEPTIC, readers.epileptic)),
    ("isolet", Entry(sources.ISOLET, readers.isolet)),
    ("credit", Entry(sources.CREDIT, readers.credit)),
    ("mnist", Entry(sources.MNIST, readers.mnist)),
    ("mnist10", Entry(sources.MNIST10, readers.mnist10, classes=10)),
    ("breast-cancer", Entry(sources.BREAST_CANCER, lambda _: builtin.breast_cancer())),
    ("digits", Entry(sources.DIGITS, lambda _: builtin.digits())),
    ("worst-case", Entry(sources.WORST_CASE, lambda _: builtin.worst_case(),
                         stratified_split=False)),
):
    DATASETS.register(_name, _entry)
_TABLE_SUFFIXES = (".csv", ".parquet", ".pq", ".gz", ".bz2", ".xz", ".zip")


def names() -> list[str]:
    """Every registered dataset name."""
    return DATASETS.names()


def source(name: str) -> Source:
    """Provenance of a registered dataset; UnknownNameError otherwise."""
    return DATASETS.get(name).source  # UnknownNameError listing the known names


def _resolve(name: str) -> tuple[tuple[Path, ...], str]:
    """Local paths of the files ``name`` will be read from, and a note on which part."""
    src = source(name)
    if not src.files:
        return (), ""
    if cache.status(src.files) is None and src.fallback and cache.status(src.fallback):
        return fetch.fetch(src.fallback, dataset=name), src.fallback_note
    return fetch.fetch(src.files, dataset=name), ""


def _stamp(paths: Sequence[Path]) -> tuple[tuple[str, int, int], ...]:
    # Keys the parse cache: a changed or replaced file is parsed again.
    return tuple((str(p), p.stat().st_mtime_ns, p.stat().st_size) for p in paths)


@lru_cache(maxsize=8)
def _table(name: str, stamp: tuple) -> tuple[Cleaned, tuple[ColumnMeta, ...]]:
    cleaned = DATASETS.get(name).read(tuple(Path(s[0]) for s in stamp))
    return cleaned, columns_of(cleaned)


def _looks_like_path(text: str) -> bool:
    return "/" in text or "\\" in text or text.lower().endswith(_TABLE_SUFFIXES)


def load(
    name_or_path: str | Path,
    *,
    label: str | None = None,
    bounds: str | Path | None = None,
    seed: int = DEFAULT_SEED,
) -> Dataset:
    """A registered dataset by name, or a user's CSV/Parquet file by path.

    ``label`` and ``bounds`` apply to user files only (see
    :func:`raudit.data.userfile.load_file`). Parsing is cached per process (keyed
    by the files' paths, sizes and mtimes); each call returns fresh frames that the
    caller may modify. Missing files are downloaded into the cache when the
    dataset has a URL; otherwise DataError says where to put them.
    """
    check_seed(seed)
    k = shipped.key(name_or_path, label, bounds, seed)
    if (ds := shipped.lookup(k)) is not None:  # a worker: the driver's table, shipped
        return ds
    ds = _load(str(name_or_path), label, bounds, seed)
    shipped.record(k, None if str(name_or_path) in DATASETS else
                   shipped.key(_absolute(name_or_path), label,
                               None if bounds is None else _absolute(bounds), seed))
    return ds


def _absolute(path: str | Path) -> str:
    return str(Path(path).expanduser().resolve())


def _load(text: str, label, bounds, seed: int) -> Dataset:
    if text in DATASETS:
        if label is not None or bounds is not None:
            raise ConfigError(f"label= and bounds= apply to user files, not to the "
                              f"registered dataset {text!r}")
        paths, part = _resolve(text)
        cleaned, columns = _table(text, _stamp(paths))
        src = DATASETS.get(text).source
        notes = {**cleaned.notes, "label_rule": src.label_rule, "files": [str(p) for p in paths]}
        if part:
            notes["fallback"] = part
        return make_dataset(text, Cleaned(cleaned.frame, cleaned.public, notes), columns,
                            seed=seed, stratified_split=DATASETS.get(text).stratified_split,
                            source=src.homepage or src.title)
    path = Path(text).expanduser()
    if path.is_file():
        return userfile.load_file(path, label=label, bounds=bounds, seed=seed)
    if _looks_like_path(text):
        raise DataError(f"no such file: {text} (and it is not a dataset name; known: "
                        f"{', '.join(names())})")
    raise UnknownNameError("dataset", text, names())


def require_binary(ds: Dataset, purpose: str) -> None:
    """ConfigError, before any work, when ``ds``'s label is not binary (``mnist10``)."""
    if ds.classes != 2:
        raise ConfigError(f"{purpose} needs a binary 0/1 label; dataset {ds.name!r} has a "
                          f"{ds.classes}-class label ({ds.label!r}): use the binary one "
                          f"(e.g. mnist: is_zero)")


def info(name: str) -> dict:
    """What is known about a registered dataset without parsing it (JSON-ready).

    ``rows``/``columns``/``positives`` describe the full cleaned table as documented
    (``None`` where unknown); ``status`` says where its files are: "built in",
    "data dir", "cache", "partial (...)" when only a fallback part is here,
    "downloadable", or "import needed".
    """
    src = source(name)
    where = cache.status(src.files) if src.files else "built in"
    if where is None and src.fallback and (part := cache.status(src.fallback)):
        where = f"partial ({part}): {src.fallback_note}"
    available = where is not None
    if where is None:
        where = "downloadable" if all(f.urls for f in src.files) else "import needed"
    files = []
    for f in (*src.files, *src.fallback):
        place = cache.locate(f)
        files.append({"relpath": f.relpath, "sha256": f.sha256, "urls": list(f.urls),
                      "path": str(place[0]) if place else None,
                      "role": "fallback" if f in src.fallback else "main"})
    return {
        "name": name, "title": src.title, "rows": src.rows, "columns": src.columns,
        "positives": src.positives, "label_rule": src.label_rule, "licence": src.licence,
        "classes": DATASETS.get(name).classes,
        "homepage": src.homepage, "urls": list(src.urls), "status": where,
        "available": available, "split": "none" if not DATASETS.get(name).stratified_split
        else "stratified 80/20", "files": files,
    }


def clear_cache() -> None:
    """Forget parsed tables (tests; long sessions that swap data folders)."""
    _table.cache_clear()
    userfile.clear_cache()
    shipped.clear()


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
    entry = DATASETS.get(name)
    count = len(entry.source.files) if file in entry.source.files else 1
    with open(src, "rb") as fh:
        if fh.read(2) == lzw.MAGIC:
            return  # .Z content: decompressed on store; parsed at its first load
    try:
        cleaned = entry.read([src] * count)
    except DataError as exc:
        raise DataError(f"{src} does not parse as dataset {name!r} (its {Path(file.relpath).name}): "
                        f"{exc}") from None
    except Exception as exc:  # a reader's failure on foreign bytes
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise DataError(f"{src} does not parse as dataset {name!r} (its {Path(file.relpath).name}; "
                        f"{type(exc).__name__}: {first[:200]})") from None
    if cleaned.frame.empty:
        raise DataError(f"{src} holds no rows of dataset {name!r}")
