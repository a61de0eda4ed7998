"""Does `fixed`'s student -> generator chain follow the votes when the votes are right?
(docs/learning.md, "Epileptic: the exact votes first").

A toy table: 2,000 rows, 20 features drawn N(LOC, 0.02) in public bounds [0, 1], a coin
label. ``oracle=BW`` replaces the teachers' votes by a known function of the fake row:
n1 = round(k * exp(-mean((x - LOC)^2) / (2 BW^2))), graded by the distance to the data
(``oracle=none`` keeps the trained teachers). The teachers still train (their votes are
just not read); nothing here is private or a test: a diagnostic of the training chain.
Prints the generated rows' mean and per-feature sd in the encoding (data: LOC, 0.02).

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/fixed_oracle_votes.py \\
        0.7 oracle=1.0 iterations=300 teachers=20 lr=1e-3 teacher_steps=1 output_offset=0.5
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import torch

from raudit import generators
from raudit.generators.kwargs import parse_value
from raudit.data.dataset import ColumnMeta
from raudit.generators.pategan.core import teachers as teachers_module

ROWS, FEATURES, SD = 2000, 20, 0.02


def oracle(loc: float, bw: float):
    def votes(self, fake: torch.Tensor) -> torch.Tensor:
        dist = ((fake[..., :-1] - loc) ** 2).mean(-1)  # the label (last column) left out
        return torch.round(self.k * torch.exp(-dist / (2 * bw ** 2))).long()
    return votes


def main() -> int:
    torch.set_num_threads(1)
    loc = float(sys.argv[1])
    opts = {k: parse_value(v) for k, v in (a.split("=", 1) for a in sys.argv[2:])}
    bw = opts.pop("oracle", "none")
    if bw != "none":
        teachers_module.LocalTeachers.votes = oracle(loc, float(bw))
    r = np.random.default_rng(0)
    df = pd.DataFrame(np.clip(r.normal(loc, SD, (ROWS, FEATURES)), 0, 1),
                      columns=[f"x{i}" for i in range(FEATURES)])
    df["y"] = r.integers(0, 2, ROWS)
    cols = tuple(ColumnMeta(c, "continuous", 0.0, 1.0, "public") for c in df.columns[:-1])
    m = generators.get("fixed")(**opts).fit_many([df], epsilon=1e6, delta=1e-5, seeds=[1],
                                                  columns=cols)[0]
    x = m._batch.sample_encoded([m._index], ROWS, [100]).cpu().numpy()[0][:, :-1]
    print(f"loc={loc} oracle={bw} {opts}: generated mean {x.mean():.3f} sd {x.std(0).mean():.3f} "
          f"(data {loc}, {SD})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
