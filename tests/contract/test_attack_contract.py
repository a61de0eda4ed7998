"""The attack contract, over every registered attack: its feature sets exist, its
default feature set is one of them, and its default dataset (the one place that says
it) loads and is what an audit without --dataset uses."""

import pytest

from raudit import data
from raudit.attacks import ATTACKS, FEATURE_SETS
from raudit.audit.runner import AuditRequest, prepare


@pytest.fixture(params=ATTACKS.names())
def name(request):
    return request.param


def test_declares_features_and_a_description(name):
    attack = ATTACKS.get(name)
    assert attack.name == name and attack.description
    assert attack.default_features in attack.features
    assert all(f in FEATURE_SETS for f in attack.features)
    assert attack.feature_set() == attack.default_features


def test_its_default_dataset_is_the_audits(name):
    attack = ATTACKS.get(name)
    assert len(data.load(attack.default_dataset).train) > 0
    game, _, _ = prepare(AuditRequest(impl="identity", attack=name, shadow_models=10,
                                      target="auto" if name != "querybased" else None))
    assert game.dataset == attack.default_dataset
