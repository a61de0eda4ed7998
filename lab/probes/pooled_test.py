"""Blocks of utility fits pooled: real vs its control, or one setting against another.

``raudit utility --control coin`` tests one run (one root seed) of F fits. To reach the
fits a small gap needs, docs/learning.md runs a setting in blocks of 10 fits at several
``--seed`` values and tests the blocks together; this script is that pooled test, the
paired one-sided t of :mod:`raudit.utility.learning` over the fits of every folder given,
paired by fit seed (a fit's seed depends on its root seed and index only, so it is the
same fit in the real arm, its control and any other setting at the same root):

    python lab/probes/pooled_test.py runs/cv-s0 runs/cv-s1             # real vs control
    python lab/probes/pooled_test.py runs/fixed-learns --jobs 'cervical-eps10-q2000-seed[01]'
    python lab/probes/pooled_test.py runs/soft-s0 runs/soft-s1 --against runs/cv-s0 runs/cv-s1

Folders are any --out of ``raudit utility`` or ``raudit campaign`` (``--jobs`` keeps the
campaign jobs whose name matches the glob). Without ``--against``: one line per setting
(:func:`~raudit.utility.learning.pooled_controls`). With it: the real arm of the first
folders minus the real arm of the ``--against`` folders (one setting on each side; their
coin control with ``--against-control``), over the fit seeds both have.
"""

from __future__ import annotations

import argparse
import fnmatch
import sys

import numpy as np
import pandas as pd

from raudit.errors import ConfigError
from raudit.report.load import load
from raudit.utility.learning import paired_one_sided, pooled_controls, seed_means


def rows_of(folders: list[str], jobs: str | None) -> pd.DataFrame:
    frames = [load(f).table("utility") for f in folders]
    rows = pd.concat([f for f in frames if not f.empty], ignore_index=True) if frames else None
    if rows is None or rows.empty:
        raise ConfigError(f"no utility rows in {', '.join(folders)}")
    if jobs is not None:
        rows = rows[rows["job"].map(lambda j: j is not None and fnmatch.fnmatch(str(j), jobs))]
        if rows.empty:
            raise ConfigError(f"no campaign job matches {jobs!r}")
    return rows


def arm(rows: pd.DataFrame, side: str, control: bool = False) -> dict[int, float]:
    """Per fit seed, the real arm (or the control, of any kind) of the one setting in ``rows``."""
    sel = rows[(rows["impl"] != "real")
               & (rows["control"].notna() if control else rows["control"].isna())]
    settings = sel.drop_duplicates(["epsilon", "options_json", "impl", "dataset", "control"])
    if len(settings) != 1:
        raise ConfigError(f"{side}: {len(settings)} settings in the {'control' if control else 'real'}"
                          " arm; give folders of one")
    return seed_means(sel)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+")
    ap.add_argument("--against", nargs="+", help="folders of the setting to subtract")
    ap.add_argument("--against-control", action="store_true",
                    help="subtract the --against folders' control, not their real arm "
                         "(a setting whose control is another setting's)")
    ap.add_argument("--jobs", help="keep campaign jobs whose name matches this glob")
    a = ap.parse_args(argv)
    try:
        rows = rows_of(a.folders, a.jobs)
        if a.against:
            x = arm(rows, "folders")
            y = arm(rows_of(a.against, a.jobs), "--against", control=a.against_control)
            both = sorted(set(x) & set(y))
            if len(both) < 2:
                raise ConfigError(f"{len(both)} fit seeds in both sides: run them at the same "
                                  "--seed values and fit counts")
            t = paired_one_sided(x, y)
            print(f"fits {t.n}: {np.mean([x[s] for s in both]):.4f} vs "
                  f"{np.mean([y[s] for s in both]):.4f}, diff {t.diff:+.4f} ± {t.se:.4f}, "
                  f"p (one-sided) = {t.p:.4g}")
            return 0
        for r in pooled_controls(rows):
            if not r["fits"]:  # every fit refused (no step at this eps) or failed
                print(f"{r['impl']} {r['dataset']} eps={r['epsilon']:g} {r['options_json']}: "
                      f"{r['runs']} runs, no fitted pair (the point was refused or failed)")
                continue
            print(f"{r['impl']} {r['dataset']} eps={r['epsilon']:g} {r['options_json']}: "
                  f"{r['runs']} runs, fits {r['fits']}: real {r['real_mean']:.4f} {r['control']} "
                  f"{r['control_mean']:.4f}, diff {r['diff']:+.4f} ± {r['se']:.4f}, "
                  f"p (one-sided) = {r['p']:.4g}" + (" (eps_hat above eps)" if r["over_eps"] else ""))
    except ConfigError as exc:
        print(f"pooled_test: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
