"""Does a model's output depend on the chunk it trains in? One model fitted alone (M = 1)
and at every position of a chunk of 3 and of 4 (``--chunks``), same seed, same table;
prints the largest difference of their samples (0 where the chunk changes no bit).

    OMP_NUM_THREADS=1 python benchmarks/chunk_invariance.py --impl paper --iters 40 100
    OMP_NUM_THREADS=1 python benchmarks/chunk_invariance.py --impl paper fixed --iters 100 --params -o batch=16

``-o KEY=VALUE`` passes generator options (repeatable). ``--params``: the largest difference
of the trained generator's and critic's parameters instead of the samples (integer and binary
columns round a small difference away in the samples).

Before the fused Adam saw only whole SIMD widths (docs/performance.md), `paper` on cervical
differed at 40 iterations, `fixed` and `smartnoise` at 100. Before sigmoid, softplus and BCE
ran on whole blocks (nn/whole.py, 2026-11-25), other batch sizes differed: ``--params -o
batch=16`` `paper` 7.5e-9 and `fixed` 3.7e-9 after 3 iterations, ``-o batch=7`` `borealis`
1.3e-18; now 0 (docs/performance.md, "Chunk invariance at any batch size").
"""

from __future__ import annotations

import argparse

import numpy as np

from raudit import data, generators
from raudit.generators.kwargs import parse_value


def differ(impl: str, dataset: str, iters: int, epsilon: float, options: dict,
           params: bool = False, chunks: tuple[int, ...] = (3, 4)) -> tuple[float, int, int]:
    """The largest difference between one model fitted alone and the same model (same
    seed, same table) at every position of a chunk of each size in ``chunks`` (a chunk of
    M copies of it: the copies are independent models that happen to be equal)."""
    ds = data.load(dataset)
    cls = generators.get(impl)
    kw = {"max_iter": iters} if cls.describe().accepts("max_iter") else {}
    kw.update(options)
    one = cls(**kw).fit_many([ds.train], epsilon=epsilon, seeds=[12], columns=ds.columns)[0]
    y = None if params else one.sample(200, seed=0).to_numpy(float)
    gap, its = 0.0, [one.summary().get("iterations")]
    for m in chunks:
        many = cls(**kw).fit_many([ds.train] * m, epsilon=epsilon, seeds=[12] * m, columns=ds.columns)
        for row, model in enumerate(many):
            its.append(model.summary().get("iterations"))
            if params:
                gap = max(gap, _param_gap(model, one, row))
            else:
                x = model.sample(200, seed=0).to_numpy(float)
                gap = max(gap, float(np.nanmax(np.abs(x - y))))
    return gap, min(its), max(its)


def _param_gap(in_three, alone, row: int) -> float:
    """Largest difference of the generator's and the critic's flat parameters (batched
    generators only: others have no stacked parameters to compare)."""
    a, b = in_three._batch.trained, alone._batch.trained
    gap = float((a.generator.flat[row] - b.generator.flat[0]).detach().abs().max())
    if a.critic is not None:
        gap = max(gap, float((a.critic.params.flat[row] - b.critic.params.flat[0]).detach().abs().max()))
    return gap


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", nargs="+", default=["paper"])
    ap.add_argument("--dataset", default="cervical")
    ap.add_argument("--iters", type=int, nargs="+", default=[40])
    ap.add_argument("--epsilon", type=float, default=1e6)
    ap.add_argument("-o", dest="options", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--params", action="store_true")
    ap.add_argument("--chunks", type=int, nargs="+", default=[3, 4], metavar="M")
    a = ap.parse_args(argv)
    options = {k: parse_value(v) for k, v in (o.split("=", 1) for o in a.options)}
    what = "parameters" if a.params else "samples"
    for impl in a.impl:
        for it in a.iters:
            d, lo, hi = differ(impl, a.dataset, it, a.epsilon, options, a.params, tuple(a.chunks))
            print(f"{impl} max_iter={it} {options or ''}: iterations {lo}..{hi}, largest "
                  f"difference of the {what}, alone vs every position of M = "
                  f"{', '.join(map(str, a.chunks))}: {d:.3g}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
