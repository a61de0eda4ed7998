"""Campaign files: grids, --only, and errors that name the key and the line (all at once)."""

from __future__ import annotations

import textwrap

import pytest

from raudit.campaign import config as cf
from raudit.campaign import plan as pl
from raudit.errors import ConfigError
from raudit.runs.calibrate import choose_m


def _write(tmp_path, text):
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def test_grid_expands_into_named_jobs(tmp_path):
    p = _write(tmp_path, """\
        name: g
        defaults: {attack: querybased, shadow_models: 10}
        jobs:
          - name: wc-{impl}
            grid: {impl: [paper, original], epsilon: [1, 5]}
          - kind: utility
            name: u
            impl: paper
        """)
    header, jobs = cf.load(p)
    assert header["name"] == "g"
    assert [j.name for j in jobs] == ["wc-paper-1", "wc-paper-5", "wc-original-1",
                                      "wc-original-5", "u"]
    assert {(j.settings["impl"], j.settings["epsilon"]) for j in jobs if j.kind == "audit"} == \
        {("paper", 1), ("paper", 5), ("original", 1), ("original", 5)}
    assert all(j.settings["shadow_models"] == 10 for j in jobs if j.kind == "audit")
    assert [j.name for j in cf.select(jobs, ["u"])] == ["u"]
    with pytest.raises(ConfigError, match="--only nope matches no job"):
        cf.select(jobs, ["nope"])


def test_every_error_names_its_key_and_line(tmp_path):
    p = _write(tmp_path, """\
        name: bad
        jobs:
          - name: a
            impl: paper
            attack: querybased
            shadow_models: many
          - name: b
            impl: paper
            attack: querybased
            shadow_modles: 10
          - name: c
            impl: nosuchgen
            attack: querybased
          - name: d
            kind: utility
            impl: paper
            dataset: cervical
            fits: 0
          - name: e
            impl: original
            attack: querybased
            lam: 0.1
        """)
    _, specs = cf.load(p)
    with pytest.raises(ConfigError) as err:
        pl.build_all(specs)
    msg = str(err.value)
    assert msg.startswith("5 error(s) in the campaign")
    lines = msg.splitlines()[1:]
    assert "c.yaml:6: job a, key 'shadow_models'" in lines[0] and "integer" in lines[0]
    assert "c.yaml:10: job b, key 'shadow_modles'" in lines[1] and "unknown audit setting" in lines[1]
    assert "c.yaml:12: job c, key 'impl'" in lines[2] and "nosuchgen" in lines[2]
    assert "c.yaml:18: job d, key 'fits'" in lines[3]
    assert "c.yaml:22: job e, key 'lam'" in lines[4] and "--lambda" in lines[4]


@pytest.mark.parametrize("text,needle", [
    ("jobs: []\n", "c.yaml:1: `jobs:` must be a non-empty list"),
    ("jobz: []\n", "c.yaml:1: unknown key 'jobz'"),
    ("jobs:\n  - kind: train\n", "c.yaml:2: jobs[0].kind must be one of audit, utility, inspect"),
    ("jobs:\n  - name: x\n  - name: x\n", "job name 'x' is used twice"),
    ("jobs:\n  - name: a b\n", "must be letters"),
    ("jobs:\n  - {name: x\n", "c.yaml:3: not valid YAML"),
    ("jobs:\n  - name: x\n    name: y\n", "c.yaml:3: key 'name' given twice"),
    ("jobs:\n  - name: x-{eps}\n    grid: {impl: [a]}\n", "not a grid key"),
])
def test_structural_errors(tmp_path, text, needle):
    with pytest.raises(ConfigError) as err:
        cf.load(_write(tmp_path, text))
    assert needle in str(err.value)


def test_inspect_jobs_need_the_inspect_module(tmp_path, monkeypatch):
    monkeypatch.setattr(pl, "INSPECT_RUNNER", "raudit.inspect.no_such_module:run")
    _, specs = cf.load(_write(tmp_path, "jobs:\n  - name: i\n    kind: inspect\n    impl: paper\n"))
    with pytest.raises(ConfigError, match="c.yaml:2: job i: inspect jobs need raudit inspect"):
        pl.build_all(specs)


def test_chunk_size_choice_per_device():
    cpu = {1: 74.0, 8: 445.0, 32: 938.0}  # model-iterations/s (README's CPU figures)
    assert choose_m(cpu, "cpu", models=2000, workers=2) == 32
    assert choose_m({1: 74.0, 8: 900.0, 32: 938.0}, "cpu", 2000, 2) == 8  # within 10% of best
    assert choose_m(cpu, "cpu", models=40, workers=2) == 10  # two chunks per worker
    gpu = {32: 5e3, 128: 2e4, 512: 7e4}
    assert choose_m(gpu, "cuda", models=40, workers=2) == 512  # a GPU slot idles on small M
    with pytest.raises(ValueError):
        choose_m({}, "cpu", 10, 1)


def test_cli_dry_run_plans_and_bad_files_fail_in_one_line(tmp_path):
    import json

    from typer.testing import CliRunner

    from raudit.cli.app import app

    good = _write(tmp_path, """\
        name: dry
        jobs:
          - name: wc
            attack: querybased
            shadow_models: 10
            max_iter: 3
        """)
    res = CliRunner().invoke(app, ["campaign", str(good), "--dry-run", "--json",
                                   "--backend", "local"])
    assert res.exit_code == 0, res.output
    plan = json.loads(res.stdout)
    (job,) = plan["jobs"]
    assert (job["job"], job["models"], job["iterations_per_model"], job["model_iterations"]) == \
        ("wc", 20, 3, 60)
    assert job["wall_s"] > 0 and not job["lower_bound"]
    bad = tmp_path / "bad.yaml"
    bad.write_text("jobs:\n  - name: a\n    shadow_models: -3\n")
    res = CliRunner().invoke(app, ["campaign", str(bad), "--dry-run"])
    assert res.exit_code == 2 and "bad.yaml:3: job a, key 'shadow_models'" in res.output
    assert not (tmp_path / "runs").exists()


def test_every_error_of_one_job_at_once(tmp_path):
    """Issue 48: the docs promise every error at once; a job showed only its first."""
    p = _write(tmp_path, """\
        name: bad
        jobs:
          - name: a
            impl: paper
            attack: querybased
            shadow_models: many
            colour: red
            epsilon: 0
        """)
    _, specs = cf.load(p)
    with pytest.raises(ConfigError) as err:
        pl.build_all(specs)
    lines = str(err.value).splitlines()
    assert lines[0] == "3 error(s) in the campaign:"
    keys = sorted(ln.split("key ")[1].split(":")[0] for ln in lines[1:])
    assert keys == ["'colour'", "'epsilon'", "'shadow_models'"]


@pytest.fixture
def no_local_data(tmp_path, monkeypatch):
    """A machine without the credit files: empty data dir and cache, unpinned not allowed;
    the current folder holds small.csv. What the tests load there is forgotten after them
    (the process's parsed and to-be-shipped tables), so no later test reads this world."""
    from raudit import data

    monkeypatch.setenv("RAUDIT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("RAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RAUDIT_ALLOW_UNPINNED", raising=False)
    (tmp_path / "data").mkdir()
    rows = [f"{i % 7},{(i * 3) % 11},{i % 2}" for i in range(80)]
    (tmp_path / "small.csv").write_text("a,b,label\n" + "\n".join(rows) + "\n")
    monkeypatch.chdir(tmp_path)
    yield
    data.clear_cache()


UNAVAILABLE = """\
    name: u
    defaults: {kind: utility, fits: 2, samples: 1, classifiers: [lr]}
    jobs:
      - name: u-{impl}-{dataset}
        grid: {impl: [paper, original], dataset: [small.csv, credit]}
    """


def test_jobs_of_a_dataset_this_machine_lacks_are_skipped_in_one_line(tmp_path, no_local_data):
    _, specs = cf.load(_write(tmp_path, UNAVAILABLE))
    skipped: list[pl.Skipped] = []
    jobs = pl.build_all(specs, skipped=skipped)
    assert [j.name for j in jobs] == ["u-paper-small.csv", "u-original-small.csv"]
    assert [s.job for s in skipped] == ["u-paper-credit", "u-original-credit"]
    (line,) = pl.skipped_lines(skipped)  # one line per dataset, not per job
    assert line.startswith("skipped 2 job(s) of dataset credit (u-paper-credit, u-original-credit)")
    assert "raudit datasets import" in line and "\n" not in line


def test_a_missing_dataset_is_an_error_without_a_skip_list_or_when_nothing_is_left(
        tmp_path, no_local_data):
    _, specs = cf.load(_write(tmp_path, UNAVAILABLE))
    with pytest.raises(ConfigError, match=r"c.yaml:4: job u-paper-credit: .*no pinned sha256"):
        pl.build_all(specs)
    only_credit = [s for s in specs if s.name.endswith("credit")]
    with pytest.raises(ConfigError, match="2 error"):
        pl.build_all(only_credit, skipped=[])


def test_a_job_with_a_bad_key_is_an_error_even_if_its_data_is_missing(tmp_path, no_local_data):
    _, specs = cf.load(_write(tmp_path, UNAVAILABLE.replace("samples: 1", "samples: 0")))
    with pytest.raises(ConfigError, match="samples"):
        pl.build_all(specs, skipped=[])
