"""Fault suite, promise: an ``exec:`` plugin cannot outlive its timeout, exhaust raudit's
memory, crash raudit with what it writes, or leave a copy of the training data behind.

Plugins here are small shell scripts (a fast start); each test names the red team's
defect (issue 46 item 12) it keeps from coming back."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
import tracemalloc
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from raudit.errors import DataError
from raudit.generators.exec_adapter import exec_class

FIT_OK = 'echo \'{"iterations": 2, "eps_hat": 0.5}\' > summary.json\n'


@pytest.fixture
def table():
    rng = np.random.default_rng(0)
    return pd.DataFrame({"x": rng.normal(size=30), "label": rng.integers(0, 2, 30)})


def _plugin(folder: Path, fit: str, sample: str = "", name: str = "p", **cfg) -> str:
    """A config and a bash plugin: ``fit``/``sample`` are bash run in the work folder."""
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / f"{name}.sh"
    script.write_text(f"#!/bin/bash\ncd \"$1\"\nif grep -q '\"fit\"' request.json; then\n"
                      f"{fit}\nelse\n{sample or 'true'}\nfi\n")
    script.chmod(0o755)
    conf = folder / f"{name}.json"
    conf.write_text(json.dumps({"command": [cfg.pop("program", str(script))], "timeout_s": 60,
                                "name": name, **cfg}))
    return str(conf)


def _running(pid: int) -> bool:
    """Alive and not a zombie (a killed child waits for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def _gone_soon(pid: int, within_s: float = 5.0) -> bool:
    end = time.monotonic() + within_s
    while time.monotonic() < end:
        if not _running(pid):
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("ending", ["timeout", "exit"])
def test_the_whole_process_group_ends_with_the_plugin(tmp_path, table, ending):
    # a script's background `sleep 300` survived the timeout with parent 1
    pidfile = tmp_path / "child.pid"
    tail = "sleep 300" if ending == "timeout" else "exit 0"
    conf = _plugin(tmp_path / "p", f'sleep 300 &\necho $! > "$PIDFILE"\n{FIT_OK}{tail}\n',
                   env={"PIDFILE": str(pidfile)}, timeout_s=1)
    gen = exec_class(conf)()
    try:
        if ending == "timeout":
            with pytest.raises(DataError, match="timeout"):
                gen.fit(table, epsilon=1.0)
        else:
            gen.fit(table, epsilon=1.0)
        child = int(pidfile.read_text())
        assert _gone_soon(child), f"the plugin's child {child} outlived it"
    finally:
        if pidfile.exists() and _running(int(pidfile.read_text())):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_output_is_streamed_not_held(tmp_path, table):
    # 300 MB of stdout was held whole (1.33 GB peak); 40 MB here, with the message last
    conf = _plugin(tmp_path / "p", "head -c 40000000 /dev/zero\n"
                   "head -c 3000000 /dev/zero | tr '\\0' 'e' >&2\n"
                   "echo 'the real reason' >&2\nexit 3\n")
    tracemalloc.start()
    try:
        with pytest.raises(DataError, match=r"exited with status 3: .*the real reason") as err:
            exec_class(conf)().fit(table, epsilon=1.0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 << 20, f"peak {peak / 2**20:.0f} MiB while reading the plugin's output"
    assert "\n" not in str(err.value)


def test_output_that_is_not_utf8(tmp_path, table):
    # a UnicodeDecodeError inside raudit made the plugin impossible to audit
    conf = _plugin(tmp_path / "p", "printf 'caf\\xe9 \\xff\\xfe broke\\n' >&2\nexit 1\n")
    with pytest.raises(DataError, match="exited with status 1: caf\ufffd \ufffd\ufffd broke"):
        exec_class(conf)().fit(table, epsilon=1.0)


@pytest.mark.parametrize("fit,needle", [
    ("echo '[1, 2]' > summary.json", "summary.json must be a JSON object, got list"),
    ("echo '{\"iterations\": \"five\"}' > summary.json", "iterations must be a whole number"),
    ("echo '{\"eps_hat\": [1]}' > summary.json", "eps_hat must be a number or null"),
    ("printf '\\xff\\xfe' > summary.json", "summary.json written by the external generator is not JSON"),
    (FIT_OK + "printf '{\"a\": 1}\\n{oops\\n' > events.jsonl", "events.jsonl line 2 is not JSON"),
    (FIT_OK + "echo '[3]' > events.jsonl", "events.jsonl line 1 must be a JSON object"),
], ids=["summary-list", "iterations-text", "eps-list", "summary-binary", "events-bad-line",
        "events-not-object"])
def test_fit_outputs_of_the_wrong_shape(tmp_path, table, fit, needle):
    with pytest.raises(DataError, match=needle) as err:
        exec_class(_plugin(tmp_path / "p", fit))().fit(table, epsilon=1.0)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize("sample,needle", [
    ("echo 'PAR1 not really' > synthetic.parquet", "synthetic.parquet that cannot be read"),
    ("printf 'x,label\\n\\xff\\xfe\\x00\\x81,\\xc3\\n' > synthetic.csv",
     "synthetic.csv that cannot be read"),
], ids=["broken-parquet", "binary-csv"])
def test_sample_outputs_that_cannot_be_read(tmp_path, table, sample, needle):
    model = exec_class(_plugin(tmp_path / "p", FIT_OK, sample))().fit(table, epsilon=1.0)
    with pytest.raises(DataError, match=needle) as err:
        model.sample(5)
    assert "\n" not in str(err.value)


def test_relative_program_is_the_configs_in_the_check_and_the_run(tmp_path, table, monkeypatch):
    # the check resolved ./p.sh against the current folder, the run against the temporary
    # work folder: a config that passed the check could not start
    conf = _plugin(tmp_path / "cfg", FIT_OK, program="./p.sh")
    for cwd in (tmp_path / "cfg", tmp_path):
        monkeypatch.chdir(cwd)
        exec_class.cache_clear()
        model = exec_class(conf)().fit(table, epsilon=1.0)
        assert model.summary()["iterations"] == 2


def test_a_relative_script_argument_is_the_configs_too(tmp_path, table, monkeypatch):
    # `[bash, p.sh]`: the interpreter is found on PATH and its script, an argument, was looked
    # up in the temporary work folder, where it is not; an option stays as written
    conf = Path(_plugin(tmp_path / "cfg", FIT_OK))
    cfg = json.loads(conf.read_text())
    cfg["command"] = ["bash", "--noprofile", "p.sh"]
    conf.write_text(json.dumps(cfg))
    monkeypatch.chdir(tmp_path)
    exec_class.cache_clear()
    model = exec_class(str(conf))()
    assert model.config["command"] == ["bash", "--noprofile", str(tmp_path / "cfg" / "p.sh")]
    assert model.fit(table, epsilon=1.0).summary()["iterations"] == 2


def test_stale_work_folders_of_dead_owners_are_removed(tmp_path):
    from raudit.generators import plugin_process

    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = tmp_path / f"{plugin_process.PREFIX}{dead.pid}-abc"
    mine = tmp_path / f"{plugin_process.PREFIX}{os.getpid()}-def"
    other = tmp_path / "raudit-exec-notapid"
    for p in (stale, mine, other):
        p.mkdir()
        (p / "train.parquet").write_bytes(b"data")
    assert plugin_process.remove_stale(tmp_path) == [stale]
    assert not stale.exists() and mine.exists() and other.exists()


@pytest.mark.slow  # two Python processes (~10 s on a loaded machine)
def test_sigkill_leaves_no_copy_of_the_training_data(tmp_path):
    # after a SIGKILL of raudit, /tmp/raudit-exec-* kept train.parquet; the next run removes it
    pidfile = tmp_path / "plugin.pid"
    conf = _plugin(tmp_path / "p", f'echo $$ > "$PIDFILE"\n{FIT_OK}sleep 300\n',
                   env={"PIDFILE": str(pidfile)})
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    code = textwrap.dedent(f"""
        import numpy as np, pandas as pd
        from raudit.generators.exec_adapter import exec_class
        df = pd.DataFrame({{"x": np.arange(30.0), "label": [0, 1] * 15}})
        exec_class({conf!r})().fit(df, epsilon=1.0)
        """)
    env = {**os.environ, "TMPDIR": str(tmp)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env)
    try:
        end = time.monotonic() + 120
        while not pidfile.exists() and time.monotonic() < end and proc.poll() is None:
            time.sleep(0.1)
        assert pidfile.exists(), "the plugin never started"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        left = list(tmp.glob("raudit-exec-*"))
        assert left and (left[0] / "train.parquet").exists()  # what SIGKILL leaves
        again = subprocess.run([sys.executable, "-c", ("from raudit.generators import "
                                "plugin_process as p; p.work_folder().cleanup()")],
                               env=env, timeout=120, check=False)
        assert again.returncode == 0
        assert list(tmp.glob("raudit-exec-*")) == []
    finally:
        if proc.poll() is None:
            proc.kill()
        if pidfile.exists():  # the plugin's group (raudit, killed, could not end it)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pidfile.read_text()), signal.SIGKILL)


@pytest.mark.slow  # a CLI process
def test_a_broken_plugin_output_under_train_is_one_line(tmp_path):
    conf = _plugin(tmp_path / "p", "echo '[1]' > summary.json")
    r = subprocess.run([sys.executable, "-c", "from raudit.cli.app import main; main()", "train",
                        "--impl", f"exec:{conf}", "--dataset", "breast-cancer", "--out",
                        str(tmp_path / "out")], capture_output=True, text=True, timeout=300,
                       check=False)
    err = r.stderr.strip()
    assert r.returncode != 0 and err.startswith("error: ") and "\n" not in err, err[-2000:]
    assert "summary.json must be a JSON object" in err
