"""Metadata taken from the records, detected black-box.

Bounds: the probe declares public bounds for every column (the training table's own
range, so that nothing else changes), adds ONE record far beyond them, trains, and
looks at the output. A generator that uses the public bounds clips the record and
stays inside them; one that reads its bounds off the records stretches its output
range to the new record.

Labels: a generator that hands back the real label distribution (the conditional
`original`) reproduces the training label counts exactly, in every sample.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from raudit.data.dataset import ColumnMeta
from raudit.inspect.cells import Cell, cell
from raudit.inspect.context import Context

__all__ = ["bounds_probe_table", "check_labels", "check_metadata"]

#: the extra record sits this many column ranges above the column's maximum
EXTREME = 10.0
#: share of output rows beyond the public bounds that shows the record was followed
BEYOND = 0.01


def bounds_probe_table(train: pd.DataFrame, columns) -> tuple[pd.DataFrame, tuple[ColumnMeta, ...], list[str]]:
    """(table with one extreme record added, columns declaring public bounds, probed names).

    Probed: feature columns with more than two values (the label and binary columns are
    left alone, so the label balance does not move)."""
    by_name = {c.name: c for c in columns or ()}
    probed = [c for c in train.columns[:-1] if train[c].nunique() > 2]
    meta = []
    for name in train.columns:
        lo, hi = float(train[name].min()), float(train[name].max())
        kind = by_name[name].kind if name in by_name else "continuous"
        cats = by_name[name].categories if name in by_name else ()
        base = by_name.get(name) or ColumnMeta(name, kind, lo, hi)
        meta.append(dataclasses.replace(base, lower=lo, upper=hi, bounds="public", categories=cats))
    extra = train.iloc[[0]].copy()
    for name in probed:
        lo, hi = float(train[name].min()), float(train[name].max())
        value = hi + EXTREME * max(hi - lo, 1.0)
        extra[name] = np.rint(value) if np.all(np.mod(train[name], 1) == 0) else value
    table = pd.concat([train, extra], ignore_index=True).astype(train.dtypes.to_dict())
    table.attrs = dict(train.attrs)
    return table, tuple(meta), probed


def check_metadata(ctx: Context) -> Cell:
    """Violated when the output follows one record beyond the declared public bounds."""
    pb, cols = ctx.public_bounds
    note = (f"; the dataset itself declares public bounds for {pb} of {cols} columns: on it the "
            f"other {cols - pb} columns' bounds come from the records for any generator")
    probe = ctx.bounds_probe
    if probe is None or probe.skipped:
        return Cell("metadata", "not_checked",
                    f"bounds probe not run ({probe.skipped if probe else 'no probe'})" + note)
    probed = probe.info["probed"]
    if not probed:
        return Cell("metadata", "not_checked", "no feature column with more than two values to probe" + note)
    synth = pd.concat(probe.synthetic, ignore_index=True)
    worst, worst_frac, worst_max = None, -1.0, 0.0
    for name in probed:
        hi, lo = float(ctx.train[name].max()), float(ctx.train[name].min())
        tol = 1e-6 * max(hi - lo, 1.0)
        frac = float(np.mean(synth[name].to_numpy(dtype=np.float64) > hi + tol))
        if frac > worst_frac:
            worst, worst_frac, worst_max = name, frac, float(synth[name].max())
    n_beyond = 0
    copied = []
    for c in probed:
        top = float(ctx.train[c].max())
        y = synth[c].to_numpy(dtype=np.float64)
        rec_c = float(probe.data[c].iloc[-1])
        n_beyond += float(np.mean(y > top + 1e-6 * max(float(np.ptp(ctx.train[c])), 1.0))) > BEYOND
        if np.any(np.abs(y - rec_c) <= 1e-6 * max(abs(rec_c), 1.0)):
            copied.append(c)
    hi = float(ctx.train[worst].max())
    rec = float(probe.data[worst].iloc[-1])
    ev = (f"public bounds declared for all columns, one record added beyond them in {len(probed)} "
          f"columns: in {n_beyond} of them more than {BEYOND:.0%} of output rows leave the public "
          f"bounds (worst {worst!r}: public max {hi:g}, record {rec:g}, output max {worst_max:g}, "
          f"{worst_frac:.0%} of rows beyond)")
    if copied:
        ev += f"; the record's own value appears in the output in {len(copied)} columns"
    return cell("metadata", n_beyond > 0 or bool(copied), ev + note)


def check_labels(ctx: Context) -> Cell:
    """Violated when every sample reproduces the training label counts exactly."""
    if not ctx.synthetic:
        return Cell("labels_distribution", "not_checked", "no synthetic sample")
    label = ctx.train.columns[-1]
    real = ctx.train[label].value_counts().sort_index()
    counts = [s[label].value_counts().sort_index() for s in ctx.synthetic]
    same = all(c.shape == real.shape and np.array_equal(c.index, real.index) and
               np.array_equal(c.to_numpy(), real.to_numpy()) for c in counts)
    show = "; ".join(", ".join(f"{i:g}: {n}" for i, n in c.items()) for c in counts)
    return cell("labels_distribution", same,
                f"training label counts {', '.join(f'{i:g}: {n}' for i, n in real.items())}; "
                f"{len(counts)} samples of {len(ctx.train)} rows: [{show}]"
                + ("; identical in every sample: the real label distribution is released"
                   if same else ""))
