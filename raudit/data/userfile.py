"""A user's own CSV or Parquet table as a :class:`Dataset`.

Rules, so that a table means one thing wherever it is loaded:

- The label is the last column, or the column named by ``label`` (moved last).
  It must have exactly two distinct values; they become 0/1 with the *larger*
  value as the positive class 1 (numbers numerically, strings in sort order), so
  0/1 -> 1, False/True -> True, "no"/"yes" -> "yes". ``notes["positive_class"]``
  records which value that was.
- Booleans become 0/1. A text (or categorical) feature column needs its categories
  declared, never read off the records (DP needs the domain public: the set of values a
  column holds is itself information about them): a JSON file beside the table, named
  ``<name>.categories.json`` for ``<name>.csv`` (or ``.csv.gz``, ``.parquet``), maps each
  such column to its list of values, ``{"city": ["Paris", "Lyon", "Nice"]}``. A column
  listed there becomes the integer codes 0..k-1 in the listed order, kind "categorical"
  with public bounds [0, k-1]; a value outside its list, a listed column the table lacks
  and a text column left out are refused, each with the way out.
  ``notes["categories"][col]`` lists the values in code order.
- :func:`decode` turns a synthetic table back into the file's values: the codes into
  their categories (rounded and clipped to the domain, for generators that treat them as
  numbers) and the label's 0/1 into its two values (``notes["label_values"]``).
- Missing values and date/time columns are refused: fill or drop them first.
- Bounds are read off the records (``"data"``) unless ``bounds`` names a JSON
  (``{"col": [lo, hi]}``) or CSV (``column,lower,upper``) file; the columns it
  lists get those bounds, marked ``"public"``. Records outside them are refused.
"""

from __future__ import annotations

import json
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta, Dataset
from raudit.data.tables import Cleaned, columns_of, make_dataset
from raudit.errors import DataError

_PARQUET = (".parquet", ".pq")


def _read(path: Path) -> pd.DataFrame:
    suffixes = [s.lower() for s in path.suffixes]
    try:
        if suffixes and suffixes[-1] in _PARQUET:
            df = pd.read_parquet(path)
        elif ".csv" in suffixes:
            df = pd.read_csv(path)
        else:
            raise DataError(f"{path}: unsupported file type; use .csv (optionally gzipped) or .parquet")
    except pd.errors.EmptyDataError as exc:
        raise DataError(f"{path} is empty") from exc
    except (ValueError, OSError, pd.errors.ParserError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"cannot read {path}: {exc}") from exc
    if df.empty:
        raise DataError(f"{path} has no rows or no columns")
    df.columns = [str(c) for c in df.columns]
    _check_cells(df, path)
    return df


_INT64_MAX = np.iinfo(np.int64).max


def _check_cells(df: pd.DataFrame, path: Path) -> None:
    """Refuse cells no column of raudit can hold exactly: nested values (a Parquet list or
    struct column, which failed deep in pandas as 'unhashable type'), and unsigned integers
    above int64's range (2**64-1 became -9.22e18 in every synthetic row)."""
    for name in df.columns:
        col = df[name]
        if col.dtype == object:
            nested = col.map(lambda v: isinstance(v, (list, tuple, dict, set, np.ndarray)))
            if nested.any():
                kind = type(col[nested].iloc[0]).__name__
                raise DataError(f"{path}: column {name!r} holds nested values ({kind}, e.g. a "
                                "Parquet list or struct); flatten it into plain columns first")
        elif pd.api.types.is_unsigned_integer_dtype(col) and len(col) and col.max() > _INT64_MAX:
            raise DataError(f"{path}: column {name!r} holds {col.max()}, beyond the int64 range "
                            "raudit's integer columns use; rescale it or store it as a float")


def _plain(value: object) -> object:
    """A JSON-friendly Python scalar (numpy scalars unwrapped, anything else as text)."""
    if isinstance(value, np.generic):
        value = value.item()
    return value if isinstance(value, (bool, int, float, str)) else str(value)


def _binary_label(y: pd.Series, path: Path) -> tuple[pd.Series, object]:
    values = list(pd.unique(y))
    if len(values) != 2:
        # plain values (numpy 2 prints np.float64(50782.9)), and the way out: --label
        shown = ", ".join(repr(_plain(v)) for v in values[:5]) + (", ..." if len(values) > 5 else "")
        raise DataError(f"{path}: label {y.name!r} has {len(values):,} distinct value(s) "
                        f"({shown}); a binary label with both classes present is required: "
                        "name the label column with --label COLUMN (default: the last column)")
    try:
        positive = max(values)
    except TypeError:  # mixed types: compare as text
        positive = max(values, key=str)
    return (y == positive).astype("int64"), positive


def categories_file(path: Path) -> Path:
    """Where a table's declared categories live: ``<name>.categories.json`` beside it."""
    return path.with_name(path.name.split(".")[0] + ".categories.json")


def read_categories(path: Path) -> dict[str, list]:
    """The declared categories beside table ``path`` ({} where there is no such file)."""
    where = categories_file(path)
    if not where.is_file():
        return {}
    try:
        raw = json.loads(where.read_text())
    except ValueError as exc:
        raise DataError(f"cannot read {where}: {exc}") from exc
    ok = isinstance(raw, dict) and all(
        isinstance(v, list) and v and all(isinstance(x, (str, int, float)) and not
                                          isinstance(x, bool) for x in v) for v in raw.values())
    if not ok:
        raise DataError(f"{where}: expected a JSON object of non-empty lists of values, "
                        '{"column": ["value", ...]}')
    repeated = {k: v for k, v in raw.items() if len(set(v)) < len(v)}
    if repeated:
        raise DataError(f"{where}: column {next(iter(repeated))!r} lists a value twice")
    return {str(k): list(v) for k, v in raw.items()}


def _how_to_declare(path: Path, name: str) -> str:
    return (f"{path}: column {name!r} holds text; declare its categories (public, never read "
            f"from the records) in {categories_file(path)}, e.g. "
            f'{{"{name}": ["value 1", "value 2", ...]}} with every value it may take')


def _encode(df: pd.DataFrame, path: Path,
            declared: dict[str, list]) -> tuple[pd.DataFrame, dict[str, list]]:
    out, categories = {}, {}
    for name in df.columns:
        col = df[name]
        if col.isna().any():
            raise DataError(f"{path}: column {name!r} has {int(col.isna().sum())} missing "
                            "values; fill or drop them first")
        if pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col):
            infinite = int(np.isinf(col.to_numpy(dtype=float)).sum())
            if infinite:
                raise DataError(f"{path}: column {name!r} has {infinite} infinite value(s); "
                                "replace or drop them first")
        if name in declared:
            values = declared[name]
            codes = {v: i for i, v in enumerate(values)}
            outside = [v for v in pd.unique(col) if v not in codes]
            if outside:
                raise DataError(f"{path}: column {name!r} holds {_plain(outside[0])!r}, not one "
                                f"of its categories in {categories_file(path)}; add it there")
            out[name] = col.map(codes).astype("int64")
            categories[name] = [_plain(v) for v in values]
        elif pd.api.types.is_bool_dtype(col):
            out[name] = col.astype("int64")
        elif pd.api.types.is_datetime64_any_dtype(col) or pd.api.types.is_timedelta64_dtype(col):
            raise DataError(f"{path}: column {name!r} holds dates/times; convert it to numbers first")
        elif pd.api.types.is_numeric_dtype(col):
            out[name] = col
        else:
            raise DataError(_how_to_declare(path, name))
    return pd.DataFrame(out, index=df.index), categories


def read_bounds(path: str | Path) -> dict[str, tuple[float, float]]:
    """Public bounds per column from a JSON ``{"col": [lo, hi]}`` or CSV ``column,lower,upper`` file."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise DataError(f"no such bounds file: {path}")
    try:
        if path.suffix.lower() == ".json":
            raw = json.loads(path.read_text())
            if not isinstance(raw, dict):
                raise DataError(f"{path}: expected a JSON object {{\"column\": [lower, upper]}}")
            for k, v in raw.items():
                if not (isinstance(v, list) and len(v) == 2
                        and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in v)):
                    raise DataError(f"{path}: bounds of column {k!r} must be a list of two "
                                    f"numbers [lower, upper], got {json.dumps(v)}")
            items = [(str(k), *v) for k, v in raw.items()]
        else:
            table = pd.read_csv(path)
            items = list(table.iloc[:, :3].itertuples(index=False, name=None))
        bounds = {str(c): (float(lo), float(hi)) for c, lo, hi in items}
    except (ValueError, TypeError, pd.errors.ParserError) as exc:
        if isinstance(exc, DataError):
            raise
        raise DataError(f"cannot read bounds from {path}: {exc}; expected "
                        "{\"column\": [lower, upper]} JSON or a column,lower,upper CSV") from exc
    bad = [c for c, (lo, hi) in bounds.items() if not (np.isfinite(lo) and np.isfinite(hi) and lo <= hi)]
    if bad:
        raise DataError(f"{path}: bounds for {bad} must be finite with lower <= upper")
    return bounds


def _public(columns: tuple[ColumnMeta, ...], frame: pd.DataFrame,
            bounds: dict[str, tuple[float, float]], where: str) -> tuple[ColumnMeta, ...]:
    unknown = sorted(set(bounds) - set(frame.columns))
    if unknown:
        raise DataError(f"{where}: bounds given for unknown columns {unknown}")
    out = []
    for meta in columns:
        if meta.name not in bounds or meta.name == frame.columns[-1]:
            out.append(meta)  # the label is public 0/1 already
            continue
        lo, hi = bounds[meta.name]
        x = frame[meta.name]
        if x.min() < lo or x.max() > hi:
            raise DataError(f"{where}: column {meta.name!r} has values in [{x.min()}, {x.max()}], "
                            f"outside its public bounds [{lo}, {hi}]; widen the bounds")
        kind = "integer" if meta.kind == "binary" and (lo, hi) != (0.0, 1.0) else meta.kind
        cats = meta.categories if kind != "integer" else ()
        out.append(replace(meta, kind=kind, lower=lo, upper=hi, bounds="public", categories=cats))
    return tuple(out)


@lru_cache(maxsize=8)
def _table(path: str, stamp: tuple, label: str | None, bounds: str | None, bounds_stamp: tuple,
           categories_stamp: tuple):
    p = Path(path)
    df = _read(p)
    name = label if label is not None else df.columns[-1]
    if name not in df.columns:
        shown = ", ".join(list(df.columns)[:20]) + (", ..." if df.shape[1] > 20 else "")
        raise DataError(f"{p}: no label column {name!r}; columns: {shown}")
    if df.shape[1] < 2:
        raise DataError(f"{p} has only the label column {name!r}; features are needed")
    if df[name].isna().any():
        raise DataError(f"{p}: label {name!r} has missing values; drop those rows first")
    y, positive = _binary_label(df[name], p)
    declared = read_categories(p)
    if name in declared:
        raise DataError(f"{categories_file(p)} lists the label {name!r}: a label's classes are "
                        "its two values (the larger one positive); leave it out")
    unknown = sorted(set(declared) - set(df.columns))
    if unknown:
        raise DataError(f"{categories_file(p)} lists columns the table lacks: {unknown}")
    features, categories = _encode(df.drop(columns=[name]), p, declared)
    frame = features.assign(**{name: y})
    negative = next(v for v in pd.unique(df[name]) if v != positive)
    cleaned = Cleaned(frame, notes={"positive_class": _plain(positive), "categories": categories,
                                    "label_values": [_plain(negative), _plain(positive)]})
    columns = columns_of(cleaned)
    columns = tuple(replace(c, kind="categorical", lower=0.0,
                            upper=float(len(categories[c.name]) - 1), bounds="public",
                            categories=tuple(float(i) for i in range(len(categories[c.name]))))
                    if c.name in categories else c for c in columns)
    if bounds is not None:
        columns = _public(columns, frame, read_bounds(bounds), str(p))
    return cleaned, columns


def _stat(path: Path) -> tuple:
    st = path.stat()
    return (st.st_mtime_ns, st.st_size)


def load_file(path: str | Path, *, label: str | None = None, bounds: str | Path | None = None,
              seed: int = 13) -> Dataset:
    """A user's CSV/Parquet table, cleaned by the module's rules and split 80/20 stratified."""
    p = Path(path).expanduser().resolve()
    b = Path(bounds).expanduser().resolve() if bounds is not None else None
    if b is not None and not b.is_file():
        raise DataError(f"no such bounds file: {b}")
    cats = categories_file(p)
    cleaned, columns = _table(str(p), _stat(p), label, str(b) if b else None, _stat(b) if b else (),
                              _stat(cats) if cats.is_file() else ())
    return make_dataset(p.name.split(".")[0], cleaned, columns, seed=seed, source=str(p))


def decode(synthetic: pd.DataFrame, notes: dict) -> pd.DataFrame:
    """A synthetic table of a user's file in the file's own values (see the module): each
    categorical column's codes as its categories, the label's 0/1 as its two values.
    A table without such notes (a registered dataset's) is returned as it is."""
    out = synthetic.copy()
    for name, values in (notes.get("categories") or {}).items():
        if name in out.columns:
            codes = np.clip(np.rint(out[name].to_numpy(dtype=float)), 0, len(values) - 1)
            out[name] = [values[int(c)] for c in codes]
    label_values = notes.get("label_values")
    if label_values and len(out.columns):
        label = out.columns[-1]
        out[label] = [label_values[int(v >= 0.5)] for v in out[label].to_numpy(dtype=float)]
    return out


def clear_cache() -> None:
    """Forget parsed user tables."""
    _table.cache_clear()
