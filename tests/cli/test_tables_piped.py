"""Tables that survive pipes: with stdout not a terminal (a pipe, a file, CliRunner)
every name is printed in full on one line per row; --format csv/json give the same cells;
a real terminal of 80 columns wraps long cells instead of cutting them."""

from __future__ import annotations

import csv
import io
import json
import re
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from raudit import data
from raudit import generators as registry
from raudit.cli import tables
from raudit.cli.app import app


def _run(*args):
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


def test_datasets_list_piped_shows_every_name_in_full():
    out = _run("datasets", "list")
    assert "…" not in out
    lines = out.splitlines()
    for name in data.names():  # one line per dataset, its name first and whole
        assert any(ln.split()[0] == name for ln in lines), name
    assert any("Breast Cancer Wisconsin (Diagnostic), bundled with scikit-learn" in ln
               for ln in lines)


def test_generators_piped_lists_full_names_and_option_defaults():
    out = _run("generators")
    assert "…" not in out
    lines = {ln.split()[0]: ln for ln in out.splitlines()[1:] if ln.strip()}
    for name in registry.names():
        assert name in lines, name
    assert "randomized-response" in lines
    # an option with its default, one decided by the preset, one at run time
    assert "lam=0.001" in lines["paper"] and "teachers=(preset)" in lines["paper"]
    assert "noise_scale=inverse" in lines["paper"] and "device=(auto)" in lines["paper"]


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_machine_formats_carry_the_same_cells(fmt):
    out = _run("datasets", "list", "--format", fmt)
    rows = (list(csv.DictReader(io.StringIO(out))) if fmt == "csv" else json.loads(out))
    assert [r["name"] for r in rows] == data.names()
    by_name = {r["name"]: r for r in rows}
    assert by_name["worst-case"]["available here?"] == "yes (built in)"
    assert by_name["credit"]["rows"] == "284,807"


def test_unknown_format_is_one_line_exit_2():
    res = CliRunner().invoke(app, ["datasets", "list", "--format", "xml"])
    assert res.exit_code == 2 and "--format takes auto, table, plain, csv, json" in res.output


def test_terminal_table_wraps_instead_of_cutting(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = tables.render(["name", "description"],
                         [["worst-case", "a long description " * 8]], fmt="table")
    assert "…" not in text and "worst-case" in text
    visible = re.sub(r"\x1b\[[0-9;]*m", "", text)  # without the colour codes
    assert max(len(ln) for ln in visible.splitlines()) <= 80


def test_campaign_dry_run_piped_shows_full_job_names(tmp_path):
    cfg = tmp_path / "c.yaml"
    cfg.write_text("name: pipes\njobs:\n  - name: wc-a-rather-long-job-name-{impl}\n"
                   "    grid:\n      impl: [paper, original]\n    attack: querybased\n"
                   "    shadow_models: 5\n    max_iter: 2\n")
    out = _run("campaign", str(cfg), "--dry-run", "--backend", "local")
    for impl in ("paper", "original"):
        assert any(ln.startswith(f"wc-a-rather-long-job-name-{impl} ")
                   for ln in out.splitlines()), out
    assert "…" not in out and any(ln.startswith("total ") for ln in out.splitlines())


def test_real_pipe_through_cat():
    """The command as a user pipes it: a subprocess whose stdout is a pipe."""
    r = subprocess.run([sys.executable, "-m", "raudit.cli.app", "datasets", "list"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and "worst-case " in r.stdout and "…" not in r.stdout
