"""SmartNoise's preprocessing (snsynth ``TableTransformer``) for the smartnoise port.

``encoding="study"`` (default): what the study's harness builds: every feature a
``MinMaxTransformer(lower, upper, negative=True)`` to [-1, 1], the label a
``ChainTransformer([LabelTransformer(), OneHotEncoder()])``.

``encoding="library"``: what snsynth infers itself (``TypeMap.infer_column_types``
on the first 1,000 rows): an integer-valued column with fewer than 150 distinct
values spanning less than 150 is ordinal -> label + one-hot; anything else is
continuous -> ``MinMaxTransformer()``, which scales to [0, 1] (negative=False).
One-hot categories are read off ALL training rows (non-private metadata, as
upstream), so two neighbouring tables can encode to different widths.

Bounds of the continuous columns (``bounds``):

* ``"data"``: the training table's min/max handed over as if public (the study);
* ``"metadata"``: public bounds from the column metadata where declared, else data;
* ``"dp"``: snsynth's ``approx_bounds`` (``snsynth/transform/mechanism.py``, after
  Desfontaines' thesis): a 128-bin histogram on a signed log2 scale (bin [0, 1),
  [2^i, 2^(i+1)) above, mirrored below; values beyond 2^63 dropped), Laplace noise
  of scale 1/eps_col on every bin, and the outermost bins whose noisy count passes
  K = -log(2 - 2 p^(1/127)) / eps_col give the bounds (their outer edges), with p = 1 -
  failure probability tried from 1e-8 up to 1/256 by factors of 10; no bin passing is
  an error. eps_col = preprocessor_eps / (number of continuous columns), as
  ``TableTransformer.allocate_privacy_budget`` splits it; the generator subtracts
  preprocessor_eps from the training epsilon. The noise comes from a CounterRNG
  stream of the model's seed (purpose "smartnoise-bounds").

Encoding clamps to the bounds; decoding maps back and clips to them, and takes
the argmax of each one-hot block (the first on ties, as ``np.argmax``). A
constant continuous column is scaled by 1 where snsynth would divide 0 by 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError, DataError
from raudit.generators.batch_types import Encoder
from raudit.generators.nn.rng import CounterRNG

INFER_ROWS, ORDINAL_LIMIT, BINS = 1000, 150, 64


def column_plan(df: pd.DataFrame, encoding: str) -> tuple[tuple[str, int], ...]:
    """(kind, encoded width) per column: kind "continuous" or "onehot"."""
    x = df.to_numpy(dtype=float)
    if encoding == "study":
        kinds = ["continuous"] * (x.shape[1] - 1) + ["onehot"]
    else:
        head = x[:INFER_ROWS]
        kinds = []
        for j in range(x.shape[1]):
            v = np.unique(head[:, j])
            ordinal = np.all(v == np.round(v)) and len(v) < ORDINAL_LIMIT and v[-1] - v[0] < ORDINAL_LIMIT
            kinds.append("onehot" if ordinal else "continuous")
    return tuple((k, 1 if k == "continuous" else len(np.unique(x[:, j]))) for j, k in enumerate(kinds))


def _bin_edges(i: int) -> tuple[float, float]:
    if i == BINS:
        return 0.0, 1.0
    if i > BINS:
        return 2.0 ** (i - BINS - 1), 2.0 ** (i - BINS)
    if i == BINS - 1:
        return -1.0, 0.0
    return -(2.0 ** (BINS - i - 1)), -(2.0 ** (BINS - i - 2))


def approx_bounds(values: np.ndarray, epsilon: float, laplace: np.ndarray) -> tuple[float, float]:
    """snsynth's DP bounds estimate; ``laplace`` holds 2*64 standard Laplace draws."""
    v = np.asarray(values, dtype=float)
    n_bins = 2 * BINS
    with np.errstate(divide="ignore", invalid="ignore"):
        up = np.trunc(np.log2(np.where(v >= 1, v, 1.0))).astype(np.int64) + BINS + 1
        down = BINS - np.trunc(np.log2(np.where(v < -1, 1 - v, 2.0))).astype(np.int64) - 1
    idx = np.select([(v >= 0) & (v < 1), v >= 1, (v < 0) & (v >= -1)], [BINS, up, BINS - 1], down)
    keep = np.where(v >= 1, idx < n_bins, np.where(v < -1, idx > 0, True))
    hist = np.bincount(idx[keep], minlength=n_bins).astype(float) + laplace / epsilon
    failure = 10e-9
    exceeds = np.array([], dtype=np.int64)
    while exceeds.size == 0 and failure <= 1 / (n_bins * 2):
        k = -math.log(2 - 2 * (1 - failure) ** (1 / (n_bins - 1))) / epsilon
        exceeds = np.flatnonzero(hist > k)
        failure *= 10
    if exceeds.size == 0:
        raise DataError(f"DP bounds: no histogram bin passed the threshold with eps {epsilon:.4g} "
                        "per column (snsynth: 'MinMaxTransformer could not find bounds'); "
                        "raise preprocessor_eps or use bounds=data/metadata")
    return _bin_edges(int(exceeds.min()))[0], _bin_edges(int(exceeds.max()))[1]


@dataclass
class SmartNoiseEncoder(Encoder):
    encoding: str = "study"
    bounds: str = "data"
    preprocessor_eps: float = 0.0
    integers: str = "round"
    seed: int | None = None  # the model's training seed: the stream of the DP bounds' noise

    @property
    def shareable(self) -> bool:  # type: ignore[override]
        """Only ``bounds="dp"`` draws noise from the model's seed; any other fit is a
        function of (table, columns), so the models of a chunk share one (Encoder)."""
        return self.bounds != "dp"

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "SmartNoiseEncoder":
        x = df.to_numpy(dtype=float)
        meta = {c.name: c for c in columns} if columns else {}
        self.names, self.dtypes = list(df.columns), df.dtypes.to_dict()
        self.integral = [meta[n].kind in ("integer", "binary") if n in meta
                         else bool(np.all(np.mod(x[:, j], 1) == 0)) for j, n in enumerate(self.names)]
        self.plan = column_plan(df, self.encoding)
        self.out_range = (-1.0, 1.0) if self.encoding == "study" else (0.0, 1.0)
        self.lo, self.hi = x.min(axis=0), x.max(axis=0)
        cont = [j for j, (kind, _) in enumerate(self.plan) if kind == "continuous"]
        if self.bounds == "metadata":
            for j in cont:
                c = meta.get(self.names[j])
                if c is not None and c.bounds == "public":
                    self.lo[j], self.hi[j] = c.lower, c.upper
        elif self.bounds == "dp" and cont:
            if self.seed is None:
                raise ConfigError("bounds='dp' needs the model's seed (SmartNoiseEncoder(seed=...), "
                                  "as the generator's encoder(seed) builds it)")
            rng = CounterRNG([self.seed], purpose="smartnoise-bounds", dtype=torch.float64)
            noise = rng.laplace(len(cont), 2 * BINS).cpu().numpy()[0]
            eps_col = self.preprocessor_eps / len(cont)
            for i, j in enumerate(cont):
                self.lo[j], self.hi[j] = approx_bounds(x[:, j], eps_col, noise[i])
        self.categories = {j: np.unique(x[:, j]) for j, (kind, _) in enumerate(self.plan) if kind == "onehot"}
        return self

    def _span(self) -> np.ndarray:
        span = self.hi - self.lo
        return np.where(span == 0, 1.0, span)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        x = df.to_numpy(dtype=float)
        a, b = self.out_range
        u = (np.clip(x, self.lo, self.hi) - self.lo) / self._span()
        blocks = []
        for j, (kind, _) in enumerate(self.plan):
            if kind == "continuous":
                blocks.append((a + u[:, j] * (b - a))[:, None])
            else:
                blocks.append((x[:, j][:, None] == self.categories[j][None, :]).astype(float))
        return np.concatenate(blocks, axis=1)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        x = np.asarray(x, dtype=float)
        a, b = self.out_range
        out, pos = {}, 0
        for j, (kind, width) in enumerate(self.plan):
            block = x[:, pos:pos + width]
            pos += width
            if kind == "continuous":
                y = (block[:, 0] - a) / (b - a) * self._span()[j] + self.lo[j]
                y = np.clip(y, self.lo[j], self.hi[j])
            else:
                y = self.categories[j][np.argmax(block, axis=1)]
            if self.integral[j] and self.integers == "round":
                y = np.round(y).astype(np.int64)
            out[self.names[j]] = y
        return pd.DataFrame(out, columns=self.names)
