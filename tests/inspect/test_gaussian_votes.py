"""Inspect on generators whose votes declare Gaussian noise (GNMax: `fixed`), and on
G-PATE's gradient aggregation: the checks follow the noise the events declare."""

from __future__ import annotations

import numpy as np
import pandas as pd

from raudit.events import AccountantStep, EventLog, GradientVotes, TeacherBatch, Votes
from raudit.inspect.accountant import check_accountant, gaussian_reference
from raudit.inspect.context import Context
from raudit.inspect.noise import check_delta_scale, check_laplace
from raudit.inspect.partition import check_partition, check_pate
from raudit.inspect.trace import trace_of

ON = np.array([True])


def _gnmax_log(sigma: float, reported: float, shared_rows: bool = False) -> EventLog:
    rng = np.random.default_rng(0)
    log = EventLog()
    for t in range(4):  # disjoint teachers of unequal sizes (an iid assignment)
        rows = np.arange(t * 30, t * 30 + 20 + 5 * t)
        if shared_rows:  # every teacher also reads row 0
            rows = np.union1d(rows, [0])
        log(TeacherBatch(0, t, rows[None, :], ON))
    for it in range(3):
        noise = rng.normal(0.0, sigma, size=(1, 500, 2))
        log(Votes(it, rng.integers(0, 5, size=(1, 500)), 4, sigma, noise,
                  np.zeros((1, 500)), ON, ON, aggregation="argmax", noise_kind="gaussian"))
        log(AccountantStep(it, np.array([reported * (it + 1) / 3]), np.zeros((1, 4)), ON))
    return log


def _ctx(log) -> Context:
    return Context(impl="toy", epsilon=1.0, delta=1e-5, train=pd.DataFrame({"a": range(150)}),
                   synthetic=[], trace=trace_of(log), k=4, lam=None)


def test_gaussian_votes_with_a_matching_accountant_pass():
    ref = gaussian_reference(1500, 40.0, 1e-5)
    ctx = _ctx(_gnmax_log(40.0, ref))
    assert check_accountant(ctx).status == "ok"
    assert check_laplace(ctx).status == "ok"  # Gaussian of the declared sigma
    assert check_delta_scale(ctx).status == "not_applicable"
    assert check_pate(ctx).status == "ok"
    assert check_partition(ctx).status == "ok"  # unequal but disjoint


def test_an_underestimating_gaussian_accountant_and_shared_rows_are_flagged():
    ref = gaussian_reference(1500, 40.0, 1e-5)
    ctx = _ctx(_gnmax_log(40.0, 0.5 * ref, shared_rows=True))
    acc = check_accountant(ctx)
    assert acc.status == "violated" and "underestimate" in acc.evidence
    assert check_partition(ctx).status == "violated"


def test_noise_smaller_than_declared_is_flagged():
    log = _gnmax_log(40.0, 1.0)
    log.events = [Votes(e.iteration, e.n1, e.k, 80.0, e.drawn, e.labels, e.charged, e.active,
                        e.aggregation, e.noise_kind) if isinstance(e, Votes) else e
                  for e in log.events]  # declares sigma 80, drew 40
    assert check_laplace(_ctx(log)).status == "violated"


def test_gpate_aggregation_is_pate_but_its_accountant_is_data_dependent():
    log = EventLog()
    log(TeacherBatch(0, 0, np.arange(10)[None, :], ON))
    log(TeacherBatch(0, 1, np.arange(10, 20)[None, :], ON))
    rng = np.random.default_rng(1)
    log(GradientVotes(0, rng.integers(0, 3, size=(1, 8, 5, 10)), 2, 1.0, 3.0, 1.0,
                      rng.normal(0, 3.0, size=(1, 8, 5)), np.ones((1, 8, 5), bool),
                      np.zeros((1, 8, 5), int), ON, ON))
    log(AccountantStep(0, np.array([0.3]), np.zeros((1, 4)), ON))
    ctx = _ctx(log)
    assert check_pate(ctx).status == "ok"
    acc = check_accountant(ctx)
    assert acc.status == "violated" and "smooth sensitivity" in acc.evidence


def test_a_dp_sgd_critic_reads_real_rows_privately():
    import dp_accounting
    from dp_accounting.rdp import RdpAccountant

    from raudit.events import DpSgdStep
    from raudit.inspect.partition import check_student

    acct = RdpAccountant()
    acct.compose(dp_accounting.PoissonSampledDpEvent(0.1, dp_accounting.GaussianDpEvent(1.2)), 50)
    ref = acct.get_epsilon(1e-5)
    for reported, status in ((ref, "ok"), (0.5 * ref, "violated")):
        log = EventLog()
        for it in range(10):
            log(TeacherBatch(it, -1, np.arange(it, it + 15)[None, :], ON))
            log(DpSgdStep(it, 5, 1.2, 1.0, 0.1, ON))
            log(AccountantStep(it, np.array([reported * (it + 1) / 10]), np.zeros((1, 0)), ON))
        ctx = _ctx(log)
        assert check_accountant(ctx).status == status
        assert check_student(ctx).status == "ok" and check_pate(ctx).status == "not_applicable"
    log.events = [e for e in log.events if not isinstance(e, DpSgdStep)]  # a plain GAN
    assert check_student(_ctx(log)).status == "violated"
    assert check_pate(_ctx(log)).status == "violated"
