"""The ``datasets`` command group, run through Typer's CliRunner on the sub-app alone."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from raudit.cli.datasets import app
from raudit.data import cache, fetch

runner = CliRunner()


def invoke(*args: str):
    return runner.invoke(app, list(args), env={"COLUMNS": "200"})


def test_list_shows_every_dataset_and_where_it_is(credit_dir):
    result = invoke("list")
    assert result.exit_code == 0, result.output
    for name in ("breast-cancer", "cervical", "credit", "digits", "epileptic", "isolet", "mnist",
                 "mnist10", "worst-case"):
        assert name in result.output
    assert "284,807" in result.output and "yes (data dir)" in result.output


def test_info_json_of_a_builtin_dataset():
    result = invoke("info", "worst-case", "--json")
    assert result.exit_code == 0, result.output
    details = json.loads(result.output)
    assert details["status"] == "built in" and details["train_rows"] == 5
    assert [c["name"] for c in details["column_meta"]] == ["A", "B", "C"]
    assert details["notes"]["target_row"] == 4


def test_info_tables_with_the_measured_split(shared_data):
    result = invoke("info", "cervical")
    assert result.exit_code == 0, result.output
    assert "686" in result.output and "172" in result.output and "Biopsy" in result.output
    assert "Age" in result.output and "data" in result.output


def test_info_truncates_wide_tables():
    result = invoke("info", "digits")
    assert result.exit_code == 0 and "use --all-columns" in result.output
    assert "pixel_7_7" in invoke("info", "digits", "--all-columns").output


def test_info_of_missing_files_does_not_download(monkeypatch):
    monkeypatch.setattr(fetch, "urlopen", lambda *a, **k: pytest.fail("info must not download"))
    result = invoke("info", "credit")
    assert result.exit_code == 0 and "not here" in result.output


def _one_line(result, needle):
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and needle in err, err
    assert "Traceback" not in result.output


def test_unknown_name_is_one_line_exit_2():
    _one_line(invoke("info", "nope"), "unknown dataset 'nope'; known:")


def test_import_errors_are_one_line_exit_2(tmp_path):
    _one_line(invoke("import", str(tmp_path / "absent.csv")), "absent.csv")
    stray = tmp_path / "stray.csv"
    stray.write_text("a,b\n1,0\n")
    _one_line(invoke("import", str(stray)), "matches no known dataset file")


def test_import_with_and_without_a_checksum(tmp_path, credit_dir):
    # an unpinned file (credit) is taken once it parses as its dataset's file; a pinned one
    # must match its sha256
    good = tmp_path / "creditcard.csv"
    good.write_bytes((credit_dir / "credit_card" / "creditcard.csv").read_bytes())
    result = invoke("import", str(good), "--name", "credit")
    assert result.exit_code == 0, result.output
    assert (cache.cache_dir() / "credit_card" / "creditcard.csv").read_bytes() == good.read_bytes()
    bad = tmp_path / "risk_factors_cervical_cancer.csv"
    bad.write_text("x\n")
    _one_line(invoke("import", str(bad), "--name", "cervical"), "sha256")
