"""Calibration generators: the audit's known answers.

* ``identity`` releases its training table: it leaks everything, so an attack
  must reach AUC ~ 1 against it (TAPAS's ``Raw`` generator).
* ``independent`` never reads a record: eps_emp must be ~ 0 against it.
* ``randomized-response`` is a mechanism with a known eps: an audit's eps_emp
  against it must stay <= eps (up to the confidence level).

None of them trains, so ``summary()`` reports 0 iterations; only randomized
response has an accountant's answer (its exact eps).

Sampling uses a generator seeded by both the fit seed and the sample seed, so
models fitted with different seeds sample differently even when every model is
sampled with the same ``seed``.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.errors import ConfigError, DataError
from raudit.generators.base import Generator
from raudit.generators.capabilities import Capabilities
from raudit.events import Observer


_FIT, _SAMPLE = 0, 1  # stream tags: fitting and sampling never share random numbers


class _Untuned(Generator):
    """A calibration generator has no hyperparameter: its constructor declares only the
    shared ``preset`` (``default``), so --teachers, --max-iter or -o KEY=VALUE are refused
    with its option list rather than accepted and never read (a catch-all ``**options``
    took any name)."""

    def __init__(self, *, preset: str = "default") -> None:
        if preset not in self.presets:
            raise ConfigError(f"{self.name} has no preset {preset!r}; its presets: "
                              f"{', '.join(self.presets)}")
        super().__init__(preset=preset)  # the options an audit's id has always recorded


def _rng(*keys: int) -> np.random.Generator:
    """A generator seeded by several integers (negative ones are folded to 63 bits)."""
    return np.random.default_rng(np.random.SeedSequence([int(k) & (2**63 - 1) for k in keys]))


def _rows(table: pd.DataFrame, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """The table itself if n equals its length, else n rows drawn with replacement."""
    if n < 0:
        raise DataError(f"cannot sample {n} rows; n must be >= 0")
    if n == len(table):
        return table.copy()
    return table.iloc[rng.integers(0, len(table), size=n)].reset_index(drop=True)


class IdentityGenerator(_Untuned):
    """Returns its training table: in order when n equals its length, else resampled
    with replacement. Not private at all (eps = infinity)."""

    name = "identity"
    description = "debug: releases the training data (leaks everything)"
    allow_nan = True

    def _fit(self, data: pd.DataFrame, *, epsilon: float, delta: float | None, seed: int,
             columns: tuple[ColumnMeta, ...] | None, observer: Observer | None) -> None:
        self.data_ = data.reset_index(drop=True).copy()
        self.seed_ = seed
        self.summary_ = {"iterations": 0, "eps_hat": float("nan")}

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        return _rows(self.data_, n, _rng(self.seed_, _SAMPLE, seed))


class IndependentGenerator(_Untuned):
    """Samples every column independently without reading a single record (0-DP).

    A column whose :class:`ColumnMeta` has PUBLIC bounds is drawn from them by its
    kind: binary/categorical uniformly over its categories (``{lower, upper}`` for
    a binary column without categories), integer uniformly over the integers in
    ``[lower, upper]``, continuous uniformly on ``[lower, upper]``. Every other
    column, including those whose bounds were read off the data (using them would
    leak the records' range), is uniform on [0, 1], rounded if its dtype is an
    integer one. Only the schema (column names and dtypes) is read from ``data``.
    """

    name = "independent"
    description = "debug: samples columns independently from public bounds (eps = 0)"
    allow_nan = True

    def _fit(self, data: pd.DataFrame, *, epsilon: float, delta: float | None, seed: int,
             columns: tuple[ColumnMeta, ...] | None, observer: Observer | None) -> None:
        meta = {c.name: c for c in columns or ()}
        self.columns_ = list(data.columns)
        self.dtypes_ = data.dtypes.copy()
        # Keep public metadata only; data bounds are forgotten here so sample() cannot use them.
        self.meta_ = {name: m for name in self.columns_
                      if (m := meta.get(str(name))) is not None and m.bounds == "public"}
        self.seed_ = seed
        self.summary_ = {"iterations": 0, "eps_hat": float("nan")}

    def _column(self, name, n: int, rng: np.random.Generator) -> np.ndarray:
        m = self.meta_.get(name)
        integral = pd.api.types.is_integer_dtype(self.dtypes_[name]) or \
            pd.api.types.is_bool_dtype(self.dtypes_[name])
        if m is None:
            u = rng.random(n)
            return np.rint(u) if integral else u
        if m.kind in ("binary", "categorical"):
            cats = np.asarray(m.categories or (m.lower, m.upper), dtype=float)
            return rng.choice(np.unique(cats), size=n)
        if m.kind == "integer":
            return rng.integers(math.ceil(m.lower), math.floor(m.upper) + 1, size=n).astype(float)
        return rng.uniform(m.lower, m.upper, size=n)

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        if n < 0:
            raise DataError(f"cannot sample {n} rows; n must be >= 0")
        rng = _rng(self.seed_, _SAMPLE, seed)
        out = pd.DataFrame({c: self._column(c, n, rng) for c in self.columns_})
        for c in self.columns_:
            dtype = self.dtypes_[c]
            if pd.api.types.is_integer_dtype(dtype) or pd.api.types.is_bool_dtype(dtype):
                out[c] = np.rint(out[c]).astype(dtype)
        return out


class RandomizedResponseGenerator(_Untuned):
    """Randomized response on 0/1 tables, with a known eps.

    Every value of every training row is kept with probability
    ``e^(eps/d) / (1 + e^(eps/d))`` and flipped otherwise, independently, where d
    is the number of columns: each value is (eps/d)-DP, so by basic composition a
    whole row is eps-DP, and since each output row depends on its input row only,
    the released table is eps-DP for neighbours that differ in one row's values
    (replace-one). ``sample(n)`` returns the perturbed table (resampled with
    replacement if n differs from its length), which is post-processing.

    Caveat for add/remove games: the output has one row per training row, so it
    reveals the training-set size; an audit whose worlds differ in size and whose
    features see the row count (a mean over 4 vs 5 rows) can exceed eps. Compare
    worlds of equal size (replace the target by another record) to check
    eps_emp <= eps. Every column must hold only 0 and 1 (a column released
    unperturbed would void the guarantee), so a table with any other value is
    refused. ``eps_hat`` in the summary is the exact eps; delta is not used.
    """

    name = "randomized-response"
    description = "debug: per-row randomized response on 0/1 columns (eps-DP, known eps)"
    default_delta = None
    capabilities = Capabilities(releases=("randomized-response",))

    def _fit(self, data: pd.DataFrame, *, epsilon: float, delta: float | None, seed: int,
             columns: tuple[ColumnMeta, ...] | None, observer: Observer | None) -> None:
        x = data.to_numpy(dtype=float)
        bad = [str(c) for c, ok in zip(data.columns, np.isin(x, (0.0, 1.0)).all(axis=0))
               if not ok]
        if bad:
            raise DataError(f"randomized-response takes 0/1 columns only; columns {bad[:5]} "
                            "hold other values (binarise them first)")
        d = x.shape[1]
        eps_col = epsilon / d
        p_keep = math.exp(eps_col) / (1.0 + math.exp(eps_col))
        rng = _rng(seed, _FIT)
        flip = rng.random(x.shape) >= p_keep
        out = np.where(flip, 1.0 - x, x)
        self.data_ = pd.DataFrame(out, columns=data.columns).astype(data.dtypes.to_dict())
        self.seed_ = seed
        self.summary_ = {"iterations": 0, "eps_hat": float(epsilon), "eps_per_column": eps_col,
                         "p_keep": p_keep}

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        return _rows(self.data_, n, _rng(self.seed_, _SAMPLE, seed))
