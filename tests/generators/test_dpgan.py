"""`dpgan`: per-sample DP-SGD on stacked critics, accounted by dp_accounting's RDP."""

import dp_accounting
import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.accountants import create
from raudit.events import GaussianStep
from raudit.data.dataset import infer_columns
from raudit.events import AccountantStep, EventLog, TeacherBatch
from raudit.generators.gan.common import poisson_rows
from raudit.generators.gan.dpgan import plan
from raudit.generators.gan.persample import per_sample_grads, privatise
from raudit.generators.nn.rng import CounterRNG
from raudit.generators.nn.stacked import MLP

DpGan = generators.get("dpgan")


def table(n=120, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"a": rng.integers(0, 5, n), "b": rng.normal(3, 1, n)})
    df["label"] = (rng.random(n) < 0.3).astype(int)
    return df


def reference_eps(z, rate, steps, z_bounds, delta):
    """dp_accounting directly: Poisson-subsampled Gaussian steps (+ the bounds' Gaussian)."""
    acct = dp_accounting.rdp.RdpAccountant()
    acct.compose(dp_accounting.PoissonSampledDpEvent(rate, dp_accounting.GaussianDpEvent(z)), steps)
    if z_bounds is not None:
        acct.compose(dp_accounting.GaussianDpEvent(z_bounds))
    return acct.get_epsilon(delta)


@pytest.mark.parametrize("z,rate,steps", [(1.1, 0.01, 1000), (0.8, 0.05, 200), (4.0, 1.0, 10)])
def test_gaussian_step_accountant_equals_dp_accounting(z, rate, steps):
    acct = create("rdp", models=2)
    for _ in range(steps // 10):
        acct.compose(GaussianStep(z, sampling_rate=rate, count=10))
    expected = reference_eps(z, rate, steps, None, 1e-5)
    np.testing.assert_allclose(acct.eps(1e-5), [expected, expected], rtol=1e-12)


@pytest.mark.slow  # ~7 s: calibrating a subsampled Gaussian by bisection on dp_accounting
def test_dpgan_charges_what_dp_accounting_computes():
    log = EventLog()
    df = table()
    cols = infer_columns(df)  # data bounds: every column but the 0/1 label needs DP bounds
    m = DpGan(iterations=3, critic_steps=2, batch=16).fit(df, epsilon=1.0, seed=0, columns=cols,
                                                          observer=log)
    s = m.summary()
    z_bounds, z = plan(1.0, 1e-5, 6, 16 / 120, 3, 0.2)
    assert s["noise_multiplier"] == pytest.approx(z) and s["critic_steps"] == 6
    ref = reference_eps(z, 16 / 120, 6, z_bounds, 1e-5)
    assert s["eps_hat"] == pytest.approx(ref, rel=1e-9) and ref <= 1.0
    assert ref == pytest.approx(1.0, rel=1e-3)  # the whole budget, no more
    assert s["iterations"] == 3 and len(log.of(AccountantStep)) == 3
    assert len(log.of(TeacherBatch)) == 6


def test_per_sample_grads_equal_one_at_a_time():
    net = MLP([3, 4, 1], ["relu", "linear"])
    params = net.create(CounterRNG([1, 2], dtype=torch.float64))
    x = torch.randn(2, 5, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    mask = torch.tensor([[1, 1, 1, 0, 1], [1, 0, 1, 1, 1]], dtype=torch.bool)
    got = per_sample_grads(net, params, x, mask, lambda out: -out)
    for m in range(2):
        for i in range(5):
            params.flat.grad = None
            (-net(params, x[:, i:i + 1])[m].sum()).backward()
            want = params.flat.grad[m] * float(mask[m, i])
            torch.testing.assert_close(got[m, i], want)
    clipped, norms = privatise(got, 0.1, 1e-12, 1.0, CounterRNG([0, 1], dtype=torch.float64))
    assert torch.all(clipped.norm(dim=1) <= 0.1 * 5 + 1e-6)


def test_poisson_rows_never_truncate():
    rows = torch.tensor([100, 40])
    idx, mask = poisson_rows(CounterRNG([5, 6]), rows, 100, 0.3)
    for m in range(2):
        ids = idx[m][mask[m]].numpy()
        assert len(set(ids.tolist())) == len(ids) and ids.max() < int(rows[m])
    assert 10 < int(mask[0].sum()) < 50
