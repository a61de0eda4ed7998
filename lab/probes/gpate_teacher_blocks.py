"""G-PATE's MNIST teachers alone: CPU seconds per step, paths and block sizes side by side.

    OMP_NUM_THREADS=1 python lab/probes/gpate_teacher_blocks.py 128 reference:16 reference:4 fast:4 \
        [--steps 4]

First argument: teachers k; then arms ``KERNELS:BLOCK`` (options ``teacher_kernels`` and
``teacher_chunk``; a bare number is the fast path in blocks of that size). Every arm takes the
same teacher steps plus the generator's per-teacher gradients on the same 64 generated
records, with 15 real rows per teacher (the paper's eps = 1 proportions), on random
MNIST-shaped rows, one thread. The arms alternate step by step (in reverse order every other
step), so a shared machine's load falls on all of them alike; the first step is a warm-up.
Printed per arm: the median (user + system) CPU seconds per step, each step's (user, system),
and the ratio to the first arm. Block sizes give the same numbers within float rounding
(tests/generators/test_gpate_mnist.py); large blocks pay in system time (page faults of the
big activations).
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch

from raudit.generators.gpate.chunked import ChunkedTeachers
from raudit.generators.gpate.nets import ImageNets
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.core.nets import draw_z
from raudit.generators.pategan.core.teachers import TeacherTraining, teacher_rng
from raudit.generators.pategan.core.partitions import shuffled_partition


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("teachers", type=int)
    ap.add_argument("arms", nargs="*", default=["reference:16", "fast:4"])
    ap.add_argument("--steps", type=int, default=4)
    a = ap.parse_args(argv)
    torch.set_num_threads(1)
    k, batch, teacher_batch = a.teachers, 64, 15
    n = k * teacher_batch
    x = torch.rand(1, n, 785, generator=torch.Generator().manual_seed(0))
    rng = CounterRNG([0], purpose="gpate")
    gnets = ImageNets(785, 50)
    gen = gnets.generator.create(rng)
    parts, sizes = shuffled_partition(rng, torch.tensor([n]), n, k)
    teachers = {}
    for arm in a.arms:
        kernels, block = arm.split(":") if ":" in arm else ("fast", arm)
        net = ImageNets(785, 50, kernels=kernels).teacher
        teachers[arm] = ChunkedTeachers(net, teacher_rng([0], k), x, parts, sizes,
                                        TeacherTraining(teacher_batch, 1e-3, betas=(0.5, 0.999)),
                                        chunk=int(block))
    times: dict[str, list[tuple[float, float]]] = {arm: [] for arm in a.arms}
    for step in range(a.steps + 1):
        fake = gnets.generate(gen, draw_z(rng, gnets.z_kind, batch, gnets.z_dim)).detach()
        for arm in a.arms if step % 2 == 0 else a.arms[::-1]:
            t0 = os.times()
            teachers[arm].step(fake, None)
            teachers[arm].generator_gradients(fake)
            t1 = os.times()
            if step:
                times[arm].append((round(t1.user - t0.user, 2), round(t1.system - t0.system, 2)))
    first = float(np.median([u + s for u, s in times[a.arms[0]]]))
    for arm in a.arms:
        med = float(np.median([u + s for u, s in times[arm]]))
        print(f"k={k} {arm}: median CPU s per step {med:.2f} (x{first / med:.2f} vs {a.arms[0]}); "
              f"(user, system) {times[arm]}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
