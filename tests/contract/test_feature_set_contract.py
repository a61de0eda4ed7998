"""The feature-set contract, over every registered feature set (raudit.attacks
FEATURE_SETS): for synthetic datasets of one schema it returns one finite row of the
same length per dataset, deterministically, and an attack uses only registered sets."""

import numpy as np
import pandas as pd
import pytest

from raudit.attacks import ATTACKS, FEATURE_SETS, AttackContext, extract


def _table(seed: int, n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"a": rng.normal(size=n), "b": rng.integers(0, 3, size=n).astype(float),
                         "label": rng.integers(0, 2, size=n).astype(float)})


@pytest.fixture(params=FEATURE_SETS.names())
def name(request):
    return request.param


def test_one_finite_row_per_dataset_deterministic(name):
    reference = _table(0)
    ctx = AttackContext.build(reference, reference.iloc[0], seed=1)
    synths = [_table(s) for s in (1, 2, 3)]
    X = extract(name, synths, ctx)
    assert X.shape[0] == 3 and X.shape[1] > 0 and np.isfinite(X).all()
    np.testing.assert_array_equal(X, extract(name, synths, ctx))


def test_every_attack_names_registered_sets():
    for attack in ATTACKS.names():
        assert set(ATTACKS.get(attack).features) <= set(FEATURE_SETS.names())
