"""Does `fixed` get the SIGN of breast-cancer's label-feature link right? (docs/learning.md,
"Breast-cancer: the sign of the link against the vote budget").

On breast-cancer a fit's AUROC sits near 0 or near 1: the generator learns a strong
label-feature relation whose sign is close to a coin per fit. What the votes can add there is
about one bit, the sign. This script reads ``raudit utility --control coin --out DIR`` folders
and prints, per setting (eps and options; the folders of one setting at several ``--seed``
values pooled, fits paired by seed), what the vote budget allows beside what the fits did:

* k, the answers Q = iterations x student_steps x query_batch, and sigma of ``fixed``'s plan
  (the DP bounds' histogram included, :func:`raudit.generators.pategan.fixed.generator.plan`: data-
  independent, so computed here from the schema, not read off a fit);
* P(unanimous) = Phi(k / (sqrt 2 sigma)): the chance that a vote on which all k teachers
  agree is released as their label (GNMax, two classes);
* the informative-answer budget at eps (:func:`~raudit.accountants.vote_budget.
  informative_answers`: answers at sigma <= k / 2), for eps < 1e4;
* per fit, the real arm's and the coin control's AUROC (fits paired by seed), how many of
  each are above 0.5 (the sign right), their means and the paired one-sided t
  (:func:`raudit.utility.learning.paired_one_sided`).

    python lab/probes/fixed_sign_screen.py runs/screen/*          # folders of utility runs
    python lab/probes/fixed_sign_screen.py --shapes teachers=91,iterations=300,query_batch=4 \\
        --epsilon 10                                                # the plan only, no runs

Options strings are ``fixed``'s ``-o`` options, comma-separated. No run, no test: a table.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

import numpy as np
from scipy.special import ndtr

from raudit import data
from raudit.accountants.vote_budget import informative_answers
from raudit.errors import ConfigError
from raudit.generators import get
from raudit.generators.kwargs import parse_value
from raudit.generators.labelled import public_label
from raudit.generators.pategan.core.dp_bounds import private_columns
from raudit.generators.pategan.fixed.generator import plan
from raudit.generators.pategan.fixed.sign import plan_sign
from raudit.utility.learning import paired_one_sided, seed_means

DELTA = 1e-5


def shape(dataset: str, eps: float, options: dict, delta: float = DELTA) -> dict:
    """k, Q, sigma, P(unanimous) and the informative budget of ``fixed`` with ``options``."""
    ds = data.load(dataset)
    gen = get("fixed")(**options)
    k, _, _ = gen.resolve(len(ds.train), ds.train.shape[1])
    cols = public_label([ds.train], ds.columns)
    n_dp = len(private_columns(list(ds.train.columns), cols))
    q = gen.queries()
    o = gen.options
    if o["sign_query"] == "on":  # the training votes pay for the sign answer too
        _, sigma, _ = plan_sign(float(eps), float(delta), q, n_dp, o["bounds_share"],
                                o["sign_share"])
    else:
        _, sigma = plan(float(eps), float(delta), q, n_dp, o["bounds_share"])
    budget = informative_answers(eps, delta, k) if eps < 1e4 else None
    return {"k": k, "rows": len(ds.train) // k, "Q": q, "sigma": sigma,
            "p_unanimous": float(ndtr(k / (math.sqrt(2.0) * sigma))), "budget": budget}


def _opts(text: str) -> dict:
    return {k: parse_value(v) for k, v in (a.split("=", 1) for a in text.split(",") if a)}


def _screen(folders: list[str]) -> None:
    """One row per setting (eps, options, dataset): the folders' fits of one setting pooled
    (runs at several --seed values pair by fit seed, as in lab/probes/pooled_test.py)."""
    import pandas as pd  # noqa: PLC0415 (pandas/pyarrow only when folders are read)

    from raudit.report.load import load  # noqa: PLC0415
    frames = []
    for folder in folders:
        try:
            frames.append(load(folder).table("utility"))
        except ConfigError as exc:  # a run still going: say so and read the others
            print(f"({folder}: {exc})", file=sys.stderr)
    if not frames:
        raise ConfigError("no finished utility folder among those given")
    rows = pd.concat(frames, ignore_index=True)
    print("| eps | options | k (rows) | Q | sigma | P(unanimous) | budget | real > 0.5 | "
          "control > 0.5 | real mean | control mean | diff ± se | p |")
    print("|---" * 13 + "|")
    per_fit = []
    syn = rows[rows["impl"] == "fixed"]
    for (eps, oj, dataset), g in syn.groupby(["epsilon", "options_json", "dataset"]):
        real = seed_means(g[g["control"].isna()])
        ctrl = seed_means(g[g["control"] == "coin"])
        both = sorted(set(real) & set(ctrl))
        if len(both) < 2:
            continue
        options = json.loads(oj)
        s = shape(dataset, eps, options)
        t = paired_one_sided(real, ctrl)
        r, c = np.array([real[x] for x in both]), np.array([ctrl[x] for x in both])
        short = ",".join(f"{k}={v}" for k, v in options.items()
                         if not k.startswith("bounds") and k not in ("max_iter", "preset"))
        budget = "-" if s["budget"] is None else f"{s['budget']:,}"
        print(f"| {eps:g} | {short} | {s['k']} ({s['rows']}) | {s['Q']:,} | {s['sigma']:.3g} | "
              f"{s['p_unanimous']:.3f} | {budget} | {int((r > 0.5).sum())}/{len(r)} | "
              f"{int((c > 0.5).sum())}/{len(c)} | {r.mean():.3f} | {c.mean():.3f} | "
              f"{t.diff:+.3f} ± {t.se:.3f} | {t.p:.3g} |")
        per_fit.append(f"eps={eps:g} {short}: real {np.round(r, 3).tolist()} "
                       f"control {np.round(c, 3).tolist()}")
    print()
    print("\n".join(per_fit))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="*", help="raudit utility --out folders")
    ap.add_argument("--shapes", nargs="+", help="fixed options, comma-separated: print the plan")
    ap.add_argument("--epsilon", type=float, nargs="+", default=[10.0])
    ap.add_argument("--dataset", default="breast-cancer")
    a = ap.parse_args(argv)
    try:
        if a.shapes:
            print("| eps | options | k (rows) | Q | sigma | P(unanimous) | informative budget |")
            print("|---" * 7 + "|")
            for text in a.shapes:
                for eps in a.epsilon:
                    s = shape(a.dataset, eps, _opts(text))
                    budget = "-" if s["budget"] is None else f"{s['budget']:,}"
                    print(f"| {eps:g} | {text} | {s['k']} ({s['rows']}) | {s['Q']:,} | "
                          f"{s['sigma']:.3g} | {s['p_unanimous']:.3f} | {budget} |")
        if a.folders:
            _screen(a.folders)
        if not (a.shapes or a.folders):
            raise ConfigError("give utility folders or --shapes")
    except ConfigError as exc:

        print(f"fixed_sign_screen: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
