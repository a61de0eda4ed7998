"""The scheduler's order of work: a job is analysed as soon as its last chunk is stored
(the pool goes on with the next jobs), a job's later stage counts as its chunks, and a
job with nothing left to run is still analysed."""

from raudit.engine.driver import EngineConfig
from raudit.errors import RauditError
from raudit.runs import schedule as sch
from raudit.runs.jobs import wrap

LOG: list[str] = []


class FakeJob:
    """``chunks`` chunks of one model each; ``stage2`` more once the first stage is in."""

    def __init__(self, name, chunks, stage2=0, fail=False):
        self.name, self.chunks, self.stage2, self.fail = name, chunks, stage2, fail
        self.total = chunks + stage2

    def describe(self):
        return self.name

    def open(self, out, notice, engine, probe_first):
        return [wrap(self.name, "audit", {"i": i, "trials": [0]}) for i in range(self.chunks)]

    def done(self, spec, rows, error):
        LOG.append(f"done {self.name} {spec['chunk']['i']}")
        if spec["chunk"]["i"] == self.chunks - 1 and self.stage2:
            more, self.stage2 = self.stage2, 0
            return [wrap(self.name, "audit", {"i": 100 + i, "trials": [0]}) for i in range(more)]
        return []

    def finish(self):
        LOG.append(f"finish {self.name}")
        if self.fail:
            raise RauditError(f"{self.name} failed")
        return {"job": self.name}


def _run(monkeypatch, tmp_path, jobs):
    LOG.clear()
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    return sch.schedule(jobs, tmp_path, EngineConfig(backend="local"))


def test_a_job_is_analysed_when_its_last_chunk_is_in(monkeypatch, tmp_path):
    done = _run(monkeypatch, tmp_path, [FakeJob("a", 2), FakeJob("b", 2)])
    assert LOG == ["done a 0", "done a 1", "finish a", "done b 0", "done b 1", "finish b"]
    assert done.results == {"a": {"job": "a"}, "b": {"job": "b"}} and not done.errors


def test_a_later_stage_keeps_the_job_open(monkeypatch, tmp_path):
    _run(monkeypatch, tmp_path, [FakeJob("a", 2, stage2=2), FakeJob("b", 1)])
    # a's second stage joins the queue behind b's chunk: a is analysed after it
    assert LOG == ["done a 0", "done a 1", "done b 0", "finish b", "done a 100", "done a 101",
                   "finish a"]


def test_a_failed_analysis_and_a_job_with_nothing_to_run(monkeypatch, tmp_path):
    done = _run(monkeypatch, tmp_path, [FakeJob("a", 1, fail=True), FakeJob("idle", 0),
                                        FakeJob("b", 1)])
    assert LOG == ["done a 0", "finish a", "done b 0", "finish b", "finish idle"]
    assert str(done.errors["a"]) == "a failed" and set(done.results) == {"idle", "b"}
