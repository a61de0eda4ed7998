"""DP column bounds for ``fixed``: what the ports read off the records, paid for here.

Every port scales its table with min/max read off the training records, so one
record that holds a column's extreme (cervical row 407) moves the whole synthetic
table. ``fixed`` takes bounds from the column metadata when they are public and
otherwise estimates them with a Gaussian noisy histogram, charged to the same
dp_accounting RDP accountant as the training votes (the noise levels:
:mod:`.noise_calibration`).

The histogram (per non-public column): bins on a signed log2 scale, [0, 1),
[2^j, 2^(j+1)) for j = 0..R-1 and their mirror images below 0; values beyond
+-2^R fall in the outermost bins. Adding or removing one record changes one bin of
every column by 1, so the joint histogram of c columns has L2 sensitivity sqrt(c);
N(0, sigma^2) is added to every bin, sigma = z * sqrt(c) with noise multiplier z
(one :class:`~raudit.events.GaussianStep`). The bounds grow outwards from the
bin of the largest noisy count over neighbouring bins whose noisy count exceeds
``3 sigma``, stepping over at most one failing bin; they are the outer edges of that
run. Growing from the mode matters: with 42 bins per column an empty bin somewhere
passes a fixed threshold in a few percent of tables, and taking the outermost passing
bin then stretched a column to +-2^13 (measured on cervical before this rule). An
empty bin next to the run passes with probability 1.3e-3 and widens it by one bin.
Everything after the noise is post-processing, so the bounds are as private as the
histogram. Records outside the bounds are clamped (the clipping DP needs).

Binary columns (kind ``binary`` with 0/1 categories, as the schema declares them, like
the integer kinds) take [0, 1] without spending budget: the domain, not a statistic.
Kinds inferred from the dtype are schema by assumption: a column whose kind hangs on one
record (the only 2 in an otherwise 0/1 column) would move the schema with that record.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from raudit.data.dataset import ColumnMeta
from raudit.generators.batch_types import Encoder
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.noise_calibration import bounds_noise

__all__ = ["DPBoundsEncoder", "DPBoundsFitting", "bin_edges", "noisy_bounds",
           "private_columns", "schema_bounded", "trim"]

RANGE_BITS = 20  # bins cover |x| < 2^20; larger values land in the outermost bins
THRESHOLD_SIGMAS = 3.0
MAX_GAP = 1  # failing bins the run may step over (a count column with no 1s still reaches 2-4)


def bin_edges() -> np.ndarray:
    """Edges of the 2R + 2 bins, ascending: -2^R .. -1, 0, 1, 2 .. 2^R."""
    pos = 2.0 ** np.arange(0, RANGE_BITS + 1)
    return np.concatenate([-pos[::-1], [0.0], pos])


def noisy_bounds(values: np.ndarray, noise: np.ndarray, sigma: float, mass: float = 1.0,
                 centred: bool = False, within_run: bool = False) -> tuple[float, float]:
    """Bounds of one column from its histogram plus ``noise`` (one N(0, sigma^2) per bin).

    ``mass`` < 1 and ``centred``: :func:`trim` (``fixed -o bounds_mass``, ``bounds_centre``)
    over the passing bins, or with ``within_run`` (``bounds_keep=run``) over those of the run
    from the mode only. Why the run: on a small table a spurious passing bin far out holds
    ~3 sigma, a share of N larger than (1 - mass) / 2, and the quantile then lands in it
    (cervical, N = 686, eps 5: 18 of 40 seeds had a column bounded to +-2^9 .. +-2^19)."""
    edges = bin_edges()
    idx = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
    hist = np.bincount(idx, minlength=len(edges) - 1).astype(float) + noise
    passing = hist > THRESHOLD_SIGMAS * sigma
    mode = int(np.argmax(hist))
    lo, hi = _reach(passing, mode, -1), _reach(passing, mode, 1)
    if mass < 1.0 or centred:
        keep = passing | (np.arange(len(hist)) == mode)
        if within_run:
            keep &= (np.arange(len(hist)) >= lo) & (np.arange(len(hist)) <= hi)
        return trim(hist, keep, mass, centred)
    return float(edges[lo]), float(edges[hi + 1])


def trim(hist: np.ndarray, keep: np.ndarray, mass: float, centred: bool) -> tuple[float, float]:
    """Bounds from the central ``mass`` of the noisy counts of the bins in ``keep`` (those
    above the threshold, and the mode).

    Why: the run from the mode reaches the outermost occupied bins, so on a heavy-tailed
    column (epileptic: 99 % of values within +-703, the run +-2048) the bulk of the data
    fills a few percent of the encoding. And the run breaks where the log-scale bins are
    narrow: a column centred near 0 with spread ~50 has 50-70 rows in each of [-2, -1) ..
    [1, 2), under the threshold at eps = 10 (3 sigma = 86 for 178 columns), so the run
    from a negative mode stops at -4 and 41 % of epileptic's values are clamped there.
    Quantiles over every passing bin step over such a dip. They are read off the same
    noisy counts, so this is post-processing: no extra privacy cost. The lower bound is
    the lower edge of the bin where the cumulative share of the kept counts reaches
    (1 - mass) / 2, the upper the upper edge of the bin where it reaches (1 + mass) / 2
    (a spurious passing bin, probability 1.3e-3 per empty bin, holds ~3 sigma: keep
    (1 - mass) / 2 well above 3 sigma / N). ``centred``: the bounds are then widened to be
    symmetric about the midpoint of the median's bin, so that a generator whose output
    starts at the encoding's centre (0.5) starts at the (binned) median."""
    edges = bin_edges()
    counts = np.where(keep, np.clip(hist, 0.0, None), 0.0)
    if counts.sum() <= 0:  # no positive count at all: the mode's bin
        m = int(np.argmax(hist))
        return float(edges[m]), float(edges[m + 1])
    cum = np.cumsum(counts) / counts.sum()
    last = len(counts) - 1
    lo = float(edges[min(int(np.searchsorted(cum, (1.0 - mass) / 2.0)), last)])
    hi = float(edges[min(int(np.searchsorted(cum, (1.0 + mass) / 2.0)), last) + 1])
    if centred:
        med = min(int(np.searchsorted(cum, 0.5)), last)
        c = 0.5 * (edges[med] + edges[med + 1])
        h = max(c - lo, hi - c)
        lo, hi = float(c - h), float(c + h)
    return lo, hi


def _reach(passing: np.ndarray, start: int, step: int) -> int:
    """The last passing bin reached from ``start`` in direction ``step`` (+-1), stepping
    over at most MAX_GAP failing bins at a time."""
    j = start
    while True:
        ahead = (j + step * g for g in range(1, MAX_GAP + 2))
        nxt = next((i for i in ahead if 0 <= i < len(passing) and passing[i]), None)
        if nxt is None:
            return j
        j = nxt


def schema_bounded(meta: ColumnMeta | None) -> bool:
    """Bounds known without reading a value: declared public, or a 0/1 binary column."""
    if meta is None:
        return False
    return meta.bounds == "public" or (meta.kind == "binary" and bool(meta.categories)
                                       and set(meta.categories) <= {0.0, 1.0})


def private_columns(names: list[str], columns: tuple[ColumnMeta, ...] | None) -> list[int]:
    """Indices of the columns without public bounds (they need DP bounds)."""
    meta = {c.name: c for c in columns} if columns else {}
    return [j for j, n in enumerate(names) if not schema_bounded(meta.get(n))]


@dataclass
class DPBoundsEncoder(Encoder):
    """Min-max to [0, 1] with public bounds, or DP bounds from a noisy histogram.

    ``noise_multiplier`` z of the histogram (None: no column needs DP bounds, and one
    that does is an error); ``seed`` the model's seed (the noise stream). Column kinds
    (integer or not) come from the metadata where given, else from the dtype: they are
    treated as schema, not as a statistic.
    """

    noise_multiplier: float | None = None
    seed: int = 0
    mass: float = 1.0  # central mass the bounds keep (:func:`trim`; 1: the whole run)
    centred: bool = False  # bounds symmetric about the noisy median's bin (:func:`trim`)
    within_run: bool = False  # trim only the bins of the run from the mode (:func:`noisy_bounds`)

    def fit(self, df: pd.DataFrame, columns: tuple[ColumnMeta, ...] | None) -> "DPBoundsEncoder":
        x = df.to_numpy(dtype=float)
        self.names, meta = list(df.columns), ({c.name: c for c in columns} if columns else {})
        self.lo, self.hi = np.zeros(x.shape[1]), np.ones(x.shape[1])
        self.integer = [meta[n].kind in ("integer", "binary") if n in meta
                        else pd.api.types.is_integer_dtype(df[n]) for n in self.names]
        private = private_columns(self.names, columns)
        for j, n in enumerate(self.names):
            if j not in private and meta[n].bounds == "public":
                self.lo[j], self.hi[j] = meta[n].lower, meta[n].upper  # else binary: [0, 1]
        self.dp_columns = private
        if private:
            if self.noise_multiplier is None:
                raise ValueError("columns without public bounds need a DP noise multiplier")
            sigma = self.noise_multiplier * np.sqrt(len(private))
            rng = CounterRNG([self.seed], purpose="fixed-bounds", dtype=torch.float64)
            noise = rng.normal(len(private), len(bin_edges()) - 1, std=sigma).cpu().numpy()[0]
            for i, j in enumerate(private):
                self.lo[j], self.hi[j] = noisy_bounds(x[:, j], noise[i], sigma, self.mass,
                                                      self.centred, self.within_run)
        return self

    def declared_bounds(self) -> dict[str, tuple[float, float]]:
        """Public, schema or DP bounds: post-processing of the histogram, safe to report."""
        return {n: (float(lo), float(hi)) for n, lo, hi in zip(self.names, self.lo, self.hi)}

    def _span(self) -> np.ndarray:
        span = self.hi - self.lo
        return np.where(span > 0, span, 1.0)

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        return np.clip((df.to_numpy(dtype=float) - self.lo) / self._span(), 0.0, 1.0)

    def inverse(self, x: np.ndarray) -> pd.DataFrame:
        y = np.clip(np.asarray(x, dtype=float), 0.0, 1.0) * self._span() + self.lo
        out = pd.DataFrame(y, columns=self.names)
        for j, n in enumerate(self.names):
            if self.integer[j]:
                out[n] = np.round(y[:, j]).astype(np.int64)
        return out


class DPBoundsFitting:
    """Mixin for a BatchedGenerator whose encoder takes DP bounds (``fixed``, ``dpgan``).

    The histogram's noise is fixed by the schema (how many columns lack public bounds)
    and the budget before any record is read; each model's noise stream is its seed's.
    """

    _z_bounds: float | None = None
    _n_dp = 0

    def encoder(self, seed: int) -> DPBoundsEncoder:
        o = self.options  # bounds_mass / _centre / _keep: ``fixed``'s options (dpgan has none)
        return DPBoundsEncoder(noise_multiplier=self._z_bounds, seed=seed,
                               mass=o.get("bounds_mass", 1.0), centred=o.get("bounds_centre", False),
                               within_run=o.get("bounds_keep", "all") == "run")

    def fit_many(self, tables, *, epsilon, delta=None, seeds, columns=None, observer=None,
                 progress=None, train_options=None):
        delta = self.default_delta if delta is None else delta
        if len(tables):
            cols = tuple(columns) if columns else None
            self._n_dp = len(private_columns(list(tables[0].columns), cols))
            if isinstance(epsilon, (int, float)) and epsilon > 0 and 0 < delta < 1:
                self._z_bounds = bounds_noise(float(epsilon), float(delta), self._n_dp,
                                              self.options["bounds_share"])
        return super().fit_many(tables, epsilon=epsilon, delta=delta, seeds=seeds,
                                columns=columns, observer=observer, progress=progress,
                                train_options=train_options)
