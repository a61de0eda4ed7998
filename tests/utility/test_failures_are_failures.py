"""Issue 48: a utility run on a table too small for it is refused before any work, and a
classifier that fails is a recorded failure (a non-zero exit, a red report box), never a
green success printed with its traceback."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from raudit import classifiers
from raudit.classifiers.base import Classifier
from raudit.cli.app import app
from raudit.utility.analyse import one_line


def test_the_worst_case_table_is_refused_before_any_work(tmp_path):
    out = tmp_path / "u"
    r = CliRunner().invoke(app, ["utility", "--impl", "paper", "--dataset", "worst-case",
                                 "--backend", "local", "--out", str(out)])
    assert r.exit_code == 2 and not out.exists()
    assert r.stderr.strip() == (
        "error: dataset 'worst-case' is too small for the utility benchmark: its training "
        "split has 1 row(s) of label 1 (5 training rows); each class needs at least 2 "
        "training rows and a place in the test split")


class _Broken:
    def fit(self, X, y):
        raise IndexError("index 0 is out of bounds for axis 0 with size 0")


@pytest.fixture
def broken_classifier():
    classifiers.CLASSIFIERS.register("broken", Classifier("broken", "Broken", lambda s: _Broken()))
    yield "broken"
    classifiers.CLASSIFIERS.unregister("broken")


def test_a_failing_classifier_fails_the_run_and_reddens_the_report(tmp_path, broken_classifier):
    out = tmp_path / "u"
    args = ["utility", "--impl", "independent", "--dataset", "breast-cancer", "--fits", "1",
            "--samples", "1", "--classifier", broken_classifier, "--setting", "B",
            "--backend", "local", "--retries", "0", "--out", str(out)]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1, r.output
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 1 part(s) of the run failed (rerun to retry); first: "
                           "independent eps=1: ")
    assert last.endswith("IndexError: index 0 is out of bounds for axis 0 with size 0")
    assert "Traceback" not in r.output  # the stored error keeps it; the user reads one line
    again = CliRunner().invoke(app, args)  # a rerun retries and fails again: never exit 0
    assert again.exit_code == 1, again.output
    page = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "rep")])
    assert page.exit_code == 0, page.output
    html = (tmp_path / "rep" / "index.html").read_text()
    assert 'class="verdict violated"' in html and 'class="verdict"' not in html
    assert "Traceback" not in html


def test_one_line_is_the_tracebacks_last_line():
    tb = "Traceback (most recent call last):\n  File \"x.py\", line 1\nValueError: bad  value\n"
    assert one_line(tb) == "ValueError: bad value" and one_line("plain") == "plain"


class _FailsOnce:
    """Fails its first fit in this process only: one part of a run fails, the rest is ok."""

    calls = 0

    def __init__(self):
        from sklearn.linear_model import LogisticRegression
        self.model = LogisticRegression()

    def fit(self, X, y):
        _FailsOnce.calls += 1
        if _FailsOnce.calls == 1:
            raise IndexError("index 0 is out of bounds for axis 0 with size 0")
        return self.model.fit(X, y)

    def predict_proba(self, X):
        return self.model.predict_proba(X)

    @property
    def classes_(self):
        return self.model.classes_


def test_a_campaign_job_with_a_failed_part_is_a_failed_job(tmp_path):
    """Every fit failing already failed the job; one failed part of it now does too."""
    from raudit.campaign.run import run_campaign
    from raudit.engine.driver import EngineConfig

    classifiers.CLASSIFIERS.register("fails-once", Classifier("fails-once", "Fails once",
                                                              lambda s: _FailsOnce()))
    config = tmp_path / "c.yaml"
    config.write_text("""\
jobs:
  - name: u
    kind: utility
    impl: independent
    dataset: breast-cancer
    fits: 1
    samples: 1
    classifiers: [fails-once]
    settings: [A, B]
""")
    try:
        res = run_campaign(config, tmp_path / "out", EngineConfig(backend="local", retries=0))
    finally:
        classifiers.CLASSIFIERS.unregister("fails-once")
    assert res["failed_jobs"] == ["u"]
    job = res["jobs"]["u"]
    assert job["status"] == "failed" and job["error"].startswith("1 part(s) failed")
    assert job["error"].endswith("IndexError: index 0 is out of bounds for axis 0 with size 0")
    assert job["points"] == 1  # what did run is still reported
