"""The value objects every other package sees: a dataset and its column metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

ColumnKind = Literal["continuous", "integer", "binary", "categorical"]
BoundsSource = Literal["public", "data"]


@dataclass(frozen=True)
class ColumnMeta:
    """Type and range of one column.

    ``bounds`` records where ``lower``/``upper`` came from: ``"public"`` bounds are
    known without looking at the records (a schema, a codebook); ``"data"`` bounds
    were read off the records and so leak information about them (the study's
    "non-private metadata" violation). Generators must not treat data bounds as free.
    """

    name: str
    kind: ColumnKind
    lower: float
    upper: float
    bounds: BoundsSource = "data"
    categories: tuple[float, ...] = ()


@dataclass(frozen=True)
class Dataset:
    """A cleaned, split, all-numeric table with its label as the last column (binary 0/1,
    except ``mnist10``'s digit: :attr:`classes`)."""

    name: str
    train: pd.DataFrame
    test: pd.DataFrame
    columns: tuple[ColumnMeta, ...]
    source: str = ""
    notes: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.train.columns[-1]

    @property
    def classes(self) -> int:
        """How many label classes: 2 for a binary label, upper - lower + 1 for an integer
        one (``mnist10``: 10)."""
        m = self.meta[self.label]
        return 2 if m.kind == "binary" else int(m.upper - m.lower + 1)

    @property
    def meta(self) -> dict[str, ColumnMeta]:
        return {c.name: c for c in self.columns}

    @property
    def shape(self) -> tuple[int, int]:
        return self.train.shape


def infer_columns(df: pd.DataFrame, bounds: BoundsSource = "data") -> tuple[ColumnMeta, ...]:
    """Column metadata read off a table (bounds marked as ``bounds``)."""
    out = []
    for name in df.columns:
        x = df[name].to_numpy(dtype=float)
        uniq = np.unique(x[~np.isnan(x)])
        integral = bool(np.all(np.mod(uniq, 1) == 0)) if uniq.size else False
        if integral and uniq.size <= 2 and set(uniq.tolist()) <= {0.0, 1.0}:
            kind: ColumnKind = "binary"
        elif integral:
            kind = "integer"
        else:
            kind = "continuous"
        lo = float(uniq.min()) if uniq.size else 0.0
        hi = float(uniq.max()) if uniq.size else 0.0
        cats = tuple(float(u) for u in uniq) if kind == "binary" else ()
        out.append(ColumnMeta(str(name), kind, lo, hi, bounds, cats))
    return tuple(out)
