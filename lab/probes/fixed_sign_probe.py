"""Why a `fixed -o sign_query=on` fit got its sign wrong, fit by fit (docs/learning.md,
"Breast-cancer: a one-bit sign query").

Reads one ``raudit utility --out DIR`` folder of a sign-query run, retrains its real arm's
models with the same model seeds (one batched call, the same code path as the run: the same
bits), and prints per fit: the run's Setting B AUROC (LR), the released flip, the AUROC the
generator had before it (LR on labels flipped ranks the other way: 1 - AUROC), and for EVERY
rule of :mod:`raudit.generators.pategan.fixed.sign` the teachers' votes (as is, flipped) on
the same generator and what the rule says with ALL training rows as one teacher (``whole``,
+1 as is, -1 flipped). A wrong sign with a confident vote and ``whole`` agreeing is the rule's
notion of the sign disagreeing with the classifier's; a split vote is the partition's. The
last line counts, per rule, the fits whose noiseless majority picks the sign LR rewards (a
counterfactual for the rules the run did not use: the answer's noise left out).

    python lab/probes/fixed_sign_probe.py runs/sgn/k45-mean-s100

Dev-seed diagnosis only: no test reads it.
"""

from __future__ import annotations

import glob
import json
import sys

import pandas as pd
import torch

from raudit import data
from raudit.generators import get
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.fixed import sign as fixed_sign


def main(folder: str) -> None:
    spec = json.load(open(f"{folder}/raudit.json"))["spec"]
    rows = pd.concat(pd.read_parquet(f) for f in glob.glob(f"{folder}/utility/*.parquet"))
    rows = rows[(rows.setting == "B") & (rows.metric == "auroc") & rows.control.isna()]
    rows = rows.sort_values("fit_index")
    ds = data.load(spec["dataset"])
    gen = get("fixed")(**spec["options"])
    seeds = [int(s) for s in rows.seed]
    seen = {}
    inner = fixed_sign.run

    def watch(trained, batch, partition, **kw):  # every rule's votes on the same generator
        rng = CounterRNG(batch.seeds, purpose="fixed-sign-sample", device=batch.x.device,
                         dtype=batch.x.dtype)
        with torch.no_grad():
            synth = trained.sample_fn(trained.generator, rng, gen.options["sign_rows"])
            n = batch.rows.view(-1, 1, 1)
            whole = (torch.arange(batch.x.shape[1])[None, None, :].expand(batch.models, 1, -1),
                     n.view(-1, 1))
            for rule in fixed_sign.RULES:
                seen[rule] = fixed_sign.teacher_votes(batch.x, *partition, synth, rule)
                seen[rule + "-whole"] = fixed_sign.teacher_votes(batch.x, *whole, synth, rule)
        return inner(trained, batch, partition, **kw)
    fixed_sign.run = watch
    models = gen.fit_many([ds.train] * len(seeds), epsilon=float(spec["epsilons"][0]),
                          seeds=seeds, columns=ds.columns)
    fixed_sign.run = inner
    right = {r: 0 for r in fixed_sign.RULES}
    head = " | ".join(f"{r} votes | {r} whole" for r in fixed_sign.RULES)
    print(f"| fit | AUROC B | flip | AUROC as is | {head} |")
    print("|---" * (4 + 2 * len(fixed_sign.RULES)) + "|")
    for j, ((_, r), m) in enumerate(zip(rows.iterrows(), models)):
        flip = m.summary()["sign_flip"]
        a0 = 1.0 - r.value if flip else r.value  # LR on flipped labels: the scores reversed
        cells = []
        for rule in fixed_sign.RULES:
            v, w = seen[rule][j], seen[rule + "-whole"][j]
            right[rule] += (a0 > 0.5) == (v[0] > v[1])  # its noiseless majority
            cells.append(f"{tuple(int(c) for c in v)} | {int(w[0]) - int(w[1]):+d}")
        print(f"| {int(r.fit_index)} | {r.value:.3f} | {flip} | {a0:.3f} | {' | '.join(cells)} |")
    print(f"\nright sign by each rule's noiseless majority (of {len(rows)}): {right}")


if __name__ == "__main__":
    main(sys.argv[1])
