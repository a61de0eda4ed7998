"""The accountant contract, run over every registered accountant (ACCOUNTANTS): what it
supports it composes, what it does not support it rejects with UnsupportedEventError and
no change, an event of another shape is an EventShapeError, a bad delta a DeltaError, and
`supports` agrees with `accepting` (the registry's view of the same declaration)."""

import numpy as np
import pytest

from raudit.accountants import ACCOUNTANTS, VARIANTS, accepting, create
from raudit.accountants.errors import DeltaError, EventShapeError, UnsupportedEventError
from raudit.events import (ConfidentGNMax, GaussianStep, GNMaxAnswer, GNMaxThreshold,
                           NoisyLabels, PateVote, UnsupportedEvent)

K = 5
EVENTS = {  # one small valid event of every kind, for one model
    "PateVote": lambda: PateVote(np.array([[3, 5, 0, 2]]), K),
    "PateVote (gaussian)": lambda: PateVote(np.array([[3, 5]]), K, noise_kind="gaussian"),
    "GaussianStep": lambda: GaussianStep(2.0),
    "GNMaxThreshold": lambda: GNMaxThreshold(50.0),
    "GNMaxAnswer": lambda: GNMaxAnswer(40.0),
    "NoisyLabels": lambda: NoisyLabels("laplace", 2.0),
    "ConfidentGNMax": lambda: ConfidentGNMax(counts=np.array([[[4, 1]]]),
                                             answered=np.array([[True]]), threshold=3.0,
                                             sigma1=2.0, sigma2=1.0),
}


def make(name: str, models: int = 1):
    params = {"lam": 0.1, "orders": 20, "k": K} if name in VARIANTS else {}
    return create(name, models=models, **params)


def state(acc) -> np.ndarray:
    return np.asarray(acc.eps(1e-5), dtype=float)


@pytest.fixture(params=ACCOUNTANTS.names())
def name(request):
    return request.param


def test_supports_at_least_one_event_and_matches_accepting(name):
    acc = make(name)
    supported = [e for e, build in EVENTS.items() if acc.supports(build())]
    assert supported, f"{name} supports none of the events"
    for build in EVENTS.values():
        event = build()
        if acc.supports(event):  # the registry's view agrees with the accountant's
            assert name in accepting(type(event))


@pytest.mark.parametrize("label", list(EVENTS))
def test_compose_what_it_supports_reject_the_rest_unchanged(name, label):
    acc, event = make(name), EVENTS[label]()
    before = state(acc)
    if acc.supports(event):
        acc.compose(event)
        after = state(acc)
        assert after.shape == (1,) and not (after < before).any()  # composing never lowers eps
    else:
        with pytest.raises(UnsupportedEventError):
            acc.compose(event)
        np.testing.assert_array_equal(state(acc), before)


def test_an_unsupported_release_is_refused_by_name_and_unchanged(name):
    acc = make(name)
    event = UnsupportedEvent("noise on the discriminator's labels")
    assert not acc.supports(event)
    before = state(acc)
    with pytest.raises(UnsupportedEventError, match="noise on the discriminator's labels"):
        acc.compose(event)
    np.testing.assert_array_equal(state(acc), before)


def test_an_event_of_another_shape_is_a_shape_error(name):
    acc = make(name, models=1)
    two = {  # the same events for two models
        "PateVote": PateVote(np.array([[3, 5], [1, 2]]), K),
        "GaussianStep": GaussianStep(2.0, mask=np.array([True, False])),
        "ConfidentGNMax": ConfidentGNMax(counts=np.array([[[4, 1]], [[2, 3]]]),
                                         answered=np.array([[True], [False]]), threshold=3.0,
                                         sigma1=2.0, sigma2=1.0),
    }
    event = next(e for e in two.values() if acc.supports(e))
    before = state(acc)
    with pytest.raises(EventShapeError):
        acc.compose(event)
    np.testing.assert_array_equal(state(acc), before)


def test_a_bad_delta_is_a_delta_error(name):
    acc = make(name, models=2)
    with pytest.raises(DeltaError):
        acc.eps(np.full(3, 1e-5))  # neither one number nor one per model
