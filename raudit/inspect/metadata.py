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
#: how far (share of the way from the public max to the record) the output must reach
#: to show it follows the record
REACH = 0.25


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
    """Violated when the output follows one record beyond the declared public bounds: in
    some column the output reaches more than REACH of the way from the public maximum to
    the record (a generator whose decoding overshoots its bounds by a little, e.g. a
    scaling bug, does not count: that is processing)."""
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
    reach = {}
    for c in probed:
        top, rec = float(ctx.train[c].max()), float(probe.data[c].iloc[-1])
        reach[c] = (float(synth[c].max()) - top) / (rec - top)
    followed = [c for c, r in reach.items() if r > REACH]
    worst = max(reach, key=reach.get)
    ev = (f"public bounds declared for all columns, one record added beyond them in {len(probed)} "
          f"columns: the output follows it (reaches more than {REACH:.0%} of the way from the "
          f"public max to the record) in {len(followed)} of them (worst {worst!r}: public max "
          f"{float(ctx.train[worst].max()):g}, record {float(probe.data[worst].iloc[-1]):g}, output "
          f"max {float(synth[worst].max()):g}, {reach[worst]:.0%} of the way)")
    return cell("metadata", bool(followed), ev + note)


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
