"""Each training event that released something says what (``Releasing.released``), and
:func:`privacy_events` only collects: the translation rule lives with the event."""

import dataclasses

import numpy as np
import pytest

from raudit import events as ev
from raudit.accountants import create
from raudit.accountants.errors import UnsupportedEventError
from raudit.accountants.true_curve import eps_true
from raudit.events import ConfidentGNMax, GaussianStep, PateVote, UnsupportedEvent
from raudit.generators.transcript import privacy_events

ACTIVE = np.array([True, False])


def votes(charged):
    return ev.Votes(3, np.array([[1, 4], [2, 0]]), 5, 2.5, np.zeros((2, 2, 2)),
                    np.zeros((2, 2)), charged, ACTIVE, aggregation="threshold")


def test_a_vote_is_released_at_its_drawn_scale_charged_or_not():
    for charged in (np.array([True, True]), np.array([False, False])):
        p = votes(charged).released()
        assert isinstance(p, PateVote) and p.k == 5 and p.noise_scale == 2.5
        assert p.aggregation == "threshold" and p.noise_kind == "laplace"
        np.testing.assert_array_equal(p.n1, [[1, 4], [2, 0]])
        np.testing.assert_array_equal(p.mask, ACTIVE)


def test_dp_sgd_and_applied_gradient_votes():
    g = ev.DpSgdStep(0, 7, 1.3, 1.0, 0.05, ACTIVE).released()
    assert isinstance(g, GaussianStep) and (g.count, g.noise_multiplier, g.sampling_rate) == (7, 1.3, 0.05)
    counts = np.ones((2, 3, 4, 5), dtype=int)
    gv = ev.GradientVotes(0, counts, 5, 2.0, 1.0, 2.0, np.zeros((2, 3, 4)),
                          np.ones((2, 3, 4), dtype=bool), np.zeros((2, 3, 4), dtype=int),
                          np.array([False, True]), np.array([True, True])).released()
    assert isinstance(gv, ConfidentGNMax) and gv.counts.shape == (2, 12, 5)
    np.testing.assert_array_equal(gv.mask, [False, True])  # not applied: nothing released


def test_label_noise_is_an_unsupported_release_that_accountants_refuse_by_name():
    noise = ev.LabelNoise(0, 0.7, ACTIVE)
    released = noise.released()
    assert isinstance(released, UnsupportedEvent)
    with pytest.raises(UnsupportedEventError, match="discriminator's labels"):
        create("pld", models=2).compose(released)
    with pytest.raises(UnsupportedEventError, match="discriminator's labels"):
        eps_true([released], delta=1e-5)
    tr = privacy_events([votes(np.array([True, True])), noise, ev.TeacherLoss(0, np.zeros((2, 1, 1)), ACTIVE)])
    assert len(tr.events) == 1 and tr.unsupported == (
        "noise on the discriminator's labels (bounds no record's influence)",)


def test_every_releasing_event_states_its_release():
    kinds = [c for c in vars(ev).values()
             if isinstance(c, type) and dataclasses.is_dataclass(c) and issubclass(c, ev.Releasing)]
    assert {c.__name__ for c in kinds} == {"Votes", "LabelNoise", "GradientVotes", "DpSgdStep",
                                            "RealRowsRead"}
    assert all(c.released is not ev.Releasing.released for c in kinds)


def test_one_hierarchy_of_frozen_events():
    # every event is frozen and on exactly one branch: what an accountant consumes, or what a
    # generator observed (a release among those says which privacy event it was)
    classes = [c for c in vars(ev).values() if isinstance(c, type) and dataclasses.is_dataclass(c)]
    assert len(classes) >= 14
    for c in classes:
        assert issubclass(c, ev.Event) and c.__dataclass_params__.frozen, c.__name__
        assert issubclass(c, ev.PrivacyEvent) != issubclass(c, ev.TrainingEvent), c.__name__
