"""Model-iterations per second per core of the batched engine (`paper` by default).

Cervical-sized data (d = 29, N = 686), k = 5 teachers, batch 64, one thread, M models
trained in one call. eps is set out of reach so every model runs exactly ``--iters``
iterations (``fixed``, ``gan`` and ``dpgan`` run a fixed number anyway: ``max_iter``
caps it). ``--impl`` picks the generator (paper, fixed, gan, dpgan, ...): options a
generator does not take (teachers for the GANs) are left out. Prints a table;
``--json`` for machines. ``--impl all`` runs every batched generator of the registry
(one table: generator, dtype, then one column per M; the debug generators are not
batched networks and are left out).

    python benchmarks/throughput.py [--impl paper|all] [--models 1 8 32 128] [--iters 20]
                                    [--device cpu] [--clock wall|cpu]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import pandas as pd
import torch

from raudit import data, generators


def cervical_like() -> pd.DataFrame:
    try:
        return data.load("cervical").train
    except Exception:  # no copy on this machine: a stand-in of the same shape
        rng = np.random.default_rng(0)
        df = pd.DataFrame(rng.integers(0, 5, size=(686, 28)), columns=[f"c{i}" for i in range(28)])
        df["label"] = (rng.random(686) < 0.064).astype(int)
        return df


def build(impl: str, iters: int, device: str):
    cls = generators.get(impl)
    wanted = {"teachers": 5, "batch": 64, "max_iter": iters, "device": device}
    caps = cls.describe()
    return cls(**{k: v for k, v in wanted.items() if caps.accepts(k)})


def measure(df: pd.DataFrame, impl: str, models: int, iters: int, device: str, repeats: int,
            make=None, clock: str = "wall") -> float:
    """Best model-iterations/s over ``repeats`` fits of ``models`` models; ``make(iters)``
    builds the generator (default: :func:`build`'s settings). ``clock="cpu"`` divides by
    this process's CPU seconds instead of wall seconds: on a shared box, time spent
    waiting for a core then does not count (use it with one thread)."""
    now = time.process_time if clock == "cpu" else time.perf_counter
    best = 0.0
    for _ in range(repeats):
        gen = make(iters) if make is not None else build(impl, iters, device)
        t0 = now()
        gen.fit_many([df] * models, epsilon=1e9, seeds=list(range(models)))
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        best = max(best, models * iters / (now() - t0))
    return best


NOT_BATCHED = {"identity", "independent", "randomized-response"}


def batched_impls() -> list[str]:
    return [n for n in generators.names() if n not in NOT_BATCHED]


def dtype_of(impl: str) -> str:
    return str(generators.get(impl).dtype).replace("torch.", "")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", default="paper", help="a generator, or all")
    ap.add_argument("--models", type=int, nargs="+", default=[1, 8, 32, 128])
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                    help="cpu: per CPU-second of this process (robust on a busy machine, 1 thread)")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    df = cervical_like()
    impls = batched_impls() if args.impl == "all" else [args.impl]
    table = []
    for impl in impls:
        measure(df, impl, 2, 2, args.device, 1)  # warm-up: imports, allocator, kernels
        rows = []
        for m in args.models:
            rate = measure(df, impl, m, args.iters, args.device, args.repeats, clock=args.clock)
            rows.append({"M": m, "model_it_per_s": rate, "per_core": rate / args.threads})
        base = rows[0]["model_it_per_s"]
        for r in rows:
            r["speedup"] = r["model_it_per_s"] / base
        table.append({"impl": impl, "dtype": dtype_of(impl), "rows": rows})
        if args.impl == "all" and not args.json:
            print(f"  measured {impl}", flush=True)
    head = (f"d={df.shape[1]}, N={len(df)}, k=5, batch 64, {args.iters} iterations per fit, "
            f"{args.threads} thread(s), {args.device}, clock {args.clock}")
    if args.json:
        out = {"device": args.device, "threads": args.threads, "iters": args.iters,
               "clock": args.clock, "results": table}
        if args.impl != "all":  # the single-generator layout the other scripts read
            out = {"impl": args.impl, "device": args.device, "threads": args.threads,
                   "rows": table[0]["rows"]}
        print(json.dumps(out))
        return
    if args.impl != "all":
        rows = table[0]["rows"]
        print(f"{args.impl} ({table[0]['dtype']}), {head}")
        print(f"{'M':>5} {'model-it/s':>12} {'per core':>10} {'vs M=' + str(rows[0]['M']):>8}")
        for r in rows:
            print(f"{r['M']:>5} {r['model_it_per_s']:>12.1f} {r['per_core']:>10.1f} {r['speedup']:>7.1f}x")
        return
    print(f"model-iterations per second per core; {head}")
    print(f"{'generator':<12} {'dtype':<8}" + "".join(f"{'M=' + str(m):>9}" for m in args.models)
          + f"{'best M':>8}")
    for t in table:
        best = max(t["rows"], key=lambda r: r["per_core"])
        print(f"{t['impl']:<12} {t['dtype']:<8}" + "".join(f"{r['per_core']:>9.1f}" for r in t["rows"])
              + f"{best['M']:>8}")


if __name__ == "__main__":
    main()
