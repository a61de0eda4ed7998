"""The engine-backend contract, over every registered backend (raudit.engine.driver
BACKENDS): it runs every spec exactly once through on_done, follow-up specs too, with
the slot's device written in; it names its slots and explains itself in --backend's
help. Ray's run starts a local cluster: marked ray and slow."""

import pytest

from raudit.engine.driver import BACKENDS, EngineConfig, backend_help, run_chunks, session


# The chunk function: ``dict`` returns its spec with the device the backend wrote in; a
# builtin, so Ray's workers import it by reference (they cannot import this test file).
CHUNK = dict


def _param(name):
    marks = [pytest.mark.ray, pytest.mark.slow] if name == "ray" else []
    return pytest.param(name, marks=marks)


@pytest.mark.parametrize("name", BACKENDS.names())
def test_declares_itself(name):
    backend = BACKENDS.get(name)
    assert backend.help and f"{name}: {backend.help}" in backend_help()
    assert backend.workers() >= 1 and isinstance(backend.in_process, bool)
    assert isinstance(backend.on_this_machine(), bool)
    assert EngineConfig(backend=name).planned_workers() == backend.workers()


@pytest.mark.parametrize("name", [_param(n) for n in BACKENDS.names()])
def test_runs_every_spec_once_with_follow_ups(name):
    config = EngineConfig(backend=name, workers=1, device="cpu", retries=0)
    seen = []

    def on_done(spec, result, error):
        assert error is None
        seen.append((spec["x"], result["x"], result["device"]))
        return [{"x": 100}] if spec["x"] == 1 else None  # a follow-up joins the same run

    with session(config):
        stats = run_chunks(CHUNK, [{"x": i} for i in range(4)], on_done=on_done, config=config)
    assert sorted(seen) == [(0, 0, "cpu"), (1, 1, "cpu"), (2, 2, "cpu"), (3, 3, "cpu"),
                            (100, 100, "cpu")]
    assert stats.chunks == 5 and stats.failed_chunks == 0 and stats.placement
