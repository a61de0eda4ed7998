"""Every generator that takes ``device=`` gives on CUDA what it gives on the CPU.

Skipped without a CUDA device (CI has none); run on a lent GPU machine. Float64 throughout, so
that the two devices' arithmetic differs only in the last bits of reductions: the counter-based
RNG draws the same numbers on both (it is integer hashing), so the same seed must give the same
stopping point, eps_hat within 1e-9 relative, and samples within 1e-6. Several models per call, so that
the batched path (bmm over models) is the one compared, at two table sizes.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device")

#: small runs: a few iterations each, a budget that lets every one of them run
CASES = {
    "paper": dict(teachers=2, max_iter=5),
    "original": dict(teachers=2, max_iter=5),
    "updated": dict(teachers=2, max_iter=5),
    "synthcity": dict(teachers=2, max_iter=5),
    "turing": dict(teachers=2, max_iter=5),
    "borealis": dict(teachers=2, max_iter=5),
    "smartnoise": dict(teachers=2, max_iter=5),
    "fixed": dict(teachers=2, max_iter=5),
    "gan": dict(iterations=5),
    "dpgan": dict(max_iter=5),
    "gpate": dict(teachers=3, max_iter=3),
}
#: budgets: 10 for most; G-PATE's per-step queries cost more than that at 3 teachers
EPSILON = {"gpate": 1e6}


def table(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 5)), columns=[f"x{i}" for i in range(5)])
    df["count"] = rng.integers(0, 9, size=n)
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


def fit(name: str, device: str, tables, seeds, epsilon: float):
    cls = generators.get(name)
    gen = cls(dtype="float64", device=device, **CASES[name])
    return gen.fit_many(tables, epsilon=epsilon, seeds=seeds)


@pytest.mark.parametrize("name", sorted(CASES))
def test_cuda_matches_cpu(name):
    assert generators.get(name).capabilities.device, f"{name} no longer takes device="
    tables = [table(120, 1), table(110, 2), table(120, 3)]
    seeds = [11, 12, 13]
    eps = EPSILON.get(name, 10.0)
    cpu = fit(name, "cpu", tables, seeds, epsilon=eps)
    gpu = fit(name, "cuda", tables, seeds, epsilon=eps)
    for a, b in zip(cpu, gpu):
        sa, sb = a.summary(), b.summary()
        assert sa["iterations"] == sb["iterations"]
        assert sa["eps_hat"] == pytest.approx(sb["eps_hat"], rel=1e-9, nan_ok=True)
        np.testing.assert_allclose(a.sample(40, seed=5).to_numpy(float),
                                   b.sample(40, seed=5).to_numpy(float), atol=1e-6)
