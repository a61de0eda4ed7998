"""`raudit train` and the CLI's error boundary."""

import json

import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.cli.app import app

runner = CliRunner()


def run(*args):
    return runner.invoke(app, [str(a) for a in args])


def test_help_lists_commands():
    res = run("--help")
    assert res.exit_code == 0
    for cmd in ("train", "datasets", "generators"):
        assert cmd in res.output


def test_train_paper_on_embedded_data_writes_outputs(tmp_path):
    out = tmp_path / "run"
    res = run("train", "--impl", "paper", "--dataset", "breast-cancer", "--epsilon", 1,
              "--out", out, "--json")
    assert res.exit_code == 0, res.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["iterations"] >= 1 and summary["eps_hat"] >= 1.0
    assert summary["wall_s"] > 0 and summary["options"]["preset"] == "default"
    synth = pd.read_parquet(out / "synthetic.parquet")
    assert len(synth) == summary["rows"] == 455
    assert sorted(synth.iloc[:, -1].unique()) in ([0], [1], [0, 1])
    assert json.loads(res.output)["iterations"] == summary["iterations"]


def test_train_options_reach_the_generator(tmp_path):
    res = run("train", "--teachers", 3, "--lambda", 0.01, "--max-iter", 4, "-o", "noise_scale=direct",
              "--out", tmp_path / "o", "--format", "csv", "--rows", 17, "--json")
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "o" / "summary.json").read_text())
    hp = s["details"]["hyperparameters"]
    assert (hp["teachers"], hp["lam"], hp["max_iter"], hp["noise_scale"]) == (3, 0.01, 4, "direct")
    assert len(pd.read_csv(tmp_path / "o" / "synthetic.csv")) == 17


@pytest.mark.parametrize("args,message", [
    (("--epsilon", 0), "epsilon must be a positive"),
    (("--delta", 2), "delta must be in (0, 1)"),
    (("--impl", "nope"), "unknown generator 'nope'; known:"),
    (("--dataset", "nope"), "unknown dataset 'nope'; known:"),
    (("--teachers", 0), "teachers must be"),
    (("--teachers", 10_000), "10000 teachers for 455 training rows"),
    (("-o", "bogus=1"), "has no option 'bogus'"),
    (("-o", "novalue"), "must be KEY=VALUE"),
    (("--dataset", "missing.csv"), "missing.csv"),
    (("--impl", "no.such.module:Gen"), "cannot load generator plugin"),
    (("--format", "xlsx"), "--format"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, args, message):
    out = tmp_path / "out"
    res = run("train", *args, "--out", out)
    assert res.exit_code == 2, res.output
    err = res.stderr.strip()
    assert err.startswith("error: ") and "\n" not in err and message in err, err
    assert "Traceback" not in res.output
    assert not out.exists()


def test_single_class_user_file_is_rejected(tmp_path):
    f = tmp_path / "one.csv"
    pd.DataFrame({"a": [1, 2, 3], "y": [1, 1, 1]}).to_csv(f, index=False)
    res = run("train", "--dataset", f, "--out", tmp_path / "o")
    assert res.exit_code == 2 and "error:" in res.stderr


def test_user_csv_with_label_option(tmp_path):
    f = tmp_path / "mine.csv"
    pd.DataFrame({"y": [0, 1] * 20, "a": range(40), "b": [0.5] * 40}).to_csv(f, index=False)  # b constant
    res = run("train", "--dataset", f, "--label", "y", "--teachers", 2, "--max-iter", 3,
              "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    assert list(pd.read_parquet(tmp_path / "o" / "synthetic.parquet").columns) == ["a", "b", "y"]


def test_plugin_generator_by_module_path(tmp_path):
    res = run("train", "--impl", "raudit.generators.debug:IdentityGenerator", "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output


def test_generators_command_lists_paper():
    res = run("generators")
    assert res.exit_code == 0 and "paper" in res.output


def test_constant_column_survives_the_round_trip(tmp_path):
    f = tmp_path / "const.csv"
    pd.DataFrame({"a": range(40), "b": [0.5] * 40, "y": [0, 1] * 20}).to_csv(f, index=False)
    res = run("train", "--dataset", f, "--teachers", 2, "--max-iter", 3, "--out", tmp_path / "o")
    assert res.exit_code == 0, res.output
    synth = pd.read_parquet(tmp_path / "o" / "synthetic.parquet")
    assert (synth["b"] == 0.5).all()


def test_generators_name_lists_one_ports_options_with_values_and_defaults():
    res = run("generators", "original")
    assert res.exit_code == 0, res.output
    assert "delta_bug" in res.output and "xor | correct" in res.output
    assert "gaussian | laplace" in res.output


def test_generators_fixed_shows_every_option_with_one_line():
    # issue 44 item 6: each of fixed's options says what it does, on one line
    from raudit import generators

    res = run("generators", "fixed", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = {r["option"]: r for r in json.loads(res.stdout)}
    names = [o.name for o in generators.get("fixed").describe().options]
    assert sorted(rows) == sorted(names) and len(names) >= 20
    for name, row in rows.items():
        assert row["what"] and "\n" not in row["what"], name
    assert rows["critic"]["values"] == "rows | joint" and rows["iterations"]["default"] == "100"


def test_generators_gpate_lists_every_preset_its_constructor_takes():
    # issue 47: the preset row names gpate's presets, read from the same constants the
    # constructors check, and every generator's list is exactly what it accepts
    from raudit import generators
    from raudit.errors import ConfigError

    res = run("generators", "gpate", "--format", "json")
    assert res.exit_code == 0, res.output
    rows = {r["option"]: r for r in json.loads(res.stdout)}
    assert rows["preset"]["values"] == "default | paper-eps1 | paper-eps10 | paper-tabular"
    for name in ("paper", "borealis", "updated", "synthcity", "original", "gan", "fixed",
                 "dpgan", "gpate"):
        cls = generators.get(name)
        spec = {o.name: o for o in cls.describe().options}["preset"]
        assert spec.choices[0] == "default", name
        for preset in spec.choices:
            cls(preset=preset)  # accepted
        with pytest.raises(ConfigError):
            cls(preset="no-such-preset")
    assert {o.name: o for o in generators.get("paper").describe().options}["preset"].choices \
        == ("default", "paper")


def test_generators_unknown_name_is_a_usage_error():
    res = run("generators", "nope")
    assert res.exit_code == 2 and "nope" in res.output


def _strcol(tmp_path):
    f = tmp_path / "strcol.csv"
    pd.DataFrame({"age": [30 + i % 40 for i in range(60)],
                  "city": ["Paris", "Lyon", "Nice"] * 20,
                  "label": ["no", "yes", "no"] * 20}).to_csv(f, index=False)
    return f


def test_a_text_column_needs_its_declared_categories(tmp_path):
    """strcol.csv's `city` came out as floats (0.70, 1.05) with no mapping: now its domain
    is declared, and without the declaration the run is refused before any work."""
    f = _strcol(tmp_path)
    res = run("train", "--impl", "paper", "--dataset", f, "--max-iter", 3, "--out", tmp_path / "r")
    assert res.exit_code == 2 and len(res.stderr.strip().splitlines()) == 1, res.output
    assert "strcol.categories.json" in res.stderr and not (tmp_path / "r").exists()

    (tmp_path / "strcol.categories.json").write_text('{"city": ["Paris", "Lyon", "Nice", "Lille"]}')
    res = run("train", "--impl", "paper", "--dataset", f, "--max-iter", 3, "--format", "csv",
              "--out", tmp_path / "r")
    assert res.exit_code == 0, res.output
    synth = pd.read_csv(tmp_path / "r" / "synthetic.csv")
    assert set(synth.city) <= {"Paris", "Lyon", "Nice", "Lille"}
    assert set(synth.label) <= {"no", "yes"}
    coding = json.loads((tmp_path / "r" / "categories.json").read_text())
    assert coding["columns"] == {"city": ["Paris", "Lyon", "Nice", "Lille"]}
    assert coding["label"] == {"column": "label", "0": "no", "1": "yes"}
    assert coding["declared_in"] == str((tmp_path / "strcol.categories.json").resolve())
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["categories"] == "categories.json"
