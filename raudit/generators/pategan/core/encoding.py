"""Min-max encoders shared by the PATE-GAN ports.

Each port scales its training table its own way; the variants differ in the
denominator, the output range, whether decoding clips and how integer columns
come back. Bounds come from the column metadata when it marks them public and
from the training records otherwise (the "non-private metadata" deviation most
ports have; ``bounds="data"`` forces the latter, as the upstream code does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.generators.batch_types import Encoder


@dataclass
class MinMaxEncoder(Encoder):
    """x' = lo_out + (x - min) / (max - min + eps) * (hi_out - lo_out).

    ``integers``: how integer/binary columns are decoded: "round", "truncate"
    (astype(int), turing's bug) or "none" (left as floats).
    ``bounds``: "metadata" uses public bounds from ColumnMeta where given,
    "data" always reads min/max off the training table.
    """

    shareable = True  # a function of (table, columns): no seed, nothing mutates it

    eps: float = 1e-8
    out_range: tuple[float, float] = (0.0, 1.0)
    clip: bool = True
    integers: str = "round"
    bounds: str = "metadata"

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "MinMaxEncoder":
        x = df.to_numpy(dtype=float)
        self.names = list(df.columns)
        self.dtypes = df.dtypes.to_dict()
        lo, hi = np.nanmin(x, axis=0), np.nanmax(x, axis=0)
        meta = {c.name: c for c in columns} if columns else {}
        self.public = np.zeros(len(self.names), dtype=bool)
        self.kinds = []
        for j, name in enumerate(self.names):
            c = meta.get(name)
            if c is not None and self.bounds == "metadata" and c.bounds == "public":
                lo[j], hi[j], self.public[j] = c.lower, c.upper, True
            integral = pd.api.types.is_integer_dtype(self.dtypes[name]) or np.all(np.mod(x[:, j], 1) == 0)
            self.kinds.append(c.kind if c is not None else ("integer" if integral else "continuous"))
        self.lo, self.hi = lo, hi
        return self

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        a, b = self.out_range
        x = (df.to_numpy(dtype=float) - self.lo) / self._span()
        return a + x * (b - a)

    def _span(self) -> np.ndarray:
        # a constant column has max == min: with eps = 0 keep it finite (it decodes to min)
        span = self.hi - self.lo + self.eps
        return np.where(span == 0, 1.0, span)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        a, b = self.out_range
        u = (np.asarray(x, dtype=float) - a) / (b - a)
        if self.clip:
            u = np.clip(u, 0.0, 1.0)
        y = u * (self.hi - self.lo + self.eps) + self.lo
        df = pd.DataFrame(y, columns=self.names)
        for j, name in enumerate(self.names):
            if self.kinds[j] in ("integer", "binary") and self.integers != "none":
                col = np.round(y[:, j]) if self.integers == "round" else np.trunc(y[:, j])
                df[name] = col.astype(np.int64)
        return df
