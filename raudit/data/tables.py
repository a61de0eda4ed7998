"""From a cleaned table to a :class:`Dataset`: column metadata and the 80/20 split."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import pandas as pd

from raudit.data.dataset import ColumnKind, ColumnMeta, Dataset, infer_columns
from raudit.errors import ConfigError, DataError

TEST_SIZE = 0.2
DEFAULT_SEED = 13  # the study's random_state

# (kind, lower, upper) of a column whose range is known without reading the records.
PublicSpec = tuple[ColumnKind, float, float]


@dataclass(frozen=True)
class Cleaned:
    """A whole cleaned table, its label last (binary 0/1 unless ``public`` says otherwise:
    ``mnist10``'s digit is an integer 0-9), before splitting.

    ``public`` gives the columns whose kind and bounds come from a schema or
    codebook; every other column's metadata is read off the records (``"data"``).
    The label is always public: 0/1 by construction, or the classes ``public`` names.
    """

    frame: pd.DataFrame
    public: dict[str, PublicSpec] = field(default_factory=dict)
    notes: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return str(self.frame.columns[-1])


def columns_of(cleaned: Cleaned) -> tuple[ColumnMeta, ...]:
    """Metadata of every column, public where ``cleaned.public`` says so.

    Data bounds are read off the whole cleaned table (train and test), so that
    held-out rows fall inside them; they leak the records all the same.
    """
    frame = cleaned.frame
    public = {**cleaned.public, cleaned.label: cleaned.public.get(cleaned.label, ("binary", 0.0, 1.0))}
    inferred = {c.name: c for c in infer_columns(frame[[c for c in frame.columns if c not in public]])}
    out = []
    for name in frame.columns:
        if name in public:
            kind, lo, hi = public[name]
            cats = (0.0, 1.0) if kind == "binary" else ()
            out.append(ColumnMeta(str(name), kind, float(lo), float(hi), "public", cats))
        else:
            out.append(inferred[str(name)])
    return tuple(out)


def check_seed(seed: int) -> int:
    """``seed`` if it is a usable ``random_state``; ConfigError otherwise."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**32:
        raise ConfigError(f"seed must be an integer in [0, 2**32), got {seed!r}")
    return seed


def split(frame: pd.DataFrame, seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The study's split: 80/20, stratified on the label (last column), ``random_state=seed``.

    Rows keep their index in the cleaned table, so a row can be traced back.
    """
    from sklearn.model_selection import train_test_split  # keeps `import raudit.data` light

    try:
        train, test = train_test_split(
            frame, test_size=TEST_SIZE, stratify=frame.iloc[:, -1], random_state=seed
        )
    except ValueError as exc:
        counts = frame.iloc[:, -1].value_counts().to_dict()
        raise DataError(
            f"cannot split {len(frame)} rows 80/20 stratified on the label (class counts "
            f"{counts}): each class needs at least 2 rows and the test part 2 rows ({exc})"
        ) from exc
    return train.copy(), test.copy()


def make_dataset(
    name: str,
    cleaned: Cleaned,
    columns: tuple[ColumnMeta, ...],
    *,
    seed: int,
    stratified_split: bool = True,
    source: str = "",
) -> Dataset:
    """Split ``cleaned`` (or, without a split, use it as both train and test)."""
    if stratified_split:
        train, test = split(cleaned.frame, seed)
        how = f"stratified {1 - TEST_SIZE:.0%}/{TEST_SIZE:.0%}, random_state={seed}"
    else:
        train, test = cleaned.frame.copy(), cleaned.frame.copy()
        how = "none: test is a copy of train"
    notes = {**copy.deepcopy(cleaned.notes), "split": how}  # the caller may edit its copy
    return Dataset(name, train, test, columns, source, notes)
