"""The exact budget of informative vote answers (raudit/accountants/vote_budget.py)."""

from __future__ import annotations

import math

import dp_accounting
import numpy as np
import pytest
from dp_accounting import pld, rdp

from raudit.accountants.gnmax import rdp_gnmax_independent
from raudit.accountants.vote_budget import (dd_answers, gdp_delta, gdp_mu, informative_answers,
                                            informative_checks, max_answers)
from raudit.errors import ConfigError

# by hand: Phi(-0.5) - e * Phi(-1.5) = 0.3085375387 - 2.7182818285 * 0.0668072013
DELTA_MU1_EPS1 = 0.3085375387259869 - math.e * 0.06680720126885807


def test_gdp_delta_by_hand():
    assert gdp_delta(1.0, 1.0) == pytest.approx(DELTA_MU1_EPS1, abs=1e-12)
    assert DELTA_MU1_EPS1 == pytest.approx(0.1269367375, abs=1e-10)
    # eps = 0: delta = Phi(mu/2) - Phi(-mu/2), the total variation of N(0,1) and N(mu,1)
    assert gdp_delta(0.0, 2.0) == pytest.approx(0.8413447461 - 0.1586552539, abs=1e-9)
    assert gdp_delta(5.0, 0.0) == 0.0


def test_gdp_mu_inverts_delta():
    assert gdp_mu(1.0, DELTA_MU1_EPS1) == pytest.approx(1.0, abs=1e-9)
    for eps, delta in ((0.5, 1e-5), (10.0, 1e-5), (100.0, 1e-9)):
        assert gdp_delta(eps, gdp_mu(eps, delta)) == pytest.approx(delta, rel=1e-6)
    assert gdp_mu(1.0, 1e-5) < gdp_mu(10.0, 1e-5) < gdp_mu(100.0, 1e-5)


def test_answer_counts_by_hand():
    # mu = 1 exactly at (eps 1, delta DELTA_MU1_EPS1): Q <= mu^2 sigma^2 / 2
    assert max_answers(1.0, DELTA_MU1_EPS1, 3.0) == 4  # 9 / 2 = 4.5
    assert max_answers(1.0, DELTA_MU1_EPS1, 2.0) == 2  # 4 / 2, exactly
    assert max_answers(1.0, DELTA_MU1_EPS1, 3.0, sensitivity=1.0) == 9
    # sigma = k / 2: Q <= mu^2 k^2 / 8
    assert informative_answers(1.0, DELTA_MU1_EPS1, 10) == 12  # 100 / 8 = 12.5
    assert informative_answers(1.0, DELTA_MU1_EPS1, 4) == 2  # 16 / 8, exactly
    assert informative_answers(1.0, DELTA_MU1_EPS1, 2) == 0  # 4 / 8


def _pld_eps(queries: int, sigma: float, delta: float) -> float:
    acct = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                             value_discretization_interval=1e-4)
    acct.compose(dp_accounting.GaussianDpEvent(sigma / math.sqrt(2.0)), queries)
    return acct.get_epsilon(delta)


def test_agrees_with_dp_accounting_and_is_tighter_than_rdp():
    """At sigma = k / 2 the largest count costs eps (PLD, a numerical accountant, agrees
    to its discretisation); RDP, an upper bound, charges the same answers more."""
    eps, delta, k = 10.0, 1e-5, 184  # epileptic's k = N // 50
    q = informative_answers(eps, delta, k)
    assert _pld_eps(q, k / 2.0, delta) == pytest.approx(eps, abs=0.02)
    assert _pld_eps(int(q * 1.05), k / 2.0, delta) > eps
    r = rdp.RdpAccountant()
    r.compose(dp_accounting.GaussianDpEvent(k / 2.0 / math.sqrt(2.0)), q)
    assert r.get_epsilon(delta) > eps


def test_check_counts_by_hand():
    # mu = 1: sigma1 = floor(k/2) / (2 sqrt 2), sensitivity 1, Q <= floor(k/2)^2 / 8
    assert informative_checks(1.0, DELTA_MU1_EPS1, 10) == 3  # 25 / 8 = 3.125
    assert informative_checks(1.0, DELTA_MU1_EPS1, 9) == 2  # 16 / 8, exactly (range 5..9)
    assert informative_checks(1.0, DELTA_MU1_EPS1, 20) == 12  # 100 / 8 = 12.5
    assert [informative_checks(1.0, DELTA_MU1_EPS1, k) for k in (1, 2, 3)] == [0, 0, 0]
    # a check reads a range half the answer's, at 1/sqrt 2 the sensitivity: about a quarter
    assert informative_checks(10.0, 1e-5, 184) == 4233
    assert informative_answers(10.0, 1e-5, 184) == 16935


def test_checks_agree_with_dp_accounting():
    """The checks' count costs eps under PLD (sensitivity 1, noise floor(k/2) / (2 sqrt 2))."""
    eps, delta, k = 10.0, 1e-5, 184
    q = informative_checks(eps, delta, k)
    sigma1 = (k // 2) / (2.0 * math.sqrt(2.0))
    acct = pld.PLDAccountant(dp_accounting.NeighboringRelation.ADD_OR_REMOVE_ONE,
                             value_discretization_interval=1e-4)
    acct.compose(dp_accounting.GaussianDpEvent(sigma1), q)
    assert acct.get_epsilon(delta) == pytest.approx(eps, abs=0.02)


def test_dd_answers_by_hand():
    # an even split (1 vs 1): Theorem 6 does not apply, each answer costs order / sigma2^2.
    # eps 5, log(1/delta) = 2, sigma2 = 2, orders 2 and 3: order 2 leaves 5 - 2 = 3 for
    # answers of 2/4 each -> 6; order 3 leaves 5 - 1 = 4 for 3/4 each -> 5.33 -> 5. Max 6.
    assert dd_answers(5.0, math.exp(-2.0), 2, 1, 2.0, orders=[2, 3]) == 6
    # order 2 only: room 3 -> 6; order 3 only: 5
    assert dd_answers(5.0, math.exp(-2.0), 2, 1, 2.0, orders=[3]) == 5
    # a unanimous vote at a noise that never flips it (q underflows to 0) costs nothing
    assert dd_answers(10.0, 1e-5, 91, 0, 1.0) is None


def test_dd_answers_never_below_the_data_independent_count():
    """Theorem 6's bound is at most the data-independent order / sigma2^2, and it shrinks
    with the dissent; at an even split it is exactly the data-independent count."""
    eps, delta, k, sigma2 = 10.0, 1e-5, 91, 9.1
    orders = [2.0, 3.0, 4.0, 5.0, 8.0]
    per = rdp_gnmax_independent(sigma2, orders)
    room = eps - math.log(1 / delta) / (np.asarray(orders) - 1)
    independent = int(np.floor(np.where(room > 0, room / per, 0)).max())
    counts = [dd_answers(eps, delta, k, d, sigma2, orders=orders) for d in (0, 10, 20, 30, 45)]
    assert counts[-1] == independent
    assert all(a >= b for a, b in zip(counts, counts[1:]))
    assert counts[2] > 100 * independent


@pytest.mark.parametrize("call", [lambda: gdp_mu(0.0, 1e-5), lambda: gdp_mu(1.0, 0.0),
                                  lambda: gdp_mu(math.inf, 1e-5), lambda: max_answers(1, 1e-5, 0),
                                  lambda: informative_answers(1, 1e-5, 0),
                                  lambda: informative_answers(1, 1e-5, 2.5),
                                  lambda: informative_checks(1, 1e-5, 0),
                                  lambda: dd_answers(1, 1e-5, 9, 5, 1.0),
                                  lambda: dd_answers(1, 1e-5, 9, 1, 0.0),
                                  lambda: dd_answers(0, 1e-5, 9, 1, 1.0)])
def test_bad_input(call):
    with pytest.raises(ConfigError):
        call()
