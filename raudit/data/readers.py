"""Parse and clean each dataset's files the way the reproduction study did.

Each reader takes the local paths of its dataset's files (in the order of its
``Source.files``) and returns a :class:`Cleaned` table, binary label last.
"""

from __future__ import annotations

import gzip
import struct
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from raudit.data.tables import Cleaned
from raudit.errors import DataError

CERVICAL_DROPPED = (
    "STDs:cervical condylomatosis", "STDs:pelvic inflammatory disease", "STDs:genital herpes",
    "STDs:molluscum contagiosum", "STDs:AIDS", "STDs:Hepatitis B", "STDs:HPV",
)
CERVICAL_FLOAT = (
    "Smokes (years)", "Smokes (packs/year)", "Hormonal Contraceptives (years)", "IUD (years)",
)
ISOLET_VOWELS = (1, 5, 9, 15, 21)  # a, e, i, o, u
CREDIT_COLUMNS = ("Time", *(f"V{i}" for i in range(1, 29)), "Amount", "Class")


def _csv(path: Path, **kwargs) -> pd.DataFrame:
    try:
        return pd.read_csv(path, **kwargs)
    except (ValueError, OSError, EOFError, pd.errors.ParserError) as exc:
        raise DataError(f"cannot parse {path}: {exc}") from exc


def _require(frame: pd.DataFrame, columns: Sequence[str], path: Path) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise DataError(f"{path} lacks the columns {missing}; is it the right file?")


def cervical(paths: Sequence[Path]) -> Cleaned:
    """UCI cervical cancer: '?' -> NaN, drop 7 sparse STD columns, mode-fill, ints, Biopsy last."""
    (path,) = paths
    df = _csv(path, na_values="?")
    _require(df, (*CERVICAL_DROPPED, *CERVICAL_FLOAT, "Biopsy"), path)
    # The two 'STDs: Time since ... diagnosis' columns are kept, as the study did.
    df = df.drop(columns=list(CERVICAL_DROPPED))
    df = df.fillna(df.mode().iloc[0])  # mode over all rows; ties take the smallest value
    ints = [c for c in df.columns if c not in CERVICAL_FLOAT]
    df[ints] = df[ints].astype("int64")
    df = df[[c for c in df.columns if c != "Biopsy"] + ["Biopsy"]]
    return Cleaned(df, notes={"dropped": list(CERVICAL_DROPPED), "fill": "column mode"})


def epileptic(paths: Sequence[Path]) -> Cleaned:
    """UCI epileptic seizure: drop the row-id column (by position), seizure = (y == 1)."""
    (path,) = paths
    df = _csv(path)
    if df.shape[1] != 180 or df.columns[-1] != "y":
        raise DataError(f"{path} has {df.shape[1]} columns ending in {df.columns[-1]!r}; "
                        "expected 180 (row id, X1..X178, y)")
    seizure = (df["y"] == 1).astype("int64").rename("seizure")
    return Cleaned(pd.concat([df.iloc[:, 1:-1], seizure], axis=1))


def _isolet_raw(path: Path) -> pd.DataFrame:
    # The UCI .data files: no header, 617 features then the class, e.g. "..., 0.5, 1."
    df = _csv(path, header=None, skipinitialspace=True)
    df = df.dropna(axis=1, how="all")  # a trailing comma would add an empty column
    if df.shape[1] != 618:
        raise DataError(f"{path} has {df.shape[1]} columns; expected 617 features + class")
    df.columns = [*(f"f{i}" for i in range(1, 618)), "class"]
    return df


def isolet(paths: Sequence[Path]) -> Cleaned:
    """UCI ISOLET: f1..f617 (public range [-1, 1]), vowel = class in {1,5,9,15,21}.

    Takes either the two UCI files (isolet1+2+3+4.data, isolet5.data: 7,797 rows)
    or the reference copy of the isolet5 test part (a CSV with a header: 1,559 rows).
    """
    if len(paths) == 1:
        df = _csv(paths[0])
        _require(df, ("f1", "f617", "class"), paths[0])
        notes = {"part": "isolet5 test part only (1,559 rows of 7,797)"}
    else:
        df = pd.concat([_isolet_raw(p) for p in paths], ignore_index=True)
        notes = {"part": "full (isolet1+2+3+4 and isolet5)"}
    vowel = df["class"].round().isin(ISOLET_VOWELS).astype("int64").rename("vowel")
    df = pd.concat([df.drop(columns="class"), vowel], axis=1)
    # UCI: "All attributes are continuous, real-valued attributes scaled into -1.0..1.0".
    public = {c: ("continuous", -1.0, 1.0) for c in df.columns[:-1]}
    return Cleaned(df, public, notes)


def credit(paths: Sequence[Path]) -> Cleaned:
    """Kaggle credit card fraud: Time, V1..V28, Amount, Class (rounded to 0/1)."""
    (path,) = paths
    df = _csv(path)
    _require(df, CREDIT_COLUMNS, path)
    df = df[list(CREDIT_COLUMNS)]
    # Round, never truncate: the study's int() cast turned a stored 0.99999 into 0.
    cls = np.rint(pd.to_numeric(df["Class"], errors="coerce"))
    if cls.isna().any() or not set(cls.unique()) <= {0.0, 1.0}:
        raise DataError(f"{path}: Class must round to 0 or 1; found {sorted(set(cls.unique()))[:5]}")
    df = df.assign(Class=cls.astype("int64"))
    return Cleaned(df, notes={"label_cast": "rounded"})


def read_idx(path: Path) -> np.ndarray:
    """An idx array (MNIST's format) from a gzipped file, with its stored shape and dtype uint8."""
    try:
        with gzip.open(path, "rb") as fh:
            data = fh.read()
        zero, dtype, ndim = struct.unpack(">HBB", data[:4])
        if zero != 0 or dtype != 0x08:
            raise DataError(f"{path} is not an idx file of unsigned bytes")
        shape = struct.unpack(f">{ndim}I", data[4 : 4 + 4 * ndim])
        return np.frombuffer(data, np.uint8, offset=4 + 4 * ndim).reshape(shape)
    except (OSError, EOFError, struct.error, ValueError) as exc:
        raise DataError(f"cannot read idx file {path}: {exc}") from exc


def read_mnist(paths: Sequence[Path]) -> tuple[np.ndarray, np.ndarray]:
    """All 70,000 MNIST images as (n, 784) uint8 and their digits (train first, then t10k)."""
    train_x, train_y, test_x, test_y = (read_idx(p) for p in paths)
    images = np.concatenate([train_x.reshape(len(train_x), -1), test_x.reshape(len(test_x), -1)])
    return images, np.concatenate([train_y, test_y])


def mnist(paths: Sequence[Path]) -> Cleaned:
    """MNIST as 784 raw pixel columns (uint8, public range [0, 255]), label is_zero = (digit == 0).

    The canonical 60k/10k split is pooled and re-split 80/20 like every dataset.
    """
    images, digits = read_mnist(paths)
    df = pd.DataFrame(images, columns=[f"pixel{i}" for i in range(images.shape[1])], copy=False)
    df["is_zero"] = (digits == 0).astype("int64")
    public = {c: ("integer", 0.0, 255.0) for c in df.columns[:-1]}
    return Cleaned(df, public, {"canonical_split": "60,000/10,000, pooled before splitting"})


def mnist10(paths: Sequence[Path]) -> Cleaned:
    """MNIST with its digit as the label (``digit``, 0-9, public): the G-PATE paper's
    10-class task. The same pixels and the same pooled 80/20 split procedure as ``mnist``
    (stratified on the digit here, so the rows of each part differ from ``mnist``'s)."""
    images, digits = read_mnist(paths)
    df = pd.DataFrame(images, columns=[f"pixel{i}" for i in range(images.shape[1])], copy=False)
    df["digit"] = digits.astype("int64")
    public = {c: ("integer", 0.0, 255.0) for c in df.columns}
    public["digit"] = ("integer", 0.0, 9.0)
    return Cleaned(df, public, {"canonical_split": "60,000/10,000, pooled before splitting"})
