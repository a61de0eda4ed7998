"""synthcity's TabularEncoder (v0.2.10) as the `synthcity` port uses it: BGM and one-hot columns.

* A column with at most 10 distinct values (``categorical_limit``) is one-hot encoded over
  its sorted distinct values (scikit-learn ``OneHotEncoder``); decoding takes the argmax.
* Any other column gets a ``BayesianGaussianMixture(n_components=5,
  weight_concentration_prior=1e-3, random_state=0)`` (``encoder_max_clusters=5``; the
  seed is fixed at 0 upstream, so the encoding is a function of the column). A value x
  is encoded as the scalar (x - mu_c) / (4 sigma_c), clipped to +/-0.99, followed by the
  one-hot of its most probable component c (all 5 components, whatever their weight).
  Decoding: c = argmax of the component block, scalar clipped to +/-1,
  x = s * 4 sigma_c + mu_c, clipped to the column's training [min, max].
* The decoded table is cast back to the training dtypes (pandas ``astype``: integer
  columns are TRUNCATED toward zero, ``integers="astype"``; ``"round"`` rounds first).

Everything here is fitted on the training records: non-private metadata (the study's
"metadata" deviation). ``layout`` lists the blocks for the networks and the
conditional sampler: ("continuous", 1) + ("component", 5) per BGM column,
("discrete", n) per one-hot column.
"""

from __future__ import annotations

import hashlib
import warnings
from collections import OrderedDict

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.mixture import BayesianGaussianMixture

from raudit.generators.batch_types import Encoder

CATEGORICAL_LIMIT = 10


def column_kinds(df: pd.DataFrame, clusters: int = 5) -> tuple[tuple[str, int], ...]:
    """(kind, width) per column, without fitting anything (groups tables by layout)."""
    out = []
    for name in df.columns:
        n = df[name].nunique()
        out.append(("discrete", n) if n <= CATEGORICAL_LIMIT else ("bgm", clusters))
    return tuple(out)


# Fitted mixtures by (column bytes, settings). The fit is a deterministic function of the
# column (the seed is fixed), and the M tables of an audit chunk are mostly the same
# table (a world's dataset, with or without the target), so one fit serves them all:
# this took 2.6 s per table, 70% of a synthcity chunk. Shared objects are read-only.
# The cap holds both worlds of a wide table (isolet: 2 x 613 mixtures of a few KB): an
# LRU cycled by more columns than it holds never hits, and at 512 every isolet fit
# refitted all its mixtures (~30 CPU-s on 400 rows).
_FITTED: OrderedDict = OrderedDict()
_FITTED_MAX = 4096


def _column_key(x: np.ndarray, clusters: int, seed: int) -> tuple:
    return (hashlib.sha1(x.tobytes()).hexdigest(), x.shape[0], clusters, seed)


class BgmColumn:
    """One continuous column: BayesianGaussianMixture + (x - mu)/(4 sigma) of the likeliest component."""

    def __init__(self, clusters: int = 5, seed: int = 0, std_multiplier: float = 4.0):
        self.clusters, self.mult = clusters, std_multiplier
        self.model = BayesianGaussianMixture(n_components=clusters, random_state=seed,
                                             weight_concentration_prior=1e-3)

    def fit(self, x: np.ndarray) -> "BgmColumn":
        x = x.reshape(-1, 1).astype(np.float64)
        self.lo, self.hi = float(x.min()), float(x.max())
        key = _column_key(x, self.clusters, self.model.random_state)
        if key in _FITTED:
            _FITTED.move_to_end(key)
            self.model = _FITTED[key]
        else:
            with warnings.catch_warnings():  # upstream runs with default max_iter and warns too
                warnings.simplefilter("ignore", ConvergenceWarning)
                self.model.fit(x)
            _FITTED[key] = self.model
            if len(_FITTED) > _FITTED_MAX:
                _FITTED.popitem(last=False)
        self.means = self.model.means_.reshape(-1)
        self.stds = np.sqrt(self.model.covariances_).reshape(-1)
        return self

    def transform(self, x: np.ndarray) -> np.ndarray:
        x = x.reshape(-1, 1).astype(np.float64)
        comp = np.argmax(self.model.predict_proba(x), axis=1)
        z = ((x[:, 0] - self.means[comp]) / (self.mult * self.stds[comp])).clip(-0.99, 0.99)
        return np.hstack([z[:, None], np.eye(self.clusters)[comp]])

    def inverse(self, block: np.ndarray) -> np.ndarray:
        comp = np.argmax(block[:, 1:], axis=1)
        z = np.clip(block[:, 0], -1.0, 1.0)
        return np.clip(z * self.mult * self.stds[comp] + self.means[comp], self.lo, self.hi)


class SynthcityEncoder(Encoder):
    """The table -> (BGM | one-hot) blocks and back; see the module docstring."""

    shareable = True  # a function of (table, columns): no seed, nothing mutates it

    def __init__(self, *, clusters: int = 5, integers: str = "astype", bgm_seed: int = 0):
        self.clusters, self.integers, self.bgm_seed = clusters, integers, bgm_seed

    def fit(self, df: pd.DataFrame, columns=None) -> "SynthcityEncoder":
        self.names, self.dtypes = list(df.columns), df.dtypes.to_dict()
        self.cols: list = []
        self.layout: list[tuple[str, int]] = []
        for name, (kind, _) in zip(self.names, column_kinds(df, self.clusters)):
            x = df[name].to_numpy()
            if kind == "discrete":
                cats = np.unique(x)
                self.cols.append(cats)
                self.layout.append(("discrete", len(cats)))
            else:
                self.cols.append(BgmColumn(self.clusters, self.bgm_seed).fit(x))
                self.layout += [("continuous", 1), ("component", self.clusters)]
        return self

    @property
    def width(self) -> int:
        return sum(w for _, w in self.layout)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        blocks = []
        for name, col in zip(self.names, self.cols):
            x = df[name].to_numpy()
            if isinstance(col, BgmColumn):
                blocks.append(col.transform(x))
            else:  # handle_unknown="ignore": an unseen value is all zeros
                blocks.append((x[:, None] == col[None, :]).astype(np.float64))
        return np.hstack(blocks)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        x = np.asarray(x, dtype=np.float64)
        out, at = {}, 0
        for name, col in zip(self.names, self.cols):
            if isinstance(col, BgmColumn):
                out[name] = col.inverse(x[:, at:at + 1 + self.clusters])
                at += 1 + self.clusters
            else:
                out[name] = col[np.argmax(x[:, at:at + len(col)], axis=1)]
                at += len(col)
        df = pd.DataFrame(out, columns=self.names)
        for name, dtype in self.dtypes.items():
            if pd.api.types.is_integer_dtype(dtype) and self.integers == "round":
                df[name] = np.round(df[name].to_numpy(dtype=np.float64))
            df[name] = df[name].astype(dtype)  # astype truncates floats toward zero
        return df

    def discrete_blocks(self) -> list[tuple[int, int]]:
        """(offset, width) in the encoded row of every one-hot column (the conditional's columns)."""
        out, at = [], 0
        for kind, w in self.layout:
            if kind == "discrete":
                out.append((at, w))
            at += w
        return out

    def softmax_blocks(self) -> list[tuple[int, int]]:
        """(offset, width) of every block the generator ends with a (Gumbel-)softmax."""
        out, at = [], 0
        for kind, w in self.layout:
            if kind != "continuous":
                out.append((at, w))
            at += w
        return out
