"""RAUDIT_COMPILE=step against eager in one process: compile cost, speed and agreement.

Cervical-sized data and settings of ``throughput.py`` (k = 5, batch 64, one thread, eps out
of reach so every model runs ``--iters`` iterations). First one fit under ``step``: its CPU
seconds, the compiler's child processes included, are the compile (or, with inductor's cache
already filled, the load) plus the fit. Then ``--repeats`` rounds of an eager and a ``step``
fit, alternating; per round the largest difference of the generators' parameters relative to
their largest value, and whether iterations and eps_hat are equal. Prints one JSON line.

    OMP_NUM_THREADS=1 python tools/fused_step.py --impl paper --models 128 --iters 20
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository root
from benchmarks.throughput import build, cervical_like  # noqa: E402


def cpu_seconds() -> float:
    """This process's CPU seconds and its finished children's (inductor's compiler workers)."""
    c = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + c.ru_utime + c.ru_stime


def fit(impl: str, mode: str, models: int, iters: int, df):
    os.environ["RAUDIT_COMPILE"] = mode
    t0 = cpu_seconds()
    out = build(impl, iters, "cpu").fit_many([df] * models, epsilon=1e9, seeds=list(range(models)))
    return out[0]._batch.trained, cpu_seconds() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", default="paper")
    ap.add_argument("--models", type=int, default=128)
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    df = cervical_like()
    _, first = fit(args.impl, "step", args.models, args.iters, df)
    rates: dict[str, list[float]] = {"0": [], "step": []}
    diffs, same = [], []
    for _ in range(args.repeats):
        ref, t_eager = fit(args.impl, "0", args.models, args.iters, df)
        got, t_step = fit(args.impl, "step", args.models, args.iters, df)
        rates["0"].append(args.models * args.iters / t_eager)
        rates["step"].append(args.models * args.iters / t_step)
        a, b = ref.generator.flat.detach().double(), got.generator.flat.detach().double()
        diffs.append(float((a - b).abs().max() / a.abs().max()))
        eps_equal = np.array_equal(np.array(ref.eps_hat), np.array(got.eps_hat), equal_nan=True)
        same.append(ref.iterations == got.iterations and eps_equal)
    print(json.dumps({"impl": args.impl, "models": args.models, "iters": args.iters,
                      "first_step_fit_cpu_s": round(first, 2),
                      "eager_model_it_per_cpu_s": [round(r, 1) for r in rates["0"]],
                      "step_model_it_per_cpu_s": [round(r, 1) for r in rates["step"]],
                      "ratio_best": round(max(rates["step"]) / max(rates["0"]), 3),
                      "max_rel_param_diff": max(diffs), "iterations_and_eps_equal": all(same)}))


if __name__ == "__main__":
    main()
