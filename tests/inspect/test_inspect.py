"""`raudit inspect`: every cell from a measurement, for plugins with injected bugs and the
real ports. The toy plugins live in inspect_plugins.py (importable as a plugin)."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from raudit import data
from raudit.cli.app import app
from raudit.events import EventLog, LabelNoise
from raudit.inspect.cells import CATEGORIES, STUDY
from raudit.inspect.context import Context
from raudit.inspect.noise import check_delta_scale, check_laplace, fit_noise
from raudit.inspect.runner import InspectSpec, inspect_generator
from raudit.inspect.trace import trace_of

PLUGIN = "inspect_plugins:ToyPate"


@pytest.fixture(scope="module")
def ds():
    return data.load("breast-cancer")


def _cells(run) -> dict:
    return {v["category"]: v for v in run["violations"]}


def _inspect(ds, bug: str) -> dict:
    return _cells(inspect_generator(InspectSpec(PLUGIN, options={"bug": bug}), ds))


def test_a_correct_plugin_is_not_flagged(ds):
    cells = _inspect(ds, "none")
    assert set(cells) == set(CATEGORIES)
    assert [c for c, v in cells.items() if v["status"] == "violated"] == []
    for c in ("pate", "data_partition", "moments_accountant", "metadata", "laplace_noise",
              "labels_distribution", "processing", "overshoot", "uncharged_queries"):
        assert cells[c]["status"] == "ok", (c, cells[c]["evidence"])
    assert "0 of 3 pairs share rows" in cells["data_partition"]["evidence"]
    assert cells["teachers"]["status"] == "not_checked"  # the toy emits no TeacherLoss


def test_teachers_sharing_rows_are_flagged(ds):
    cells = _inspect(ds, "shared-rows")
    assert cells["data_partition"]["status"] == "violated"
    assert "3 of 3 pairs share rows (largest overlap 5 rows)" in cells["data_partition"]["evidence"]
    assert cells["moments_accountant"]["status"] == "ok"


def test_an_accountant_that_forgets_a_factor_is_flagged_as_an_underestimate(ds):
    cells = _inspect(ds, "accountant-factor")
    ev = cells["moments_accountant"]["evidence"]
    assert cells["moments_accountant"]["status"] == "violated"
    assert "run (lambda 0.001" in ev and "underestimate x0.5" in ev
    assert cells["data_partition"]["status"] == "ok" and cells["metadata"]["status"] == "ok"


def test_a_metadata_leak_is_flagged_black_box(ds):
    cells = _inspect(ds, "metadata")
    assert cells["metadata"]["status"] == "violated"
    assert "the output follows it" in cells["metadata"]["evidence"]
    assert cells["data_partition"]["status"] == "ok"


def test_a_generator_without_events_gets_black_box_cells_only(ds):
    cells = _cells(inspect_generator(InspectSpec("identity"), ds))
    assert cells["pate"]["status"] == "not_checked" and "no training events" in cells["pate"]["evidence"]
    assert cells["labels_distribution"]["status"] == "violated"  # it hands back the records
    assert cells["metadata"]["status"] == "violated"  # the extreme record comes back as is
    assert cells["processing"]["status"] == "ok"


def test_noise_shape_and_delta_scale_are_measured():
    rng = np.random.default_rng(0)
    assert fit_noise(rng.laplace(scale=3.0, size=20_000))["shape"] == "laplace"
    assert fit_noise(rng.normal(scale=3.0, size=20_000))["shape"] == "gaussian"
    log = EventLog()
    one = np.ones(1, dtype=bool)
    for it in range(5):  # sigma 2.42 where (eps 1, delta 1e-5) needs 4.84: original's XOR bug
        log(LabelNoise(it, 2.421, one, rng.normal(scale=2.421, size=(1, 512))))
    ctx = Context("x", 1.0, 1e-5, train=None, synthetic=[], trace=trace_of(log))
    lap, dsc = check_laplace(ctx), check_delta_scale(ctx)
    assert lap.status == "violated" and "fit gaussian" in lap.evidence
    assert dsc.status == "violated"
    assert float(dsc.evidence.rsplit("ratio ", 1)[1]) == pytest.approx(0.5, abs=0.02)


def test_cli_json_and_out_folder(tmp_path):
    out = tmp_path / "insp"
    res = CliRunner().invoke(app, ["inspect", "--impl", PLUGIN, "--dataset", "breast-cancer",
                                   "--no-probes", "--json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    runs = json.loads(res.stdout)
    assert json.loads((out / "inspect.json").read_text()) == runs
    run = runs[0]
    assert {"impl", "dataset", "settings", "iterations", "eps_hat", "teachers_seen",
            "violations"} <= set(run)
    assert run["iterations"] == len(run["eps_hat"]) > 0
    seen = run["teachers_seen"]
    assert sorted(seen) == ["0", "1", "2", "3", "4"] and not set(seen["0"]) & set(seen["1"])  # k = 5
    manifest = json.loads((out / "raudit.json").read_text())
    assert manifest["spec"]["kind"] == "inspect"
    rows = list(csv.DictReader((out / "violations.csv").open()))
    assert list(rows[0]) == ["impl", "category", "status", "evidence", "plot"]
    assert len(rows) == len(CATEGORIES)
    plots = {r["plot"] for r in rows} - {""}
    assert plots and all((out / p).is_file() for p in plots)
    assert (out / "inspect_plugins.ToyPate-records-seen.png").is_file()


def test_cli_rejects_bad_input_before_work(tmp_path):
    res = CliRunner().invoke(app, ["inspect", "--impl", "paper", "--all"])
    assert res.exit_code == 2
    res = CliRunner().invoke(app, ["inspect", "--impl", "nope", "--dataset", "breast-cancer"])
    assert res.exit_code == 2 and "nope" in res.output


@pytest.mark.slow
@pytest.mark.parametrize("impl, violated", [
    ("paper", set()),
    ("updated", {"data_partition", "metadata", "laplace_noise", "teachers"}),
    ("turing", {"pate", "data_partition", "metadata", "laplace_noise", "delta_scale", "processing"}),
])
def test_ports_on_cervical_match_the_measured_table(impl, violated):
    """The study's settings (k = 5, eps = 1, lambda = 1e-3) on cervical; table 2's columns only."""
    from raudit import generators
    caps = generators.get(impl).describe()
    opts = {k: v for k, v in {"teachers": 5, "lam": 1e-3}.items() if caps.accepts(k)}
    run = inspect_generator(InspectSpec(impl, options=opts), data.load("cervical"))
    got = {v["category"] for v in run["violations"]
           if v["status"] == "violated" and v["category"] in dict(STUDY)}
    assert got == violated


def test_processing_holds_a_generator_to_its_declared_bounds():
    import pandas as pd

    from raudit.inspect.processing import check_processing

    train = pd.DataFrame({"age": [13, 40, 79] * 20, "label": [0, 1, 0] * 20})
    synth = pd.DataFrame({"age": [8, 30, 64] * 20, "label": [0, 1, 1] * 20})
    ctx = Context(impl="x", epsilon=1.0, delta=1e-5, train=train, synthetic=[synth], trace=None)
    assert check_processing(ctx).status == "violated"  # 8 lies below the records' 13
    ctx.output_bounds = {"age": (8.0, 64.0), "label": (0.0, 1.0)}  # DP bounds, as fixed declares
    cell = check_processing(ctx)
    assert cell.status == "ok" and "declared" in cell.evidence
    ctx.output_bounds = {"age": (16.0, 64.0), "label": (0.0, 1.0)}
    assert check_processing(ctx).status == "violated"  # 8 is outside its own claim too


def test_run_inspect_resolves_privacy_once_per_generator(monkeypatch):
    """The check before any work and the run share one ResolvedPrivacy (issue 26)."""
    from raudit import privacy
    from raudit.inspect.job import InspectRequest
    from raudit.runs.inspect import run_inspect

    calls = []
    real = privacy.PrivacySpec.resolve

    def resolve(self, generator, n_rows):
        calls.append(type(generator).__name__)
        return real(self, generator, n_rows)

    monkeypatch.setattr(privacy.PrivacySpec, "resolve", resolve)
    runs = run_inspect(InspectRequest(impls=("identity",), dataset="breast-cancer", probes=False))
    assert len(runs) == 1 and calls == ["IdentityGenerator"]


def test_a_violated_cell_reads_as_a_failure_not_a_check_mark():
    # issue 48: the terminal table marked violated cells with the study's check mark, which a
    # reader takes for "passed"
    from raudit.inspect.report import table_text

    run = {"impl": "x", "violations": [{"category": "overshoot", "status": "violated"},
                                       {"category": "uncharged_queries", "status": "ok"}]}
    text = table_text([run], evidence=False)
    row = next(line for line in text.splitlines() if line.startswith("x "))
    assert "✗" in row and "✓" not in text
