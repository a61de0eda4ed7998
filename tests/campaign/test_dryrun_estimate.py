"""`campaign --dry-run` estimates from cached rates and the closed form: a set-up whose
rates are cached is not calibrated at all; only a missing one is measured, and the plan
says which."""

from __future__ import annotations

import re

import pytest

from raudit import data
from raudit.campaign import dryrun
from raudit.campaign.run import load_jobs
from raudit.engine.driver import EngineConfig
from raudit.runs import calibrate as cb
from raudit.runs import chunk_cache, reference, slow_notice
from raudit.runs.estimate import closed_form_iterations, rate_at
from raudit.runs.job_estimate import plan_table

LOCAL = EngineConfig(backend="local")


def _jobs(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: est\njobs:\n  - name: wc-{impl}\n    grid:\n"
                   "      impl: [paper, dpgan]\n    attack: querybased\n    shadow_models: 50\n"
                   "    chunk_size: 10\n")
    return load_jobs(cfg)[1]


def test_cached_rates_skip_the_calibration(tmp_path, monkeypatch):
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reference, "_table", lambda: {})  # no reference rates either
    jobs = _jobs(tmp_path)
    paper = next(j for j in jobs if j.name == "wc-paper")
    chunk_cache.store(chunk_cache.key(cb.job_fit(paper), "cpu"), {8: 400.0, 32: 1600.0})
    measured = []
    real = cb.fit_rate

    def spy(impl, *a, **kw):
        measured.append(impl)
        return real(impl, *a, **kw)
    monkeypatch.setattr(cb, "fit_rate", spy)
    rows = {r["job"]: r for r in plan_table(jobs, LOCAL)}
    assert measured == ["dpgan"]  # only the set-up missing from the cache
    assert rows["wc-paper"]["rate"] == "cached" and rows["wc-dpgan"]["rate"] == "measured now"
    # paper: closed-form iterations, the cached rate at M = 10 (between 8 and 32)
    p = rows["wc-paper"]
    assert p["iterations_per_model"] == closed_form_iterations(
        "paper", dict(paper.game.options), 5, 3, 1.0, paper.game.delta)
    rate = rate_at({8: 400.0, 32: 1600.0}, 10)
    assert p["wall_s"] == pytest.approx(p["models"] * p["iterations_per_model"] / rate)


def test_cold_cache_dry_run_of_the_study_trains_nothing(tmp_path, monkeypatch):
    """configs/study-audit.yaml with an empty cache: every rate from the reference table
    scaled by this machine's speed, no generator fitted (the trainers fail if called)."""
    from pathlib import Path

    from raudit.generators.base import Generator

    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))

    def no_training(*a, **k):
        raise AssertionError("the dry-run trained a generator")
    monkeypatch.setattr(cb, "fit_rate", no_training)
    monkeypatch.setattr(Generator, "fit_many", no_training)
    study = Path(__file__).parents[2] / "configs" / "study-audit.yaml"
    jobs = load_jobs(study)[1]
    rows = [r for r in plan_table(jobs, LOCAL) if r["kind"] == "audit"]  # + 6 inspect jobs
    assert len(rows) == 12 and {r["rate"] for r in rows} == {"reference"}
    by = {r["job"]: r for r in rows}
    # synthcity on cervical stops by its own eps rule: the reference's calibration saw where
    assert by["cervical-synthcity"]["iterations_per_model"] < 1000
    assert not by["cervical-synthcity"]["at_most"]
    # the PATE family's closed form; original/turing counted at their max_iter, said so
    impl, opts, dataset, eps, delta, label, bounds = cb.job_fit(
        next(j for j in jobs if j.name == "cervical-smartnoise"))
    n_rows, n_cols = data.load(dataset).train.shape
    assert by["cervical-smartnoise"]["iterations_per_model"] == closed_form_iterations(
        impl, opts, n_rows, n_cols, eps, delta)
    assert by["cervical-original"]["at_most"]
    assert by["cervical-original"]["iterations_per_model"] == 1000
    _, cells, _ = dryrun.plan_view({"name": "study-audit"}, rows, LOCAL)
    assert cells[-1][7].startswith("<=")  # the total: at most


def test_a_cold_dry_run_counts_the_reference_rate_at_the_m_the_run_will_use(tmp_path,
                                                                            monkeypatch):
    """`chunk_size: auto` trains the worst case at M = 128, where its rate is ~10x the rate
    at M = 8 that the reference held alone: the cold plan said 9.5 h for 4.4 core-h. The
    plan picks M from the reference's rates as the run's calibration will and counts the
    rate there."""
    from pathlib import Path

    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cb, "fit_rate", lambda *a, **k: pytest.fail("trained"))
    study = Path(__file__).parents[2] / "configs" / "study-audit.yaml"
    job = next(j for j in load_jobs(study)[1] if j.name == "worst-case-updated")
    engine = EngineConfig(backend="local", workers=2)
    row = plan_table([job], engine)[0]
    rates = reference.scaled_rates(reference.lookup(cb.job_fit(job)))
    assert set(rates) == {1, 8, 32, 128} and rates[128] > 5 * rates[8]
    m = cb.choose_m(rates, "cpu", 2 * job.req.shadow_models, engine.planned_workers())
    assert row["calibrated_m"] == m == 128
    assert row["wall_s"] == pytest.approx(row["model_iterations"] / rates[128]
                                          / engine.planned_workers())


def test_reference_rates_are_used_as_measured_on_the_reference_kind_of_machine(monkeypatch):
    from raudit.runs import chunk_cache

    table = {"machine": "box x2", "speed": 1000.0, "setups": {}}
    monkeypatch.setattr(reference, "_table", lambda: table)
    monkeypatch.setattr(reference, "speed", lambda: 500.0)
    monkeypatch.setattr(chunk_cache, "machine", lambda: "box x2")
    assert reference.scaled_rates({"rates": {"8": 100.0, "128": 900.0}}) == {8: 100.0, 128: 900.0}
    monkeypatch.setattr(chunk_cache, "machine", lambda: "other x16")
    assert reference.scaled_rates({"rate": 100.0, "m": 8}) == {8: 50.0}  # older entries: one M


@pytest.mark.slow
def test_the_reference_table_covers_every_config_it_names():
    # a config edited without re-running tools/reference_rates.py (--add) would make
    # its --dry-run calibrate on the user's machine again: minutes on a busy one
    table = reference._table()
    assert table.get("configs"), "raudit/runs/reference-rates.json names no configs"
    missing = [f"{path}: {job.name}" for path in table["configs"]
               for job in load_jobs(path)[1] if job.kind != "inspect"
               and reference.lookup(cb.job_fit(job)) is None]
    assert not missing, f"set-ups without a reference rate: {missing}"


def test_a_sweep_counts_each_point_at_its_own_iterations(tmp_path, monkeypatch):
    """paper's eps 100 runs thousands of iterations, eps 0.5 nine: the plan sums each
    point's closed form (it counted every point at the first one's)."""
    from raudit.utility import plan

    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reference, "_table", lambda: {})
    monkeypatch.setattr(cb, "fit_rate", lambda *a, **k: pytest.fail("trained"))
    cfg = tmp_path / "u.yaml"
    cfg.write_text("name: sweep\ndefaults: {kind: utility, fits: 3, samples: 1, "
                   "settings: [B], delta: 1.0e-5}\njobs:\n  - name: p\n    impl: paper\n"
                   "    dataset: cervical\n    epsilons: [0.5, 100.0]\n")
    job = load_jobs(cfg)[1][0]
    chunk_cache.store(chunk_cache.key(cb.job_fit(job), "cpu"), {8: 400.0})
    n_rows, n_cols = job.ds.train.shape
    each = [closed_form_iterations("paper", c["options"], n_rows, n_cols,
                                          c["epsilon"], c["delta"])
            for c, reason in plan.configs(job.req, job.ds) if reason is None]
    assert len(each) == 2 and each[0] < 100 < each[1]  # the closed form differs per point
    row = plan_table([job], LOCAL)[0]
    assert row["model_iterations"] == 3 * sum(each)
    assert row["iterations_range"] == (each[0], each[1]) and not row["at_most"]
    # training at the cached rate, and the classifiers (test_a_utility_plan_counts_...)
    assert row["wall_s"] == pytest.approx(3 * sum(each) / 400.0
                                          + row["classifier_s"] / LOCAL.planned_workers())
    _, cells, _ = dryrun.plan_view({"name": "sweep"}, [row], LOCAL)
    assert cells[0][6] == f"{each[0]:,}-{each[1]:,}"


def test_split_cpu_separates_a_models_set_up_from_its_iterations():
    # 8 models: 2 iterations each in 2.0 CPU-s, 20 each in 5.6: 3.6 s for 144 more
    # model-iterations (0.025 each) and the rest, 5.6 - 0.025 x 160 = 1.6 s, is set-up
    iter_s, model_s = cb.split_cpu([(2.0, 16), (5.6, 160)], 8)
    assert iter_s == pytest.approx(0.025) and model_s == pytest.approx(0.2)
    # no iteration past the lower cap: the higher fit's time is all iterations (an upper bound)
    assert cb.split_cpu([(2.0, 16), (2.1, 16)], 8) == (pytest.approx(2.1 / 16), 0.0)
    assert cb.split_cpu([(3.0, 30)], 8) == (pytest.approx(0.1), 0.0)


def test_an_estimate_counts_the_set_up_apart_from_the_iterations():
    class Job:
        kind = "utility"

        def planned_models(self):
            return 10

    cal = cb.Calibration(8, 0.02, 100, False, 0.01, model_s=2.0)
    # 10 models x (100 iterations x 0.01 + 2.0 of set-up) on 2 workers
    assert cb.estimate(Job(), cal, 2)["wall_s"] == pytest.approx(15.0)


def test_fit_rate_times_one_thread_and_restores_the_process_threads(monkeypatch):
    """With the process's threads, OpenMP's waiting threads spin on a busy machine and the
    CPU clock read ~10x the work (a 5-minute `fixed` run was estimated at 2.2 h)."""
    import torch

    from raudit import generators

    seen = []
    cls = generators.get("paper")
    real = cls.fit_many

    def spy(self, *a, **k):
        seen.append(torch.get_num_threads())
        return real(self, *a, **k)

    monkeypatch.setattr(cls, "fit_many", spy)
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        cal = cb.fit_rate("paper", {"max_iter": 6}, "cervical", 1.0, None, 2,
                          how=cb.Probe(split=True))
    finally:
        after = torch.get_num_threads()
        torch.set_num_threads(before)
    assert seen == [1, 1] and after == 2  # the LOW-capped fit, then the capped one
    assert cal.iterations == 6 and cal.model_s >= 0 and cal.cpu_s_per_model_iter > 0


def _wide_csv(tmp_path, cols: int = 80, rows: int = 120):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(rows, cols)), columns=[f"x{i}" for i in range(cols)])
    frame["label"] = np.arange(rows) % 2
    path = tmp_path / "wide.csv"
    frame.to_csv(path, index=False, float_format="%.4f")
    return path


def test_an_estimates_calibration_fits_a_bounded_probe_of_a_wide_table(tmp_path, monkeypatch):
    """epileptic's 179 columns kept a dry run silent for over 10 minutes (synthcity fits a
    mixture per column): the calibration fits at most PROBE_COLS columns on every row, and
    the full width only on PROBE_CELLS cells (width_factor), says so before it starts, and
    scales its times by the columns it left out. Work counted: fits, their shapes and caps."""
    from raudit import generators

    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reference, "_table", lambda: {})
    monkeypatch.setattr(cb, "PROBE_CELLS", 2_000)  # the 120 x 81 table is over it
    monkeypatch.setattr(cb, "PROBE_MIN_ROWS", 10)
    path = _wide_csv(tmp_path)
    fitted: list[tuple[int, int, int]] = []
    cls = generators.get("paper")
    real = cls.fit_many

    def spy(self, tables, *a, **k):
        fitted.extend((*t.shape, self.options["max_iter"]) for t in tables)
        return real(self, tables, *a, **k)
    monkeypatch.setattr(cls, "fit_many", spy)
    cfg = tmp_path / "u.yaml"
    cfg.write_text(f"name: wide\njobs:\n  - name: u\n    kind: utility\n    impl: paper\n"
                   f"    dataset: {path}\n    epsilons: [1.0]\n    fits: 2\n    samples: 1\n")
    said: list[str] = []
    monkeypatch.setattr(slow_notice, "SLOW_S", 0.0)  # said however quick
    row = plan_table(load_jobs(cfg)[1], LOCAL, said.append)[0]
    n_train = len(data.load(str(path)).train)
    wide = [f for f in fitted if f[1] > cb.PROBE_COLS]
    narrow = [f for f in fitted if f[1] <= cb.PROBE_COLS]
    # 8 models each: one AUTO_ITERS-capped fit at the full width on 2,000 // 81 = 24 rows,
    # one of the 24-column cut on those rows, then the cut on every row at LOW and the cap
    assert len(fitted) == 4 * 8 and wide == [(24, 81, cb.AUTO_ITERS)] * 8, fitted
    assert all(rows * cols <= cb.PROBE_CELLS for rows, cols, _ in wide)
    assert all(cols == cb.PROBE_COLS and its <= cb.CAL_ITERS for _, cols, its in narrow)
    assert sorted({rows for rows, _, _ in narrow}) == [24, n_train]
    assert re.fullmatch(rf"measuring paper on {re.escape(str(path))} for the estimate \(8 "
                        rf"models, \d+ iterations, {cb.PROBE_COLS} of its 81 columns, all of them on "
                        rf"24 rows\)\.\.\.",
                        said[0]), said[0]
    assert said[1].startswith("measuring 12 classifier(s) on ")
    assert row["rate"] == "measured now" and row["wall_s"] > 0


def test_a_probe_scales_by_the_full_widths_cost_not_a_law_of_two_cuts(tmp_path, monkeypatch):
    """A cost that grows faster with the width than the two cuts showed (dpgan 3.4x
    under-estimated on epileptic, 18.5x on isolet) is measured at the full width on fewer
    rows: a cost of width^3 x rows comes out exact (a law of two cuts, held at the
    square, read it 3.5x too cheap)."""
    monkeypatch.setattr(cb, "PROBE_CELLS", 2_000)
    monkeypatch.setattr(cb, "PROBE_MIN_ROWS", 10)

    def cost(ds):  # CPU-s per model-iteration
        rows, cols = ds.train.shape
        return 1e-9 * cols ** 3 * rows

    def timed(cls, opts, ds, m, epsilon, delta, capped, split):
        caps = [cb.LOW, opts["max_iter"]] if split else [opts["max_iter"]]
        runs = [(cost(ds) * c * m, c * m) for c in caps]
        return cb._Timing(runs, [opts["max_iter"]] * m, runs[-1][0], 0.0, None)

    monkeypatch.setattr(cb, "_timed", timed)
    path = _wide_csv(tmp_path)
    full = data.load(str(path))
    cal = cb.fit_rate("paper", {}, str(path), 1.0, None, 8, how=cb.ESTIMATE)
    assert cal.cpu_s_per_model_iter == pytest.approx(cost(full))
    assert cal.scale == pytest.approx((81 / 24) ** 3) and cal.model_s == pytest.approx(0.0)


def test_the_probe_keeps_the_label_and_evenly_spaced_features(tmp_path):
    from raudit import data

    ds = data.load(str(_wide_csv(tmp_path)))
    cut, scale = cb.probe_table(ds, cols=5)
    assert list(cut.train.columns) == ["x0", "x26", "x53", "x79", "label"]
    assert scale == pytest.approx(80 / 4) and len(cut.train) == len(ds.train)
    assert [c.name for c in cut.columns] == list(cut.train.columns)
    same, one = cb.probe_table(ds, cols=100)
    assert same is ds and one == 1.0


def test_a_utility_plan_counts_its_classifiers(tmp_path, monkeypatch):
    """~3/4 of a study utility job is its 12 classifiers x fits x samples x settings: the
    plan adds them (Setting A once; B and C per synthetic table) to the training."""
    from raudit.runs import classifier_costs as cc

    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(reference, "_table", lambda: {})
    monkeypatch.setattr(cb, "fit_rate", lambda *a, **k: pytest.fail("trained"))
    # every classifier: 0.01 CPU-s on 100 rows, 0.04 on 400 (linear in rows)
    monkeypatch.setattr(cc, "measure", lambda train, names: {n: [0.01, 0.04] for n in names})
    cfg = tmp_path / "u.yaml"
    cfg.write_text("name: u\ndefaults: {kind: utility, fits: 3, samples: 2, delta: 1.0e-5}\n"
                   "jobs:\n  - name: p\n    impl: paper\n    dataset: cervical\n"
                   "    epsilons: [0.5]\n    classifiers: [lr, rf]\n")
    job = load_jobs(cfg)[1][0]
    chunk_cache.store(chunk_cache.key(cb.job_fit(job), "cpu"), {8: 400.0})
    engine = EngineConfig(backend="local", workers=2)
    row = plan_table([job], engine)[0]
    n = len(job.ds.train)
    per_table = 2 * (0.04 * n / 400 + 0.04 * int(0.8 * n) / 400)  # B and C, two classifiers
    expected = 2 * 0.04 * n / 400 + 3 * 2 * per_table  # A once + 3 fits x 2 samples
    assert row["classifier_s"] == pytest.approx(expected)
    training = row["model_iterations"] / 400.0 / 2
    assert row["wall_s"] == pytest.approx(training + expected / 2)


def test_a_classifiers_cost_grows_between_linear_and_quadratic_in_its_rows():
    from raudit.runs import classifier_costs as cc

    assert cc.seconds([0.01, 0.04], 800) == pytest.approx(0.08)  # linear: p = 1
    assert cc.seconds([0.01, 0.16], 800) == pytest.approx(0.64)  # quadratic: p = 2
    assert cc.seconds([0.04, 0.04], 800) == pytest.approx(0.08)  # flat read as linear
    assert cc.seconds([0.001, 0.5], 800) == pytest.approx(2.0)  # steeper held at quadratic
    times = {"lr": [0.01, 0.04]}
    # A on 400 rows once; B on 400 and C on 320 per table, 5 tables
    assert cc.utility_seconds(times, 400, ("A", "B", "C"), 5) == pytest.approx(
        0.04 + 5 * (0.04 + 0.032))
    assert cc.utility_seconds(times, 400, ("B",), 5) == pytest.approx(5 * 0.04)


def test_a_large_table_scales_its_classifiers_from_400_and_1600_rows(monkeypatch):
    """From 100 and 400 rows a fixed cost read as a steep law and trees' n log n as linear:
    epileptic's 12 classifiers at 9,200 rows were predicted at 401 CPU-s where a run took
    78. A table of 1,600 rows or more is measured at 400 and 1,600 and scaled from those."""
    import numpy as np
    import pandas as pd

    from raudit import classifiers as clf
    from raudit.runs import classifier_costs as cc

    assert cc.probe_sizes(9200) == (400, 1600) and cc.probe_sizes(1599) == (100, 400)
    # A once on 3,200 rows: 0.4 CPU-s at 1,600 rows, linear -> 0.8 (from 100/400: 3.2)
    assert cc.utility_seconds({"lr": [0.1, 0.4]}, 3200, ("A",), 0) == pytest.approx(0.8)
    assert cc.utility_seconds({"lr": [0.1, 0.4]}, 800, ("A",), 0) == pytest.approx(0.8)
    rows: list[int] = []

    class Spy:
        def fit_score(self, x, y, x_test, seed):
            rows.append(len(x))
    monkeypatch.setattr(clf, "get", lambda name: Spy())
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.normal(size=2000), "label": np.arange(2000) % 2})
    times = cc.measure(table, ["lr"])
    assert rows == [20, 400, 1600] and len(times["lr"]) == 2  # the untimed warm-up first


def test_a_set_up_that_cannot_train_on_the_probes_rows_is_scaled_linearly(tmp_path, monkeypatch):
    """gpate at eps 0.5 cannot take a step on 1,396 of epileptic's rows (NoStep): the
    width is then scaled linearly (features over the cut's), never fitted on every row."""
    from raudit.errors import NoStep

    monkeypatch.setattr(cb, "PROBE_CELLS", 2_000)
    monkeypatch.setattr(cb, "PROBE_MIN_ROWS", 10)
    seen: list[tuple[int, int]] = []

    def timed(cls, opts, ds, m, epsilon, delta, capped, split):
        seen.append(ds.train.shape)
        raise NoStep("no step on so few rows")

    monkeypatch.setattr(cb, "_timed", timed)
    ds = data.load(str(_wide_csv(tmp_path)))
    assert cb.width_factor(object, {"max_iter": 20}, ds, 8, 1.0, None, True) == \
        pytest.approx(80 / 23)
    assert seen == [(24, 81)]
