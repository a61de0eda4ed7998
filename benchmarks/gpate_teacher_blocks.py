"""G-PATE's MNIST teachers alone: CPU seconds (user, system) per step against the block size.

    OMP_NUM_THREADS=1 python benchmarks/gpate_teacher_blocks.py 256 256 64 32 16 8

First argument: teachers k; then block sizes (option ``teacher_chunk``; k itself is the
all-at-once step that ran before blocks existed). Each block size takes 3 teacher steps
plus the generator's per-teacher gradients on 64 generated records, with 15 real rows per
teacher (the paper's eps = 1 proportions), on random MNIST-shaped rows, one thread. The
numbers are the same at every block size (tests/generators/test_gpate_mnist.py); large
blocks pay in system time (page faults of the big activations), small ones do not.
"""

from __future__ import annotations

import os
import sys

import torch

from raudit.generators.gpate.chunked import ChunkedTeachers
from raudit.generators.gpate.nets import ImageNets
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.pategan.loop import draw_z
from raudit.generators.pategan.teachers import TeacherTraining, shuffled_partition, teacher_rng


def main(argv: list[str]) -> int:
    torch.set_num_threads(1)
    k, blocks = int(argv[0]), [int(c) for c in argv[1:]] or [int(argv[0]), 16]
    batch, teacher_batch = 64, 15
    n = k * teacher_batch
    x = torch.rand(1, n, 785, generator=torch.Generator().manual_seed(0))
    rng = CounterRNG([0], purpose="gpate")
    nets = ImageNets(785, 50)
    gen = nets.generator.create(rng)
    parts, sizes = shuffled_partition(rng, torch.tensor([n]), n, k)
    for chunk in blocks:
        teachers = ChunkedTeachers(nets.teacher, teacher_rng([0], k), x, parts, sizes,
                                   TeacherTraining(teacher_batch, 1e-3, betas=(0.5, 0.999)), chunk=chunk)
        out = []
        for _ in range(3):
            fake = nets.generate(gen, draw_z(rng, nets.z_kind, batch, nets.z_dim))
            a = os.times()
            teachers.step(fake.detach(), None)
            teachers.generator_gradients(fake)
            b = os.times()
            out.append((round(b.user - a.user, 2), round(b.system - a.system, 2)))
        print(f"k={k} block={chunk}: (user, system) CPU s per step {out}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
