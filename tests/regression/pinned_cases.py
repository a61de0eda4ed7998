"""Pinned runs for test_pinned_runs.py (shared with the script that printed them)."""

import numpy as np
import pandas as pd


def table(n=90, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)) * [1, 5, 0.1], columns=["a", "b", "c"])
    df["count"] = rng.integers(0, 6, size=n)
    df["label"] = (rng.random(n) < 0.4).astype(int)
    return df


# (case id, impl, constructor options, epsilon, delta); lam large enough that the
# PATE ports stop on eps within a few iterations (the data-dependent regime, so the
# vote counts matter), the WGAN-GP ports on max_iter.
CASES = [
    ("paper", "paper", dict(teachers=9, batch=8, lam=0.3, orders=20, dtype="float64"), 60.0, 1e-5),
    ("borealis", "borealis", dict(teachers=9, batch=8, lam=0.3, orders=20), 60.0, 1e-5),
    *[(f"borealis-{a}", "borealis", dict(teachers=9, batch=8, lam=0.3, orders=20, accountant=a), 60.0, 1e-5)
      for a in ("paper", "updated", "synthcity-index-bug", "fixed", "fixed-threshold")],
    ("borealis-updated-nan", "borealis",
     dict(teachers=9, batch=8, lam=0.5, orders=20, accountant="updated"), 30.0, 1e-5),
    ("smartnoise", "smartnoise", dict(teachers=9, batch=8, lam=0.3, orders=20, latent_dim=8), 60.0, None),
    # synthcity's models stop on eps at iterations 6 and 4: the second leaves the chunk's
    # tensors early. In float64, as paper, original and turing: its float32 checksum moved
    # by 1e-8 relative with the CPU's SIMD paths (an AVX-512 machine, MKL_CBWR=COMPATIBLE
    # or ATEN_CPU_CAPABILITY=default each gave another), past the test's 1e-9
    ("synthcity", "synthcity", dict(teachers=3, lam=0.01, orders=20, max_iter=30,
                                    dtype="float64"), 2.0, 1e-5),
    ("original", "original", dict(teachers=2, max_iter=4, dtype="float64"), 1.0, 1e-5),
    ("turing", "turing", dict(teachers=2, max_iter=4, dtype="float64"), 1.0, 1e-5),
]
SEEDS = [3, 4]


def run(impl, options, epsilon, delta):
    """(iterations, eps_hat, sum of the sampled values) per seed, from one fit_many call."""
    from raudit import generators

    gen = generators.get(impl)(**options)
    models = gen.fit_many([table(seed=1)] * len(SEEDS), epsilon=epsilon, delta=delta, seeds=SEEDS)
    out = []
    for m in models:
        s = m.summary()
        synth = m.sample(50, seed=9).to_numpy(float)
        out.append((int(s["iterations"]), float(s["eps_hat"]), float(synth.sum())))
    return out


if __name__ == "__main__":
    import torch

    torch.set_num_threads(1)
    for cid, impl, o, e, d in CASES:
        print(f"    {cid!r}: {run(impl, o, e, d)!r},")
