"""nn/gcpause.py: the collector is off inside, restored after (errors and nesting too), and
the PATE loop trains with it off."""

import gc

import pytest

from raudit.generators.nn.gcpause import paused_gc
from raudit.generators.pategan import loop


@pytest.fixture(autouse=True)
def _restore():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_off_inside_restored_after_and_on_error():
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block leaves it as it found it
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_gc():
        raise RuntimeError("x")
    assert gc.isenabled()


def test_a_caller_who_turned_it_off_keeps_it_off():
    gc.disable()
    with paused_gc():
        pass
    assert not gc.isenabled()


def test_decorated_calls_each_get_their_own_context():
    seen = []

    @paused_gc()
    def f(depth):
        seen.append(gc.isenabled())
        if depth:
            f(depth - 1)

    gc.enable()
    f(2)
    assert seen == [False, False, False] and gc.isenabled()


def test_the_pate_loop_trains_with_the_collector_off(monkeypatch):
    seen = []
    real = loop.make_accountant

    def spy(cfg, models):
        seen.append(gc.isenabled())
        return real(cfg, models)

    monkeypatch.setattr(loop, "make_accountant", spy)
    import pandas as pd
    from raudit import generators
    df = pd.DataFrame({"a": [0, 1, 2, 3] * 25, "b": [1, 0] * 50, "label": [0, 1] * 50})
    gc.enable()
    generators.get("smartnoise")(teachers=2, batch=8, max_iter=1).fit_many(
        [df], epsilon=1e9, seeds=[0])
    assert seen == [False] and gc.isenabled()
