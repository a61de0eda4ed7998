"""Processing: is the output in the input's schema, scale and number types?

Black-box: the synthetic samples against the training table, column by column. A
generator that declares its output range (public or DP bounds: ``fixed``, ``dpgan``) is
held to that range instead of the records': a DP generator cannot know the records'
exact extremes, and reaching its DP bound is the design, not a processing bug. A
generator without such a claim is held to the records' range.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from raudit.inspect.cells import Cell, cell
from raudit.inspect.context import Context

__all__ = ["check_processing", "column_report"]

#: share of output values allowed outside the input's range or type
TOLERANCE = 0.01


def column_report(real: pd.Series, synth: pd.Series,
                  declared: tuple[float, float] | None = None) -> dict:
    """Out-of-range share (against ``declared`` bounds when given, else the records'
    range), non-integer share (for an integer-valued input), ranges."""
    x = real.to_numpy(dtype=np.float64)
    y = synth.to_numpy(dtype=np.float64)
    lo, hi = (float(x.min()), float(x.max())) if declared is None else map(float, declared)
    tol = 1e-6 * max(hi - lo, 1.0)
    outside = float(np.mean((y < lo - tol) | (y > hi + tol) | ~np.isfinite(y)))
    integer = bool(np.all(np.mod(x, 1) == 0))
    frac = float(np.mean(np.abs(y - np.rint(y)) > 1e-9)) if integer else 0.0
    return {"lo": lo, "hi": hi, "out_lo": float(np.nanmin(y)), "out_hi": float(np.nanmax(y)),
            "outside": outside, "integer": integer, "non_integer": frac}


def check_processing(ctx: Context) -> Cell:
    """Violated when output columns leave their range (declared, else the records') or
    the input's integer type."""
    if not ctx.synthetic:
        return Cell("processing", "not_checked", "no synthetic sample")
    synth = pd.concat(ctx.synthetic, ignore_index=True)
    if list(synth.columns) != list(ctx.train.columns):
        return cell("processing", True, f"output columns {list(synth.columns)[:5]}... differ from "
                    f"the input's {list(ctx.train.columns)[:5]}...")
    declared = ctx.output_bounds or {}
    reps = {c: column_report(ctx.train[c], synth[c], declared.get(c)) for c in ctx.train.columns}
    bad_range = [c for c, r in reps.items() if r["outside"] > TOLERANCE]
    bad_int = [c for c, r in reps.items() if r["non_integer"] > TOLERANCE]
    ev = (f"{len(reps)} columns, {len(synth)} output rows: {len(bad_range)} columns with more "
          f"than {TOLERANCE:.0%} of values outside the input range, {len(bad_int)} integer "
          f"columns with non-integer output")
    if declared:
        ev += f" (ranges: the generator's declared public/DP bounds for {len(declared)} columns)"
    if bad_range:
        c = max(bad_range, key=lambda n: reps[n]["outside"])
        r = reps[c]
        src = "declared" if c in declared else "input"
        ev += (f" (worst {c!r}: {src} [{r['lo']:g}, {r['hi']:g}], output [{r['out_lo']:.4g}, "
               f"{r['out_hi']:.4g}], {r['outside']:.0%} outside)")
    if bad_int:
        c = bad_int[0]
        ev += f" (e.g. {c!r}: {reps[c]['non_integer']:.0%} non-integer)"
    label = ctx.train.columns[-1]
    real_rate = float(ctx.train[label].mean())
    out_rate = float(synth[label].mean())
    ev += f"; label mean {out_rate:.3f} in the output vs {real_rate:.3f} in the input"
    return cell("processing", bool(bad_range or bad_int), ev)
