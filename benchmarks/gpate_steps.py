"""G-PATE on MNIST: seconds per training step against the number of teachers.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python benchmarks/gpate_steps.py 25 100 400

``config=image`` (batch 30 generated records, k_proj = 10, 300 queries per step) on the
56,000 MNIST training rows, one torch thread, eps 1e6 so that every step is taken; each k
trains 4 steps and the 3 gaps between progress callbacks are printed (setup and the
first step excluded). The cost is linear in k; docs/learning.md extrapolates it to the
G-PATE paper's 4,000 teachers.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import torch

from raudit import data, generators


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    ds = data.load("mnist")
    for k in [int(a) for a in argv] or [25, 100, 400]:
        stamps: list[float] = []
        gen = generators.get("gpate")(config="image", teachers=k, max_iter=4)
        t0 = time.perf_counter()
        gen.fit_many([ds.train], epsilon=1e6, seeds=[0],
                     progress=lambda i: stamps.append(time.perf_counter()))
        steps = np.diff(stamps)
        print(f"k={k}: step seconds {np.round(steps, 2).tolist()} (median {np.median(steps):.2f}); "
              f"setup + first step {stamps[0] - t0:.1f}s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
