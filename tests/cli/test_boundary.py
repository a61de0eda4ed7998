"""The command line's boundary: usage errors are one line, stdout carries only the result."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest


def _py(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)


def test_noise_on_file_descriptor_1_goes_to_stderr():
    # Ray's raylet and workers write straight to fd 1 ("(raylet) A worker died ..."),
    # and so do child processes; --json output must still parse.
    r = _py("""
        import os, subprocess, sys
        from raudit.cli.errors import results_only_stdout
        with results_only_stdout():
            os.write(1, b"(raylet) A worker died\\n")
            print("python noise")
            subprocess.run([sys.executable, "-c", "print('child noise')"])
        print('{"auc": 1.0}')
    """)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == {"auc": 1.0}
    assert "A worker died" in r.stderr and "child noise" in r.stderr


@pytest.mark.parametrize("argv,needle", [
    (["audit", "--epsilon", "abc"], "Invalid value for '--epsilon'"),
    (["train", "--no-such-flag"], "No such option: --no-such-flag"),
    (["datasets", "info", "nope"], "unknown dataset 'nope'"),
])
def test_usage_errors_are_one_line_exit_2(argv, needle):
    r = _py(f"from raudit.cli.app import main; main({argv!r})")
    assert r.returncode == 2, r.stderr
    err = r.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and needle in err, err
    assert r.stdout == ""


def test_help_still_exits_0():
    r = _py("from raudit.cli.app import main; main(['audit', '--help'])")
    assert r.returncode == 0 and "--synthetic-rows" in r.stdout


def test_train_refuses_an_unwritable_out_before_training(tmp_path):
    (tmp_path / "f").write_text("x")
    r = _py(f"from raudit.cli.app import main; main(['train', '--out', {str(tmp_path / 'f' / 'o')!r}])")
    assert r.returncode == 2 and "cannot write to --out" in r.stderr
    assert "iterations" not in r.stdout  # nothing trained


def test_bad_bounds_and_infinite_values_are_one_line(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a,b\n" + "".join(f"{i},{i % 2}\n" for i in range(10)))
    bounds = tmp_path / "b.json"
    bounds.write_text('{"a": "x"}')
    r = _py(f"from raudit.cli.app import main; main(['train', '--dataset', {str(csv)!r}, "
            f"'--bounds', {str(bounds)!r}, '--out', {str(tmp_path / 'o')!r}])")
    assert r.returncode == 2 and "must be a list of two numbers" in r.stderr
    csv.write_text("a,b\n" + "".join(f"{i},{i % 2}\n" for i in range(9)) + "inf,1\n")
    r = _py(f"from raudit.cli.app import main; main(['train', '--dataset', {str(csv)!r}, "
            f"'--out', {str(tmp_path / 'o')!r}])")
    assert r.returncode == 2 and "infinite value" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
