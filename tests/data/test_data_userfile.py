"""Loading a user's CSV/Parquet table: label choice, encoding, bounds files and refusals."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest

from raudit import data
from raudit.errors import DataError


def table(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "y": np.arange(n) % 4 == 0,  # 10 True, 30 False
        "income": rng.normal(50.0, 10.0, n),
        "flag": np.arange(n) % 2,
    })


@pytest.fixture
def csv(tmp_path):
    path = tmp_path / "people.csv"
    table().to_csv(path, index=False)
    return path


def test_last_column_is_the_default_label(csv):
    ds = data.load(str(csv))
    assert ds.name == "people" and ds.label == "flag" and ds.source == str(csv.resolve())
    assert (len(ds.train), len(ds.test)) == (32, 8)
    assert ds.notes["positive_class"] == 1


def test_label_option_moves_it_last_and_maps_true_to_1(csv):
    ds = data.load(str(csv), label="y")
    assert list(ds.train.columns) == ["age", "income", "flag", "y"]
    assert ds.train.y.sum() + ds.test.y.sum() == 10 and ds.notes["positive_class"] is True
    kinds = {c.name: (c.kind, c.bounds) for c in ds.columns}
    assert kinds == {"age": ("integer", "data"), "income": ("continuous", "data"),
                     "flag": ("binary", "data"), "y": ("binary", "public")}


def test_parquet(tmp_path):
    path = tmp_path / "t.parquet"
    table().to_parquet(path)
    ds = data.load(path, label="y")
    assert ds.label == "y" and ds.train.shape == (32, 4)


def test_text_columns_become_codes_of_their_declared_categories(tmp_path):
    """The domain comes from t.categories.json, in its order (a value the records never
    hold, "purple", is still a category), never from the records."""
    path = tmp_path / "t.csv"
    df = table().assign(colour=["red", "blue", "green", "blue"] * 10, y=["yes", "no", "no", "no"] * 10)
    df.to_csv(path, index=False)
    (tmp_path / "t.categories.json").write_text(
        json.dumps({"colour": ["red", "green", "blue", "purple"]}))
    ds = data.load(path, label="y")
    assert ds.notes["positive_class"] == "yes" and ds.train.y.sum() + ds.test.y.sum() == 10
    assert ds.notes["categories"]["colour"] == ["red", "green", "blue", "purple"]
    assert ds.notes["label_values"] == ["no", "yes"]
    full = pd.concat([ds.train, ds.test]).sort_index()
    assert full.colour.tolist()[:4] == [0, 2, 1, 2]
    meta = ds.meta["colour"]
    assert (meta.kind, meta.categories, meta.bounds, meta.lower, meta.upper) == (
        "categorical", (0.0, 1.0, 2.0, 3.0), "public", 0.0, 3.0)


def test_a_text_column_without_declared_categories_is_refused(tmp_path):
    path = tmp_path / "strcol.csv"
    table().assign(city=["Paris", "Lyon"] * 20).to_csv(path, index=False)
    with pytest.raises(DataError) as err:
        data.load(path, label="y")
    msg = str(err.value)
    assert "\n" not in msg and "'city' holds text" in msg
    assert str(tmp_path / "strcol.categories.json") in msg and '{"city": [' in msg


@pytest.mark.parametrize("declared, needle", [
    ({"city": ["Paris"]}, "holds 'Lyon', not one of its categories"),
    ({"city": ["Paris", "Lyon"], "town": ["A"]}, "lists columns the table lacks: ['town']"),
    ({"city": ["Paris", "Lyon"], "y": ["a", "b"]}, "lists the label 'y'"),
    ({"city": []}, "non-empty lists"),
    ({"city": ["Paris", "Paris", "Lyon"]}, "lists a value twice"),
])
def test_bad_declared_categories_are_refused(tmp_path, declared, needle):
    path = tmp_path / "strcol.csv"
    table().assign(city=["Paris", "Lyon"] * 20).to_csv(path, index=False)
    (tmp_path / "strcol.categories.json").write_text(json.dumps(declared))
    with pytest.raises(DataError, match=re.escape(needle)):
        data.load(path, label="y")


def test_decode_gives_back_the_files_values():
    notes = {"categories": {"city": ["Paris", "Lyon", "Nice"]}, "label_values": ["no", "yes"]}
    synth = pd.DataFrame({"age": [30.0, 40.0, 50.0, 60.0], "city": [0.70, 1.05, -0.4, 7.0],
                          "y": [0.0, 1.0, 1.0, 0.0]})
    out = data.decode(synth, notes)
    assert out.city.tolist() == ["Lyon", "Lyon", "Paris", "Nice"]  # rounded, clipped
    assert out.y.tolist() == ["no", "yes", "yes", "no"] and out.age.tolist() == synth.age.tolist()
    assert data.decode(synth, {}).equals(synth)  # a registered dataset's table: as it is


def test_json_bounds_mark_columns_public(csv, tmp_path):
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({"age": [0, 120], "flag": [0, 1]}))
    ds = data.load(str(csv), label="y", bounds=bounds)
    assert (ds.meta["age"].lower, ds.meta["age"].upper, ds.meta["age"].bounds) == (0, 120, "public")
    assert ds.meta["flag"].bounds == "public" and ds.meta["flag"].kind == "binary"
    assert ds.meta["income"].bounds == "data"


def test_csv_bounds_and_a_wider_range_for_a_binary_column(csv, tmp_path):
    bounds = tmp_path / "b.csv"
    bounds.write_text("column,lower,upper\nflag,0,5\nincome,-1000,1000\n")
    ds = data.load(str(csv), label="y", bounds=str(bounds))
    assert (ds.meta["flag"].kind, ds.meta["flag"].upper, ds.meta["flag"].categories) == ("integer", 5, ())
    assert ds.meta["income"].bounds == "public"


@pytest.mark.parametrize(("bounds", "message"), [
    ({"age": [0, 50]}, "outside its public bounds"),
    ({"nope": [0, 1]}, "unknown columns"),
    ({"age": [5, 1]}, "lower <= upper"),
])
def test_bad_bounds(csv, tmp_path, bounds, message):
    path = tmp_path / "b.json"
    path.write_text(json.dumps(bounds))
    with pytest.raises(DataError, match=message):
        data.load(str(csv), label="y", bounds=path)


def test_missing_bounds_file(csv, tmp_path):
    with pytest.raises(DataError, match="no such bounds file"):
        data.load(str(csv), bounds=tmp_path / "none.json")


@pytest.mark.parametrize(("content", "label", "message"), [
    ("", None, "is empty"),
    ("a,b\n", None, "no rows"),
    ("a,b\n1,0\n2,0\n3,0\n", None, "1 distinct value"),
    ("a,b\n1,0\n2,1\n3,2\n", None, "3 distinct value"),
    ("a,b\n1,0\n2,1\n", "c", "no label column 'c'"),
    ("a,b\n1,0\n,1\n", None, "missing values"),
    ("a,b\n1,0\n2,1\n3,0\n", None, "cannot split"),
    ("b\n0\n1\n", None, "only the label column"),
])
def test_unusable_tables_are_refused_in_one_line(tmp_path, content, label, message):
    path = tmp_path / "t.csv"
    path.write_text(content)
    with pytest.raises(DataError, match=message) as err:
        data.load(str(path), label=label)
    assert "\n" not in str(err.value)


def test_unsupported_suffix(tmp_path):
    path = tmp_path / "t.xlsx"
    path.write_bytes(b"x")
    with pytest.raises(DataError, match="unsupported file type"):
        data.load(path)


def test_parsed_once_and_copies_returned(csv, monkeypatch):
    from raudit.data import userfile

    first = data.load(str(csv))
    monkeypatch.setattr(userfile, "_read", lambda p: pytest.fail("parsed twice"))
    first.train.iloc[:, 0] = -5
    second = data.load(str(csv))
    assert (second.train.age >= 18).all()


def test_a_continuous_last_column_names_plain_values_and_suggests_label(tmp_path):
    """Issue 48: a wrong label column printed `np.float64(50782.9)` and no way out."""
    from typer.testing import CliRunner

    from raudit.cli.app import app

    csv = tmp_path / "income.csv"
    csv.write_text("age,label,income\n30,0,50782.9\n40,1,61000.5\n50,0,72000.25\n")
    r = CliRunner().invoke(app, ["train", "--dataset", str(csv), "--out", str(tmp_path / "o")])
    assert r.exit_code == 2
    line = r.stderr.strip()
    assert "\n" not in line and "np.float64" not in line
    assert "label 'income' has 3 distinct value(s) (50782.9, 61000.5, 72000.25)" in line
    assert line.endswith("name the label column with --label COLUMN (default: the last column)")


def test_a_text_column_handed_to_a_generator_gets_advice_that_holds():
    """The advice was "`raudit datasets import` does it for CSV files", which that command
    refuses ("matches no known dataset file by checksum"): it now names what does."""
    from raudit.generators.base import check_table

    df = pd.DataFrame({"city": ["Paris", "Lyon"] * 5, "y": [0, 1] * 5})
    with pytest.raises(DataError) as err:
        check_table(df)
    msg = str(err.value)
    assert "datasets import" not in msg and "--dataset FILE" in msg and ".categories.json" in msg
