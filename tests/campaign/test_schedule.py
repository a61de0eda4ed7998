"""The scheduler's order of work: a job is analysed as soon as its last chunk is stored
(the pool goes on with the next jobs), a job's later stage counts as its chunks, and a
job with nothing left to run is still analysed."""

import pytest

from raudit.engine.driver import EngineConfig
from raudit.errors import RauditError
from raudit.runs import schedule as sch
from raudit.runs.jobs import wrap

LOG: list[str] = []


class FakeJob:
    """``chunks`` chunks of one model each; ``stage2`` more once the first stage is in."""

    def __init__(self, name, chunks, stage2=0, fail=False, seconds=None):
        self.name, self.chunks, self.stage2, self.fail = name, chunks, stage2, fail
        self.total = chunks + stage2
        self.chunk_seconds = seconds  # what a chunk's rows say it ran for (None: unsaid)

    def work(self, rows):  # one model a chunk
        return None if self.chunk_seconds is None else (1, self.chunk_seconds)

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


def test_the_overall_bar_moves_by_planned_work_and_counts_models(monkeypatch, tmp_path):
    """A campaign's models differ ~50x in cost (a cervical synthcity model against a
    worst-case updated one): its overall bar is opened with the plan's CPU-seconds and each
    chunk ticks its models with their planned work, so the share done and the ETA follow
    the work; counting models alone said 4/6 done (67 %) when 4 % of the work was."""
    import contextlib

    from raudit.campaign.run import unit_costs
    from raudit.cli import progress as pg

    opened, ticks = [], []

    @contextlib.contextmanager
    def recording(description, total, work=None):
        opened.append((description, total, work))
        yield lambda n, work=None: ticks.append((description, n, work))

    LOG.clear()
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    # the estimate's rows: wall time on 2 workers -> CPU-seconds per model
    plan = [{"job": "wc", "kind": "audit", "models": 4, "wall_s": 2.0},
            {"job": "cervical", "kind": "audit", "models": 2, "wall_s": 50.0},
            {"job": "look", "kind": "inspect", "models": 1}]
    cost = unit_costs(plan, workers=2)
    assert cost == {"wc": 1.0, "cervical": 50.0}
    sch.schedule([FakeJob("wc", 4), FakeJob("cervical", 2)], tmp_path,
                 EngineConfig(backend="local"), recording, overall="campaign c", unit_cost=cost)
    assert opened[0] == ("campaign c", 6, 104.0)  # 4 x 1 + 2 x 50 CPU-seconds
    overall = [(n, w) for d, n, w in ticks if d == "campaign c"]
    assert overall == [(1, 1.0)] * 4 + [(1, 50.0)] * 2
    assert [(n, w) for d, n, w in ticks if d == "wc"] == [(1, None)] * 4  # a job's own bar

    # the same ticks on the line progress, with a clock that says 1 s per cheap model
    now = [0.0]
    monkeypatch.setattr(pg.time, "monotonic", lambda: now[0])
    said: list[str] = []
    line = pg.LineProgress("campaign c", 6, interval=3600.0, write=said.append, work=104.0)
    for n, w in overall[:4]:
        now[0] += 1.0
        line.advance(n, w)
    assert line.line() == ("raudit: campaign c: 4/6 (4% of the planned work), about 1m40s "
                           "left, 4s elapsed")  # by models: 67 %, about 2s left


def test_without_a_plan_the_overall_bar_counts_models(monkeypatch, tmp_path):
    import contextlib

    opened = []

    @contextlib.contextmanager
    def recording(description, total, work=None):
        opened.append((description, total, work))
        yield lambda n, work=None: None

    # a job missing from unit_cost (its estimate failed) is costed at the others' mean
    assert sch.overall_work([FakeJob("a", 2), FakeJob("b", 2)], {"a": 3.0}).total == 12.0
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    sch.schedule([FakeJob("a", 2)], tmp_path, EngineConfig(backend="local"), recording,
                 overall="campaign c")
    assert opened[0] == ("campaign c", 2, None)


def test_the_first_chunks_refresh_rescales_the_overall_bar(monkeypatch, tmp_path):
    """The first chunk said its job runs 10x its planned cost per model: the bar (opened
    with the first plan's 104 CPU-s) moves so that its share is that of the rescaled plan
    (140 CPU-s), and it still ends full; it kept the first total and its ETA went 10x off."""
    import contextlib

    ticks = []

    @contextlib.contextmanager
    def recording(description, total, work=None, since=0.0):
        yield lambda n, work=None: ticks.append((description, n, work))

    LOG.clear()
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    firsts = []

    def on_first(job, rows):
        firsts.append(job.name)
        return 10.0
    sch.schedule([FakeJob("wc", 4, seconds=1.0), FakeJob("cervical", 2, seconds=1.0)], tmp_path,
                 EngineConfig(backend="local"), recording, overall="campaign c",
                 on_first=on_first, unit_cost={"wc": 1.0, "cervical": 50.0})
    overall = [w for d, n, w in ticks if d == "campaign c"]
    assert firsts == ["wc"] and len(overall) == 6
    assert sum(overall) == pytest.approx(104.0)  # the bar ends at its own total
    assert sum(overall[:4]) / 104.0 == pytest.approx(40.0 / 140.0)  # wc's share, rescaled


def test_the_refresh_waits_for_a_chunk_whose_rows_say_their_work(monkeypatch, tmp_path):
    """A utility job's Setting A pass (no fit: ``work`` is None) came back first and was
    taken as the job's pace: 0.08x its planned time per fit, so the campaign's bar said
    "9/33 (4% of the planned work), about 24h40m left" with a third of it done. The
    refresh now takes the first chunk that says how long its work took."""
    LOG.clear()
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    firsts = []

    def on_first(job, rows):
        firsts.append((job.name, LOG[-1]))
        return None
    sch.schedule([FakeJob("real", 2), FakeJob("fits", 2, seconds=5.0)], tmp_path,
                 EngineConfig(backend="local"), on_first=on_first)
    assert firsts == [("fits", "done fits 0")]


def test_work_rescaled_keeps_the_other_jobs_costs():
    jobs = [FakeJob("a", 2), FakeJob("b", 3)]
    w = sch.overall_work(jobs, {"a": 1.0, "b": 2.0}).rescaled("a", 0.5, jobs)
    assert w.per_unit == {"a": 0.5, "b": 2.0} and w.total == 7.0


def test_a_jobs_bar_and_eta_start_with_its_first_chunk(monkeypatch, tmp_path, capsys):
    """A campaign's job waits for the pool behind the jobs before it: its bar opens when
    its first chunk is back, dated from that chunk's start (what its rows say it ran for),
    so its elapsed time and ETA are its own. Its bar opened with the campaign's read
    "utility-original-epileptic: 1/10 (10%), about 21h15m left, 2h21m elapsed" after one
    17-min chunk, beside a campaign that had 8h08m left in all."""
    from raudit.cli import progress as pg

    now = [0.0]
    monkeypatch.setattr(pg.time, "monotonic", lambda: now[0])

    def one_minute(spec):  # every chunk runs one minute on the fake clock
        now[0] += 60.0
        return [spec["chunk"]["i"]]
    monkeypatch.setattr(sch, "run_spec", one_minute)
    monkeypatch.setenv("RAUDIT_PROGRESS_EVERY", "0")  # a line at every chunk
    monkeypatch.setattr(pg, "_on_terminal", lambda: False)
    with pg.phase_bars(quiet=False) as phase:
        sch.schedule([FakeJob("a", 3, seconds=60.0), FakeJob("b", 2, seconds=60.0)], tmp_path,
                     EngineConfig(backend="local"), phase)
    lines = capsys.readouterr().err.splitlines()
    b = [ln for ln in lines if ln.startswith("raudit: b:")]
    # b's first chunk started at minute 3, when a's three were done
    assert b[0] == "raudit: b: 1/2 (50%), about 1m00s left, 1m00s elapsed"
    assert b[-1] == "raudit: b: 2/2 (100%), 2m00s elapsed"
    assert [ln for ln in lines if ln.startswith("raudit: a:")][-1] == (
        "raudit: a: 3/3 (100%), 3m00s elapsed")  # the first job's bar opened with the pool


def test_a_job_whose_rows_do_not_say_their_time_opens_its_bar_when_they_come(
        monkeypatch, tmp_path):
    import contextlib

    opened = []

    @contextlib.contextmanager
    def recording(description, total, **kw):
        opened.append((description, total, kw, len(LOG)))
        yield lambda n, work=None: None

    LOG.clear()
    monkeypatch.setattr(sch, "run_spec", lambda spec: [spec["chunk"]["i"]])
    sch.schedule([FakeJob("a", 2, seconds=7.0), FakeJob("b", 1), FakeJob("c", 1, seconds=5.0)],
                 tmp_path, EngineConfig(backend="local"), recording)
    # a leads the queue: opened before any chunk; b and c after their first one is stored
    assert opened == [("a", 2, {}, 0), ("b", 1, {}, 4), ("c", 1, {"since": 5.0}, 6)]


def test_the_jobs_say_how_long_a_chunk_ran_from_its_rows():
    """What the schedule dates a job's bar by, and the campaign's refresh compares with its
    plan: an audit chunk's models (a pool chunk has a row per model and candidate), an early
    chunk's own seconds over its models, a utility chunk's fits' training and their
    classifiers' scoring (once per classifier, not per metric)."""
    from raudit.runs.jobs import AuditJob
    from raudit.runs.utility_job import UtilityJob

    pool = [{"shadow_index": i, "wall_s": 3.0} for i in (0, 0, 1, 1)]
    assert AuditJob.work(None, pool) == (2, 3.0)
    assert AuditJob.work(None, {"seconds": 9.0, "summaries": [{}, {}, {}]}) == (3, 3.0)
    assert AuditJob.work(None, []) is None
    fit = [{"trial_id": "f0", "train_wall_s": 3.0, "metric": m, "score_wall_s": 10.0}
           for m in ("auroc", "auprc")]
    assert UtilityJob.work(None, fit) == (1, 13.0)
    real = [{"trial_id": "r", "setting": "A", "metric": m, "score_wall_s": 10.0}
            for m in ("auroc", "auprc")]
    assert UtilityJob.work(None, real) is None  # Setting A trains nothing: not a fit's pace
    assert UtilityJob.work(None, None) is None
