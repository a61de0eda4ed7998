"""The exact budget of informative vote answers (raudit/accountants/vote_budget.py)."""

from __future__ import annotations

import math

import dp_accounting
import pytest
from dp_accounting import pld, rdp

from raudit.accountants.vote_budget import (gdp_delta, gdp_mu, informative_answers,
                                            max_answers)
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


@pytest.mark.parametrize("call", [lambda: gdp_mu(0.0, 1e-5), lambda: gdp_mu(1.0, 0.0),
                                  lambda: gdp_mu(math.inf, 1e-5), lambda: max_answers(1, 1e-5, 0),
                                  lambda: informative_answers(1, 1e-5, 0),
                                  lambda: informative_answers(1, 1e-5, 2.5)])
def test_bad_input(call):
    with pytest.raises(ConfigError):
        call()
