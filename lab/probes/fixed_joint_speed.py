"""`fixed -o critic=joint` on epileptic: CPU seconds per iteration and model with the teachers'
hand gradient and kept first layer (pategan/fixed/grad.py) against autograd (what
``RAUDIT_HAND_GRAD=0`` runs), alternating in one process, and whether both give the same
synthetic rows (they must: same bits).

    OMP_NUM_THREADS=1 python lab/probes/fixed_joint_speed.py --teachers 92 184 --iters 30 --fits 2

The options are docs/learning.md's epileptic recipe (``critic=joint lr=1e-3 query_batch=8
teacher_steps=1 teacher_lr=1e-4 bounds_mass=0.9 bounds_centre=true output_offset=0.5``, the
teachers' batch 16) at eps 10; the time includes each fit's set-up (DP bounds, partition).
"""

from __future__ import annotations

import argparse
import hashlib
import time

import numpy as np
import torch

from raudit import data, generators
from raudit.generators.pategan.core import teachers as teachers_mod

RECIPE = dict(critic="joint", lr=1e-3, query_batch=8, teacher_steps=1, teacher_lr=1e-4,
              bounds_mass=0.9, bounds_centre=True, output_offset=0.5, batch=16)


def fit(table, k: int, iters: int, fits: int, hand: bool) -> tuple[float, str]:
    """(CPU seconds per iteration and model, a hash of every model's 200 sampled rows)."""
    teachers_mod.HAND_GRAD = hand
    g = generators.get("fixed")(teachers=k, iterations=iters, **RECIPE)
    t = time.process_time()
    models = g.fit_many([table] * fits, epsilon=10.0, delta=1e-5, seeds=list(range(1, fits + 1)))
    cpu = (time.process_time() - t) / iters / fits
    h = hashlib.sha256()
    for m in models:
        h.update(np.ascontiguousarray(m.sample(200, seed=5).to_numpy()).tobytes())
    return cpu, h.hexdigest()[:16]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teachers", type=int, nargs="+", default=[92, 184])
    ap.add_argument("--iters", type=int, default=30)
    ap.add_argument("--fits", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=2)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    table = data.load("epileptic").train
    print("| k | round | autograd ms / it / model | hand ms | autograd / hand | same rows |")
    print("|---|---|---:|---:|---:|---|")
    for k in a.teachers:
        for r in range(a.repeats):
            ref, ref_hash = fit(table, k, a.iters, a.fits, hand=False)
            new, new_hash = fit(table, k, a.iters, a.fits, hand=True)
            print(f"| {k} | {r + 1} | {1000 * ref:.1f} | {1000 * new:.1f} | {ref / new:.2f}x | "
                  f"{'yes' if ref_hash == new_hash else 'NO'} |", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
