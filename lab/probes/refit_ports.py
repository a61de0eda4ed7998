"""Model-iterations per second of the logistic-regression-teacher ports (`updated`, `synthcity`).

Cervical (d = 29, N = 686), one thread, M models trained in one batched call, eps out of
reach so every model runs exactly ``--iters`` outer iterations. An `updated` iteration is
k LR refits + 1 student step + 1 generator step (batch 64); a `synthcity` iteration is k LR
refits + 10 one-batch epochs (critic + generator, batch min(200, N // k)).

    python lab/probes/refit_ports.py [--impl updated synthcity] [--models 1 16] [--iters 10] [--teachers 5]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch

from raudit import generators
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root
from benchmarks import throughput  # noqa: E402
from benchmarks.throughput import cervical_like  # noqa: E402


def measure(impl: str, df, models: int, iters: int, teachers: int, device: str, repeats: int) -> float:
    def make(it):
        return generators.get(impl)(teachers=teachers, max_iter=it, device=device)
    return throughput.measure(df, impl, models, iters, device, repeats, make=make)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", nargs="+", default=["updated", "synthcity"])
    ap.add_argument("--models", type=int, nargs="+", default=[1, 16])
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--teachers", type=int, default=5)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    df = cervical_like()
    rows = []
    for impl in args.impl:
        measure(impl, df, 1, 1, args.teachers, args.device, 1)  # warm-up
        base = None
        for m in args.models:
            rate = measure(impl, df, m, args.iters, args.teachers, args.device, args.repeats)
            base = base or rate
            rows.append({"impl": impl, "M": m, "model_it_per_s": rate, "speedup": rate / base})
    if args.json:
        print(json.dumps({"device": args.device, "threads": args.threads, "rows": rows}))
        return
    print(f"cervical d={df.shape[1]} N={len(df)}, k={args.teachers}, {args.iters} iterations, "
          f"{args.threads} thread(s), {args.device}")
    for r in rows:
        print(f"{r['impl']:>10} M={r['M']:>4} {r['model_it_per_s']:>9.2f} model-it/s {r['speedup']:>6.1f}x")


if __name__ == "__main__":
    main()
