"""Chunk actors run the driver's arithmetic switches (RAUDIT_COMPILE, RAUDIT_HAND_GRAD,
RAUDIT_FUSED_ADAM), not the environment their worker process inherited: here Ray starts
with one set of values and the driver then changes them, so an actor that merely inherited
its environment would report the first set."""

from __future__ import annotations

import os
import sys

import pytest

ray = pytest.importorskip("ray")

from raudit.engine import actors  # noqa: E402
from raudit.generators.nn import compiled  # noqa: E402

pytestmark = pytest.mark.ray

ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def probe(spec):
    from raudit.generators.nn import optim
    from raudit.generators.pategan.core import teachers

    return {**{n: os.environ.get(n) for n in compiled.ARITHMETIC},
            "hand_grad": teachers.HAND_GRAD, "fused_adam": optim.FUSED}


def test_actors_get_the_drivers_switches_not_the_inherited_ones(monkeypatch, tmp_path):
    """Through raudit's own session (its workers preload modules as Ray starts them), so a
    preloaded module that read a switch at import would show here."""
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAUDIT_HAND_GRAD", "0")  # what Ray's processes inherit at start
    monkeypatch.setenv("RAUDIT_FUSED_ADAM", "0")
    monkeypatch.delenv("RAUDIT_COMPILE", raising=False)
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    assert not ray.is_initialized()
    with actors.session(1):
        monkeypatch.delenv("RAUDIT_HAND_GRAD")  # the driver's run: defaults, and step
        monkeypatch.setenv("RAUDIT_FUSED_ADAM", "1")
        monkeypatch.setenv("RAUDIT_COMPILE", "step")
        [actor] = actors.start(actors.Placement(1, "cpu", 1.0, 0.0))
        got = ray.get(actor.run.remote(probe, {}), timeout=120)
    from raudit.generators.nn import optim

    assert got == {"RAUDIT_COMPILE": "step", "RAUDIT_HAND_GRAD": None, "RAUDIT_FUSED_ADAM": "1",
                   "hand_grad": True, "fused_adam": optim.FUSED}
