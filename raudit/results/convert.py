"""Rows to Arrow and back under the result schema (:mod:`raudit.results.schema`).

:func:`to_arrow` validates rows before anything is written (unknown columns, wrong
types and values outside the enumerated columns raise :class:`SchemaError` naming
them); :func:`conform` brings a part written by an older or newer raudit to this
version's columns; :func:`to_pandas` reads integers and booleans as nullable dtypes.
Split from ``schema.py`` so that the schema module is the columns and their versions
(the file every schema change edits), this one the conversion.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from raudit.results.schema import ENUMS, SCHEMA_VERSION, SchemaError, arrow_schema, fields_of


# Integers and booleans read as pandas' nullable dtypes: a null in a column must not
# turn int64 seeds into float64 (which silently rounds seeds above 2**53).
_PANDAS_TYPES = {pa.int64(): pd.Int64Dtype(), pa.bool_(): pd.BooleanDtype()}


def number(x: Any) -> float:
    """A stored value as a float; NaN where it is missing (None, pandas' NA) or not a number,
    so that verdicts and plots compare it without a type check first."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return math.nan


def number_or_none(x: Any) -> float | None:
    """A stored value as a float, None where it is missing or NaN (JSON's null)."""
    x = number(x)
    return None if math.isnan(x) else x


def to_pandas(data: pa.Table) -> pd.DataFrame:
    """A result table as pandas, integers and booleans as nullable dtypes."""
    return data.to_pandas(types_mapper=_PANDAS_TYPES.get)


def empty_frame(table: str) -> pd.DataFrame:
    """A DataFrame with no rows and the table's columns."""
    return to_pandas(arrow_schema(table).empty_table())


def _column(values: pd.Series, name: str, type_: pa.DataType) -> pa.Array:
    """Convert one column, with the column name in any error."""
    try:
        if pa.types.is_timestamp(type_):
            values = pd.to_datetime(values, utc=True)
        elif pa.types.is_list(type_) and pa.types.is_list(type_.value_type):
            # lists of vectors (ragged allowed): plain nested lists of floats
            values = pd.Series([None if v is None or (np.isscalar(v) and pd.isna(v))
                                else [[float(x) for x in inner] for inner in v]
                                for v in values], dtype=object)
        elif pa.types.is_list(type_):
            # numpy arrays, tuples and lists all become lists; NaN/None become null.
            values = pd.Series([None if v is None or (np.isscalar(v) and pd.isna(v))
                                else np.asarray(v, dtype=float) for v in values], dtype=object)
        return pa.array(values, type=type_, from_pandas=True)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError) as exc:
        raise SchemaError(f"column {name!r} does not convert to {type_}: {exc}") from exc


def to_arrow(table: str, rows: Sequence[Mapping[str, Any]] | pd.DataFrame) -> pa.Table:
    """Validate rows against the table's schema and convert them.

    Unknown columns raise :class:`SchemaError` naming them; missing columns are
    filled with nulls (``schema_version`` with :data:`SCHEMA_VERSION`); values of
    the enumerated columns (``world``, ``split``, ``status``) are checked.
    """
    fields = fields_of(table)
    df = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    unknown = [str(c) for c in df.columns if c not in fields]
    if unknown:
        raise SchemaError(f"unknown columns for table {table!r}: {unknown}; "
                          f"add them to the schema with raudit.results.schema.add_column")
    n = len(df)
    arrays = []
    for name, type_ in fields.items():
        if name in df.columns:
            values = df[name].reset_index(drop=True)
            if name == "schema_version":
                values = values.fillna(SCHEMA_VERSION) if n else values
        elif name == "schema_version":
            values = pd.Series([SCHEMA_VERSION] * n)
        else:
            arrays.append(pa.nulls(n, type=type_))
            continue
        arrays.append(_column(values, name, type_))
    out = pa.Table.from_arrays(arrays, schema=arrow_schema(table))
    _check_enums(table, out)
    return out


def _check_enums(table: str, data: pa.Table) -> None:
    for name, allowed in ENUMS.get(table, {}).items():
        bad = set(data.column(name).drop_null().unique().to_pylist()) - allowed
        if bad:
            raise SchemaError(f"column {table}.{name} takes {sorted(allowed)}, "
                              f"got {sorted(bad)}")


def conform(table: str, data: pa.Table) -> pa.Table:
    """Bring a table read from an older (or newer) part to the current schema.

    Columns the part lacks become nulls; columns this version does not know are
    dropped (a newer writer added them; this reader cannot interpret them).
    """
    schema = arrow_schema(table)
    arrays = []
    for f in schema:
        if f.name in data.column_names:
            arrays.append(data.column(f.name).cast(f.type))
        else:
            arrays.append(pa.nulls(data.num_rows, type=f.type))
    return pa.Table.from_arrays(arrays, schema=schema)
