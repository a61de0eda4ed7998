"""G-PATE on MNIST: CPU seconds per training step against the number of teachers.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python benchmarks/gpate_steps.py 100 400 3733 \
        --batch 64 --z-dim 50 --steps 3 [--profile] [--chunk 256] [--kernels reference] \
        [--dataset mnist10]

``config=image`` on the 56,000 MNIST training rows, one torch thread, eps 1e6 so that every
step is taken; each k trains ``--steps`` + 1 steps and the CPU time (``process_time``, so a
loaded machine inflates it less than wall time) between progress callbacks is printed, the
first step excluded. ``--profile`` prints torch.profiler's top operators of the last step.
The FLOP limit is the small teacher's arithmetic per step (:func:`teacher_flop`) at one core's
peak (``--peak`` GFLOP/s, 88 for fp32 on this machine's cores, issue 31); it is not printed for
the upstream teacher, which it does not model.

A preset at fewer teachers (its teachers' memory grows with k: ~36 GB at paper-eps1's 4,000)::

    python benchmarks/gpate_steps.py 250 500 --dataset mnist10 --preset paper-eps1 \
        --rows-per-teacher 14 --steps 2

``--rows-per-teacher R`` trains on k x R rows of a seeded shuffle of the table, so each teacher
holds R rows as at the preset's size (paper-eps1 on the 56,000 rows of ``mnist10``: 14) and
the batch clamps to R as there: a step's work is then k times one teacher's, and the full
size's step is the measured one scaled by 4,000 / k.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import torch

from raudit import data, generators
from raudit.errors import ConfigError
from raudit.generators.nn.device import pick_device


def teacher_flop(k: int, batch: int, teacher_batch: int, ch: int = 16, classes: int = 2) -> float:
    """FLOP of the teachers in one step: forward, then weight and input gradients on the
    real and generated rows (the teacher step), forward and input gradient on the generated
    rows (the generator's gradients); the input gradient of the first convolution is paid
    only where the input is the generated batch."""
    cin = 1 + classes if classes > 2 else 1  # mnist10: the one-hot digit as image channels
    conv1 = 2 * ch * cin * 16 * 14 * 14  # cin -> ch, 4x4/2: 2 FLOP per multiply-add
    conv2 = 2 * (2 * ch) * ch * 16 * 7 * 7  # ch -> 2ch
    lin = 2 * (2 * ch * 49 + (classes if classes > 2 else 1))
    fwd = conv1 + conv2 + lin
    step = (batch + teacher_batch) * (fwd + fwd + (conv2 + lin))  # forward, weights, inputs of conv2
    grads = batch * (fwd + conv2 + lin + conv1)  # forward, input gradient through both convs
    return float(k * (step + grads))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("teachers", type=int, nargs="*", default=[25, 100, 400])
    ap.add_argument("--batch", type=int, default=None, help="default 30, or the preset's")
    ap.add_argument("--z-dim", type=int, default=None)
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--chunk", type=int, default=None, help="teachers per block (option teacher_chunk)")
    ap.add_argument("--kernels", default=None, choices=["fast", "reference"],
                    help="the image teachers' path (option teacher_kernels; default fast)")
    ap.add_argument("--peak", type=float, default=88.0, help="one core's fp32 peak, GFLOP/s")
    ap.add_argument("--profile", action="store_true")
    ap.add_argument("--device", default="cpu", help="cpu or cuda (cuda: wall seconds, synchronised)")
    ap.add_argument("--dataset", choices=["mnist", "mnist10"], default="mnist",
                    help="mnist10: the 10-class configuration (conditional=true, classes=10)")
    ap.add_argument("--preset", default=None, help="a gpate preset, e.g. paper-eps1 (mnist10)")
    ap.add_argument("--rows-per-teacher", type=int, default=None, metavar="R",
                    help="train on k x R rows of a seeded shuffle (each teacher holds R rows)")
    a = ap.parse_args(argv)
    if a.rows_per_teacher is not None and a.rows_per_teacher < 1:
        print("gpate_steps: --rows-per-teacher must be at least 1", file=sys.stderr)
        return 2
    try:
        a.device = str(pick_device(a.device))  # before any work; auto -> cpu or cuda
    except ConfigError as exc:
        print(f"gpate_steps: {exc}", file=sys.stderr)  # bad input: one line, exit 2
        return 2
    cuda = a.device.startswith("cuda")
    torch.set_num_threads(1)
    clock = time.perf_counter if cuda else time.process_time  # a GPU's work is not CPU time
    ds = data.load(a.dataset)
    for k in a.teachers:
        table = ds.train
        if a.rows_per_teacher:
            if k * a.rows_per_teacher > len(table):
                print(f"gpate_steps: {k} x {a.rows_per_teacher} rows exceed the table's "
                      f"{len(table):,}", file=sys.stderr)
                return 2
            table = table.sample(k * a.rows_per_teacher, random_state=0)
        n = len(table)
        stamps: list[float] = []
        prof = None
        if a.profile:
            acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if cuda else [])
            prof = torch.profiler.profile(activities=acts)

        def tick(i: int) -> None:
            if cuda:
                torch.cuda.synchronize()
            stamps.append(clock())
            if prof is not None and i == a.steps:  # profile the last step only
                prof.__enter__()

        opts = dict(config="image", teachers=k, max_iter=a.steps + 1, device=a.device)
        if a.preset:
            opts["preset"] = a.preset
        if a.batch or not a.preset:
            opts["batch"] = a.batch or 30
        if ds.classes > 2:
            opts.update(conditional=True, classes=ds.classes)
        opts.update({kk: v for kk, v in (("z_dim", a.z_dim), ("teacher_chunk", a.chunk),
                                                    ("teacher_kernels", a.kernels)) if v})
        gen = generators.get("gpate")(**opts)
        t0 = clock()
        hp = gen.resolve(n, table.shape[1])
        gen.fit_many([table], epsilon=1e6, seeds=[0], progress=tick)
        steps = np.diff(stamps)
        line = (f"k={k} rows={n:,} batch={hp.batch} teacher_batch={hp.teacher_batch} "
                f"teacher={hp.teacher_net}: {'wall' if cuda else 'CPU'} s per step "
                f"{np.round(steps, 2).tolist()} (median {np.median(steps):.2f}); setup + first "
                f"step {stamps[0] - t0:.1f}s")
        if hp.teacher_net == "small":
            flop = teacher_flop(k, hp.batch, hp.teacher_batch, classes=ds.classes)
            limit = flop / (a.peak * 1e9)
            line += (f"; teachers {flop / 1e12:.3f} TFLOP/step, limit {limit:.2f}s at "
                     f"{a.peak:g} GFLOP/s, median / limit {np.median(steps) / limit:.2f}")
        print(line, flush=True)
        if prof is not None:
            prof.__exit__(None, None, None)
            print(prof.key_averages().table(sort_by="self_cuda_time_total" if cuda else "self_cpu_time_total", row_limit=12))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
