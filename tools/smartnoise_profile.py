"""Where smartnoise's CPU goes at a chunk size M: per-iteration cost, set-up, and the calls.

One process, 1 thread, eps out of reach (every model runs ``--iters`` iterations), the
teachers and batch the advertised audit trains with (the preset's rule: k = max(2, N //
1000), so 2 on breast-cancer, batch 64; ``--teachers`` overrides k), CPU seconds of this
process. Prints, per M: the CPU-s of an ``--iters`` fit and of one- and two-iteration fits,
hence the cost of an iteration (and per model-iteration) and the set-up a fit pays besides
its iterations (2 x one-iteration - two-iteration). With ``--cprofile``, one more fit of the
last M under cProfile: the calls into torch/numpy/C per iteration, how many take under 20 us
(dispatcher-bound), and the time they sum to (cProfile adds its own per-call cost, so read
its shares, not its seconds). For a profile of the native code (MKL, ATen's loops, the
interpreter) attach ``perf record -p PID`` after the warm-up fit and stop it before the
process exits (the interpreter's shutdown is otherwise in it: its garbage collection and
frees).

    OMP_NUM_THREADS=1 python tools/smartnoise_profile.py --dataset breast-cancer \\
        --models 1 8 32 --iters 40 [--cprofile]
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import torch

from raudit import data, generators


TEACHERS: dict = {}  # {"teachers": k} under --teachers, else the preset's rule


def fit_cpu(df, models: int, iters: int) -> float:
    gen = generators.get("smartnoise")(max_iter=iters, **TEACHERS)
    t0 = time.process_time()
    gen.fit_many([df] * models, epsilon=1e9, seeds=list(range(models)))
    return time.process_time() - t0


def calls(df, models: int, iters: int) -> None:
    prof = cProfile.Profile(time.process_time)
    prof.enable()
    fit_cpu(df, models, iters)
    prof.disable()
    stats = pstats.Stats(prof).stats  # {(file, line, name): (cc, ncalls, tottime, cumtime, callers)}
    total = sum(v[2] for v in stats.values())
    builtin = [(v[1], v[2]) for (f, _, _), v in stats.items() if f == "~"]
    n = sum(c for c, _ in builtin)
    small = [(c, t) for c, t in builtin if t / max(c, 1) < 20e-6]
    print(f"cProfile, M = {models}: {n / iters:,.0f} calls into C per iteration, "
          f"{sum(c for c, _ in small) / iters:,.0f} of them under 20 us, summing to "
          f"{100 * sum(t for _, t in small) / total:.1f} % of the fit under cProfile")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="breast-cancer")
    ap.add_argument("--models", type=int, nargs="+", default=[1, 8, 32])
    ap.add_argument("--iters", type=int, default=40)
    ap.add_argument("--teachers", type=int, default=None,
                    help="k (default: the preset's rule, as the audit runs)")
    ap.add_argument("--cprofile", action="store_true")
    args = ap.parse_args()
    if args.teachers is not None:
        TEACHERS["teachers"] = args.teachers
    torch.set_num_threads(1)
    df = data.load(args.dataset).train
    fit_cpu(df, 2, 2)  # warm-up: imports, kernels, the native build
    for m in args.models:
        whole, one, two = (min(fit_cpu(df, m, i) for _ in range(2)) for i in (args.iters, 1, 2))
        per_it = (whole - one) / (args.iters - 1)
        print(f"M = {m}: {args.iters}-iteration fit {whole:.3f} CPU-s, {1e3 * per_it:.2f} ms per "
              f"iteration ({1e3 * per_it / m:.3f} per model-iteration, "
              f"{m / per_it:.0f} model-it per CPU-s); set-up {1e3 * (2 * one - two) / m:.2f} ms "
              f"per model", flush=True)
    if args.cprofile:
        calls(df, args.models[-1], args.iters)


if __name__ == "__main__":
    main()
