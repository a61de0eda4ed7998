"""Real stores the report tests render, built once per session: a tiny audit (paper on the
worst case, 10 shadow models per world, 3 iterations each) and a tiny utility sweep
(identity, two eps, one fit and one sample, two classifiers)."""

from __future__ import annotations

import pytest

from raudit.engine.driver import EngineConfig

LOCAL = EngineConfig(backend="local")


@pytest.fixture(scope="session")
def audit_store(tmp_path_factory):
    from raudit.audit.runner import AuditRequest
    from raudit.runs.audit import run_audit

    out = tmp_path_factory.mktemp("audit")
    run_audit(AuditRequest(impl="paper", attack="querybased", shadow_models=10,
                           options={"max_iter": 3}), out, LOCAL)
    return out


@pytest.fixture(scope="session")
def utility_store(tmp_path_factory):
    from raudit.runs.utility import run_utility
    from raudit.utility.plan import UtilityRequest

    out = tmp_path_factory.mktemp("utility")
    run_utility(UtilityRequest(impl="identity", dataset="breast-cancer", fits=1, samples=1,
                               classifiers=("lr", "gnb"), epsilons=(1.0, 2.0)), out, LOCAL)
    return out
