"""The Python API (raudit.api): each function's happy path on tiny sizes in this process,
a bad argument refused with the command's own one-line message, the command's defaults,
and a user's generator passed as a class or an instance (no entry point, no module path).
"""

from __future__ import annotations

import inspect as pyinspect
import json

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import raudit.api as ra
from raudit import generators
from raudit.cli.app import app
from raudit.errors import ConfigError
from raudit.generators.base import Generator

from error_lines import api_error, cli_error

FAST = dict(impl="identity", attack="querybased", dataset="worst-case", shadow_models=10,
            backend="local", quiet=True)


class NoisyMean(Generator):
    """The docs' example: each column drawn around its Laplace-noised mean (a module-level
    class, so importable as ``module:Class``)."""

    name = "noisy-mean"
    default_delta = None  # pure DP

    def __init__(self, *, spread: float = 0.1) -> None:
        super().__init__(spread=spread)

    def _fit(self, data, *, epsilon, delta, seed, columns, observer):
        rng = np.random.default_rng(seed)
        # the columns of the study's tables lie in [0, 1] after scaling: sensitivity 1/n
        noise = rng.laplace(0, data.shape[1] / (len(data) * epsilon), size=data.shape[1])
        self.mean_ = data.to_numpy(float).mean(axis=0) + noise
        self.columns_ = list(data.columns)
        self.summary_ = {"iterations": 1, "eps_hat": epsilon}

    def sample(self, n, *, seed=0):
        rng = np.random.default_rng([seed, 1])
        values = self.mean_ + rng.normal(0, self.options["spread"], (n, len(self.mean_)))
        table = pd.DataFrame(values, columns=self.columns_)
        label = self.columns_[-1]
        table[label] = (table[label] > 0.5).astype(int)
        return table


# ------------------------------------------------------------------------------ audit

def test_audit_returns_the_verdict_bounds_tables_and_folder(tmp_path):
    r = ra.audit(**FAST, out=tmp_path / "a")
    cli = CliRunner().invoke(app, ["audit", "--impl", "identity", "--attack", "querybased",
                                   "-S", "10", "--backend", "local", "--out",
                                   str(tmp_path / "b"), "--json"])
    s = json.loads(cli.stdout)
    # the same audit as the command: same id, same bounds, same verdict
    assert r.summary["audit_id"] == s["audit_id"] and r.summary["eps_cp"] == s["eps_cp"]
    # .summary is what --json prints: the same keys (estimates as the table shows them,
    # times as ISO strings), the same values but for this run's own folder and clock
    assert set(r.summary) == set(s) and isinstance(r.summary["created_at"], str)
    volatile = {"out", "created_at", "wall_s", "train_s", "models_per_hour"}
    worded = volatile | {"verdict"}  # the same sentence, its advice in each interface's words
    assert {k: v for k, v in r.summary.items() if k not in worded} == \
        {k: v for k, v in s.items() if k not in worded}
    assert r.eps_max == s["eps_max"] and r.auc == s["auc"]
    # 10 models per world cannot show eps 1: the command says to raise its flag, the API
    # its keyword (a notebook has no --shadow-models)
    assert "raise --shadow-models" in s["verdict"] and "--" not in r.verdict
    assert r.verdict == r.summary["verdict"] == s["verdict"].replace("--shadow-models",
                                                                     "shadow_models=")
    # both count models as --json does: both worlds, the per-world count named as such
    assert r.summary["models"] == s["models"] == 20 and "shadow_models" not in r.summary
    assert r.out == tmp_path / "a" and set(r.estimates) >= {"cp", "jeffreys", "bayes"}
    assert isinstance(r.shadow, pd.DataFrame) and len(r.shadow) == 20
    assert r.to_frame().loc[0, "impl"] == "identity"
    html = r._repr_html_()
    assert "identity vs querybased on worst-case" in html and r.verdict[:40] in html


def test_the_notebook_box_of_an_audit_that_could_not_show_a_violation_is_amber():
    """The report's colours (raudit.audit.verdict.caution): eps_max <= the claim was green."""
    from raudit.api.results import AuditResult

    row = {"out": "x", "impl": "paper", "attack": "groundhog", "dataset": "cervical",
           "epsilon": 1.0, "auc": 1.0, "eps_cp": 0.0, "eps_curve": 0.0, "eps_max": 0.53,
           "models_ok": 40, "verdict": "no violation detected, but this audit cannot detect"}
    edge = {name: AuditResult({**row, **extra}).to_html().split("border-left:")[1][:20]
            for name, extra in [("short", {}), ("clean", {"eps_max": 3.0}),
                                ("violated", {"eps_max": 3.0, "eps_cp": 1.5})]}
    assert "#d80" in edge["short"] and "#2a7" in edge["clean"] and "#c22" in edge["violated"]


@pytest.mark.parametrize("kwargs, flags", [
    (dict(threat_model="grey-box"), ["--threat-model", "grey-box"]),
    (dict(shadow_models="many"), ["-S", "many"]),
    (dict(one_run=True, sequential="anytime"), ["--one-run", "--sequential", "anytime"]),
    (dict(one_run=True, target_width=0.5), ["--one-run", "--target-width", "0.5"]),
    (dict(threat_model="white-box", synthetic_in="x", synthetic_out="y"),
     ["--threat-model", "white-box", "--synthetic-in", "x", "--synthetic-out", "y"]),
    (dict(threat_model="transcript", until_ceiling=True),
     ["--impl", "paper", "--threat-model", "transcript", "--until-ceiling"]),
    (dict(synthetic_in="x"), ["--synthetic-in", "x"]),
    (dict(options={"no_such_option": 1}), ["--impl", "paper", "-o", "no_such_option=1"]),
])
def test_audit_refuses_what_the_command_refuses_with_its_message(tmp_path, kwargs, flags):
    impl = "paper" if "--impl" in flags else "identity"
    flags = [f for f in flags if f not in ("--impl", "paper")]
    cli = cli_error("audit", "--impl", impl, "--backend", "local", *flags, "--out",
                     str(tmp_path / "cli"))
    api = api_error(ra.audit, impl=impl, backend="local", out=tmp_path / "api", **kwargs)
    assert api == cli
    assert not (tmp_path / "api").exists()


@pytest.mark.parametrize("fn, kwargs, message", [
    # each ran into the work before: int(10.5) models, a TypeError from a comparison, from
    # Path(), from range() after the utility folder was written; train took seed 2.5
    (ra.audit, dict(FAST, shadow_models=10.5),
     "shadow_models must be an integer or a string, got 10.5"),
    (ra.audit, dict(FAST, delta="x"), "delta must be a number or None, got 'x'"),
    (ra.audit, dict(FAST, out=123), "out must be a string or a path or None, got 123"),
    (ra.train, dict(seed=2.5), "seed must be an integer, got 2.5"),
    (ra.utility, dict(fits=1.5, backend="local"), "fits must be an integer, got 1.5"),
    (ra.utility, dict(epsilon=[1, "x"], backend="local"),
     "epsilon must be a number or a list (a number each) or None, got [1, 'x']"),
    (ra.inspect, dict(threads=2.5), "threads must be an integer, got 2.5"),
    (ra.campaign, dict(config="c.yaml", only=5),
     "only must be a string or a list (a string each) or None, got 5"),
    (ra.report, dict(results=123), "results must be a string or a path or AuditResult or "
     "UtilityResult or CampaignResult, got 123"),
])
def test_a_python_value_of_the_wrong_type_is_refused_before_any_work(tmp_path, monkeypatch, fn,
                                                                      kwargs, message):
    monkeypatch.chdir(tmp_path)
    assert api_error(fn, **kwargs) == message
    assert not list(tmp_path.iterdir())  # no folder written


@pytest.mark.parametrize("kwargs, message", [
    # the run layer's own checks, for AuditSettings built in Python (raudit.runs.audit_plan)
    (dict(shadow_models=10.5), "--shadow-models takes a number or auto, got 10.5"),
    (dict(chunk_size=float("inf")), "--chunk-size takes a number or auto, got inf"),
    (dict(delta="x"), "delta must be in (0, 1), got 'x'"),
    (dict(out=123), "--out must be a folder path, got 123"),
])
def test_audit_settings_refuse_values_the_command_cannot_be_given(kwargs, message):
    from raudit.runs.audit_plan import prepare
    from raudit.runs.audit_settings import AuditSettings

    settings = AuditSettings(**{**{k: v for k, v in FAST.items() if k != "quiet"}, **kwargs})
    with pytest.raises(ConfigError) as info:
        prepare(settings)
    assert str(info.value) == message


@pytest.mark.parametrize("row, lower", [
    ({"eps_cp": 0.2, "eps_curve": 0.7}, 0.7),  # the curve bound, which the verdict reads
    ({"eps_cp": None, "eps_one_run": 1.5}, 1.5),  # a one-run audit has no CP bound
    ({"eps_cp": 0.0, "eps_anytime": 0.4}, 0.4),  # --sequential anytime: its own bound
])
def test_eps_lower_is_the_bound_the_verdict_reads(row, lower):
    from raudit.api.results import AuditResult
    from raudit.audit.verdict import audited_eps

    r = AuditResult({"impl": "x", "attack": "y", "dataset": "z", "epsilon": 1.0,
                     "out": "runs/x", "verdict": "v", "eps_max": None, **row})
    assert r.eps_lower == lower == audited_eps(r.summary)
    assert r.violated == (lower > 1.0)
    assert f"<td style='text-align:left'>{lower:.3f}</td>" in r.to_html()  # not "n/a"


# ------------------------------------------------------------------------------ train

def test_train_returns_the_synthetic_table_and_summary(tmp_path):
    r = ra.train(impl="paper", dataset="worst-case", max_iter=3, out=tmp_path, quiet=True)
    assert isinstance(r.synthetic, pd.DataFrame) and len(r.synthetic) == r.summary["rows"]
    saved = json.loads((tmp_path / "summary.json").read_text())
    assert saved["iterations"] == r.iterations and (tmp_path / "synthetic.parquet").exists()
    assert "paper" in r._repr_html_()


def test_train_refuses_a_bad_format_as_the_command_does(tmp_path):
    cli = cli_error("train", "--format", "xml", "--out", str(tmp_path / "c"))
    assert api_error(ra.train, fmt="xml", out=tmp_path / "a") == cli


# ------------------------------------------------------------------------------ utility

def test_utility_returns_its_tables(tmp_path):
    r = ra.utility(impl="independent", dataset="breast-cancer", fits=1, samples=1,
                   classifier="lr", setting=["B"], backend="local", out=tmp_path, quiet=True)
    pc = r.per_classifier
    assert not pc.empty and set(pc["setting"]) == {"B"} and set(pc["classifier"]) == {"lr"}
    assert r.out == tmp_path and not r.fits.empty and not r.failed


def test_utility_refuses_an_unknown_sweep_as_the_command_does(tmp_path):
    cli = cli_error("utility", "--sweep", "colour", "--backend", "local")
    assert api_error(ra.utility, sweep="colour", backend="local") == cli


# ------------------------------------------------------------------------------ inspect

def test_inspect_returns_the_violations_table(tmp_path):
    r = ra.inspect(impl="independent", dataset="breast-cancer", probes=False, out=tmp_path,
                   quiet=True)
    assert {"impl", "status"} <= set(r.violations.columns)
    assert set(r.violations["impl"]) == {"independent"}
    assert "independent" in r.text() and (tmp_path / "inspect.json").exists()


def test_inspect_refuses_zero_threads_as_the_command_does():
    assert api_error(ra.inspect, threads=0) == cli_error("inspect", "--threads", "0")


# ------------------------------------------------------------------- campaign and report

CAMPAIGN = """\
name: api-test
jobs:
  - name: rr
    kind: audit
    impl: identity
    attack: querybased
    shadow_models: 10
"""


def test_campaign_and_report(tmp_path):
    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN)
    c = ra.campaign(config, out=tmp_path / "runs", backend="local", quiet=True)
    assert c.failed_jobs == [] and list(c.jobs["job"]) == ["rr"]
    said = c.summary["jobs"]["rr"]["verdict"]  # a job's verdict advises the API's keyword too
    assert "raise shadow_models=" in said and "--" not in said
    assert len(c.table("summary")) == 1
    page = ra.report(c, out=tmp_path / "report", quiet=True)
    assert page.page.exists() and "Audits" in page.sections
    # carried to another folder (machine) by export / import: the same summary there
    moved = ra.campaign(config, out=tmp_path / "runs", export=tmp_path / "c.zip", quiet=True)
    assert moved.jobs == ["rr"] and moved.file.exists()
    there = ra.campaign(config, out=tmp_path / "there", import_=moved.file, backend="local",
                        quiet=True)
    pd.testing.assert_frame_equal(there.table("summary")[["auc", "eps_cp"]],
                                  c.table("summary")[["auc", "eps_cp"]])


def test_campaign_and_report_refuse_as_the_commands_do(tmp_path):
    missing = tmp_path / "none.yaml"
    assert api_error(ra.campaign, config=missing) == cli_error("campaign", str(missing))
    config = tmp_path / "c.yaml"
    config.write_text(CAMPAIGN)
    assert (api_error(ra.campaign, config=config, export=tmp_path / "x.zip", dry_run=True)
            == cli_error("campaign", str(config), "--export", str(tmp_path / "x.zip"), "--dry-run"))
    assert (api_error(ra.report, results=tmp_path, fmt="pdf")
            == cli_error("report", str(tmp_path), "--format", "pdf"))


# ------------------------------------------------------------------------------ defaults

@pytest.mark.parametrize("name", ["audit", "train", "utility", "inspect", "campaign", "report"])
def test_the_api_takes_the_commands_defaults(name):
    import importlib

    command = getattr(importlib.import_module(f"raudit.cli.{name}"), name)
    renamed = {"option": "options", "sequential_rule": "sequential", "impl": "impl"}
    cli = {renamed.get(n, n): p.default for n, p in pyinspect.signature(command).parameters.items()
           if n != "as_json"}
    api = {n: p.default for n, p in pyinspect.signature(getattr(ra, name)).parameters.items()
           if n != "quiet"}
    if name == "inspect":  # the command's --impl is repeatable: none given is paper
        cli.pop("impl"), api.pop("impl")
    assert set(api) == set(cli)
    differ = {n: (api[n], cli[n]) for n in cli
              if cli[n] is not pyinspect.Parameter.empty and api[n] != cli[n]
              and not (str(api[n]) == str(cli[n]))}
    assert not differ


def test_import_raudit_stays_cheap_and_help_is_useful():
    import subprocess
    import sys

    code = ("import sys, raudit; print(sorted(m for m in sys.modules if m.startswith("
            "('raudit.', 'torch', 'pandas', 'ray'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
    for fn in (ra.audit, ra.train, ra.utility, ra.inspect, ra.campaign, ra.report):
        assert "Returns" in fn.__doc__ and fn.__doc__.split()[0][0].isupper(), fn.__name__
    assert "verdict" in ra.audit.__doc__ and "backend=\"local\"" in ra.audit.__doc__


def test_help_of_raudit_audit_after_a_bare_import_names_the_function():
    """`import raudit; help(raudit.audit)` raised AttributeError (the subpackages were not
    imported); now it shows the audit package, whose docstring names raudit.api.audit."""
    import subprocess
    import sys

    code = ("import raudit; print(raudit.audit.__doc__, raudit.utility.__doc__, "
            "raudit.inspect.__doc__, raudit.campaign.__doc__); raudit.no_such_thing")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    for fn in ("audit", "utility", "inspect", "campaign"):
        assert f"raudit.api.{fn}`" in run.stdout
    assert "AttributeError: module 'raudit' has no attribute 'no_such_thing'" in run.stderr


# ---------------------------------------------------------------- a user's own generator

def test_a_generator_class_defined_here_is_audited_in_this_process(tmp_path):
    class Leaky(Generator):  # defined in a function: not importable by module:Class
        def _fit(self, data, *, epsilon, delta, seed, columns, observer):
            self.data_ = data.reset_index(drop=True)
            self.summary_ = {"iterations": 0}

        def sample(self, n, *, seed=0):
            rng = np.random.default_rng(seed)
            return self.data_.sample(n, replace=n != len(self.data_), random_state=rng)

    before = generators.names()
    r = ra.audit(**{**FAST, "impl": Leaky, "shadow_models": 20}, out=tmp_path / "a")
    assert r.summary["models_ok"] == 40 and r.auc == 1.0  # it releases its training data
    assert generators.names() == before  # registered for the call only
    # the same class under Ray: refused before any work, saying what to do
    with pytest.raises(ConfigError, match="backend='local'"):
        ra.audit(**{**FAST, "impl": Leaky, "backend": "ray"}, out=tmp_path / "b")
    assert not (tmp_path / "b").exists()


def test_an_importable_generator_class_and_an_instance(tmp_path):
    t = ra.train(impl=NoisyMean(spread=0.05), dataset="breast-cancer", out=tmp_path / "t",
                 quiet=True)
    assert t.summary["impl"].endswith(":NoisyMean") and t.summary["options"]["spread"] == 0.05
    r = ra.audit(**{**FAST, "impl": NoisyMean, "options": {"spread": 0.2}}, out=tmp_path / "a")
    assert r.summary["impl"].endswith(":NoisyMean") and r.summary["models_ok"] == 20
    assert api_error(ra.audit, **{**FAST, "impl": 3}).startswith("impl must be a generator")


# ------------------------------------------------------------ checked once, below both

def test_the_audit_command_only_maps_flags():
    """Issue 44 item 5: the cross-flag rules live in the run layer's threat models, so the
    command and the API cannot drift apart; the command raises nothing of its own."""
    from pathlib import Path

    import raudit.cli.audit as command
    from raudit.runs.threats import THREATS

    source = Path(command.__file__).read_text()
    assert "ConfigError" not in source and "raise " not in source
    assert THREATS.names() == ["active", "black-box", "external", "one-run", "transcript",
                               "white-box"]


def test_a_failed_classifier_is_in_the_utility_result_never_green(tmp_path):
    from raudit import classifiers
    from raudit.classifiers.base import Classifier

    class Broken:
        def fit(self, X, y):
            raise IndexError("index 0 is out of bounds for axis 0 with size 0")

    classifiers.CLASSIFIERS.register("broken-api", Classifier("broken-api", "Broken",
                                                              lambda s: Broken()))
    try:
        r = ra.utility(impl="independent", dataset="breast-cancer", fits=1, samples=1,
                       classifier="broken-api", setting="B", backend="local", retries=0,
                       out=tmp_path, quiet=True)
    finally:
        classifiers.CLASSIFIERS.unregister("broken-api")
    assert r.failed == ["independent eps=1: IndexError: index 0 is out of bounds for axis 0 "
                        "with size 0"]
    assert "failed: independent eps=1: IndexError" in r.to_html()
