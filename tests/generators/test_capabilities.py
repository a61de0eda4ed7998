"""Declared generator capabilities (issue 9) instead of signature guessing."""

import numpy as np
import pandas as pd
import pytest

from raudit import generators
from raudit.errors import ConfigError
from raudit.results.events import EventSink


def table(n=60, seed=0):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    df["label"] = (rng.random(n) < 0.4).astype(int)
    return df


def test_declarations():
    paper = generators.get("paper").describe()
    assert (paper.device, paper.progress, paper.teachers_on_ray) == (True, True, True)
    assert paper.privacy_events == ("PateVote",)
    lam = {o.name: o for o in paper.options}["lam"]
    assert (lam.type, lam.default) == ("float", 1e-3)
    assert generators.get("smartnoise").describe().accepts("preprocessor_eps")
    assert not generators.get("smartnoise").describe().accepts("noise_scale")
    original = generators.get("original").describe()
    assert original.device and not original.teachers_on_ray
    identity = generators.get("identity").describe()
    # a calibration generator has no hyperparameter: only the shared preset (issue 48:
    # its catch-all constructor took --teachers 0 or -o nosuch=1 and never read them)
    assert identity.option_names() == ["preset"] and not identity.accepts("anything")
    assert not identity.device


@pytest.mark.parametrize("name", ["paper", "borealis", "smartnoise", "original", "turing"])
def test_declared_events_are_the_events_emitted(name):
    cls = generators.get(name)
    sink = EventSink()
    cls(teachers=2, max_iter=2).fit(table(), epsilon=1e6 if name == "paper" else 50.0, seed=0,
                                    observer=sink)
    assert set(sink.table().column("kind").to_pylist()) == set(cls.describe().events)


def test_teacher_parallel_refuses_what_is_not_declared():
    from raudit.engine.teachers import fit_teacher_parallel
    gen = generators.get("original")(teachers=2, max_iter=1)
    with pytest.raises(ConfigError, match="no teacher ensemble"):
        fit_teacher_parallel(gen, table(), epsilon=1.0, delta=1e-5, seed=0, columns=None)
