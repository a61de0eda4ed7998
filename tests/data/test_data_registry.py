"""The dataset registry: the contract every dataset meets, and each dataset's golden shape."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit import data
from raudit.errors import ConfigError, DataError, UnknownNameError

NEEDS_SHARED = {"cervical", "epileptic", "isolet", "mnist", "mnist10"}


@pytest.fixture(params=data.names())
def dataset_name(request, monkeypatch, credit_dir, shared_root):
    """Each registered name, with its files provided (reference copies, or the credit stand-in)."""
    name = request.param
    if name in NEEDS_SHARED:
        if shared_root is None:
            pytest.skip(f"{name}: reference datasets not found")
        monkeypatch.setenv("RAUDIT_DATA_DIR", str(shared_root))
    return name


def test_names_are_the_registered_datasets():
    assert data.names() == ["breast-cancer", "cervical", "credit", "digits", "epileptic",
                            "isolet", "mnist", "mnist10", "worst-case"]


def test_contract(dataset_name):
    ds = data.load(dataset_name)
    full = ds.train if dataset_name == "worst-case" else pd.concat([ds.train, ds.test])
    assert ds.name == dataset_name
    assert list(ds.train.columns) == list(ds.test.columns) == [c.name for c in ds.columns]
    assert all(pd.api.types.is_numeric_dtype(t) for t in ds.train.dtypes)
    assert not full.isna().any().any()
    classes = 10 if dataset_name == "mnist10" else 2  # the one multi-class label: the digit
    assert ds.classes == classes and set(full[ds.label].unique()) == set(range(classes))
    label_meta = ds.meta[ds.label]
    assert (label_meta.kind, label_meta.lower, label_meta.upper, label_meta.bounds) == (
        "binary" if classes == 2 else "integer", 0.0, classes - 1.0, "public")
    for meta in ds.columns:  # every record lies within its column's bounds, public or not
        assert full[meta.name].min() >= meta.lower and full[meta.name].max() <= meta.upper, meta
    if dataset_name != "worst-case":
        assert not set(ds.train.index) & set(ds.test.index)
        assert len(ds.test) == pytest.approx(0.2 * len(full), abs=1)
        # stratified: each class's rate in each part is within one row of the whole's
        for c in range(classes):
            rate = (full[ds.label] == c).mean()
            assert abs((ds.test[ds.label] == c).sum() - rate * len(ds.test)) <= 1


def test_split_is_seeded(dataset_name):
    a, b = data.load(dataset_name), data.load(dataset_name, seed=13)
    c = data.load(dataset_name, seed=14)
    assert a.train.index.equals(b.train.index)
    # worst-case is not split: the seed changes nothing
    assert a.train.index.equals(c.train.index) == (dataset_name == "worst-case")


def test_loads_return_copies_of_the_cache():
    first = data.load("breast-cancer")
    first.train.iloc[:, 0] = -1.0
    first.notes["label_rule"] = "changed"
    second = data.load("breast-cancer")
    assert (second.train.iloc[:, 0] > 0).all()
    assert second.notes["label_rule"] == "malignant = (target == 0)"


def test_worst_case_rows_exactly():
    ds = data.load("worst-case")
    assert ds.train.values.tolist() == [[0, 0, 0]] * 4 + [[1, 1, 1]]
    assert list(ds.train.columns) == ["A", "B", "C"] and ds.label == "C"
    assert ds.test.equals(ds.train) and ds.test is not ds.train
    assert ds.notes["target_row"] == 4
    d_out = ds.train.drop(index=ds.notes["target_row"])
    assert d_out.values.tolist() == [[0, 0, 0]] * 4
    assert all(m.bounds == "public" and (m.lower, m.upper) == (0, 1) for m in ds.columns)
    assert all(t == np.int64 for t in ds.train.dtypes)


def test_cervical_golden_shape(shared_data):
    """The study's numbers: 686/172 rows, 29 columns with Biopsy last, 44/11 positives."""
    ds = data.load("cervical")
    assert ds.train.shape == (686, 29) and ds.test.shape == (172, 29)
    assert ds.label == "Biopsy"
    assert (ds.train.Biopsy.sum(), ds.test.Biopsy.sum()) == (44, 11)
    assert "STDs: Time since first diagnosis" in ds.train and "STDs:HPV" not in ds.train
    floats = {c for c, t in ds.train.dtypes.items() if t == np.float64}
    assert floats == {"Smokes (years)", "Smokes (packs/year)",
                      "Hormonal Contraceptives (years)", "IUD (years)"}


def test_epileptic_shape(shared_data):
    ds = data.load("epileptic")
    assert ds.train.shape == (9200, 179) and len(ds.test) == 2300
    assert ds.label == "seizure" and ds.train.columns[0] == "X1"
    assert ds.train.seizure.sum() + ds.test.seizure.sum() == 2300


def test_isolet_part_shape(shared_data):
    ds = data.load("isolet")
    assert len(ds.train) + len(ds.test) == 1559 and ds.train.shape[1] == 618
    assert ds.train.vowel.sum() + ds.test.vowel.sum() == 300
    assert "isolet5" in ds.notes["fallback"]
    assert ds.meta["f1"].bounds == "public" and (ds.meta["f1"].lower, ds.meta["f1"].upper) == (-1, 1)


def test_mnist_shape(shared_data):
    ds = data.load("mnist")
    assert (len(ds.train), len(ds.test), ds.train.shape[1]) == (56000, 14000, 785)
    assert ds.train.is_zero.sum() + ds.test.is_zero.sum() == 6903
    assert ds.train["pixel0"].dtype == np.uint8
    assert ds.meta["pixel400"].bounds == "public" and ds.meta["pixel400"].upper == 255


def test_mnist10_is_mnist_with_its_digit(shared_data):
    ds, binary = data.load("mnist10"), data.load("mnist")
    assert (len(ds.train), len(ds.test), ds.train.shape[1], ds.label, ds.classes) == (
        56000, 14000, 785, "digit", 10)
    full = pd.concat([ds.train, ds.test]).sort_index()
    assert full.digit.value_counts().sort_index().tolist() == [
        6903, 7877, 6990, 7141, 6824, 6313, 6876, 7293, 6825, 6958]  # MNIST's 70,000 digits
    same = pd.concat([binary.train, binary.test]).sort_index()  # the same rows, pixels and zeros
    assert full.drop(columns="digit").equals(same.drop(columns="is_zero"))
    assert ((full.digit == 0).astype("int64") == same.is_zero).all()
    assert ds.meta["digit"] == data.ColumnMeta("digit", "integer", 0.0, 9.0, "public")
    assert binary.classes == 2 and data.info("mnist10")["classes"] == 10
    assert data.info("mnist10")["positives"] is None


def test_a_multi_class_label_is_refused_where_a_binary_one_is_needed(shared_data):
    data.require_binary(data.load("mnist"), "an audit")
    with pytest.raises(ConfigError, match="^an audit needs a binary 0/1 label; dataset 'mnist10' "
                                          "has a 10-class label"):
        data.require_binary(data.load("mnist10"), "an audit")


def test_builtin_tables():
    bc, dg = data.load("breast-cancer"), data.load("digits")
    assert len(bc.train) + len(bc.test) == 569 and bc.train.shape[1] == 31
    assert bc.train.malignant.sum() + bc.test.malignant.sum() == 212
    assert len(dg.train) + len(dg.test) == 1797 and dg.train.shape[1] == 65
    assert dg.train.is_zero.sum() + dg.test.is_zero.sum() == 178
    assert {(m.lower, m.upper, m.bounds) for m in dg.columns[:-1]} == {(0, 16, "public")}
    assert {m.bounds for m in bc.columns[:-1]} == {"data"}


def test_credit_label_is_rounded_not_truncated(credit_dir):
    """The study cast Class with int(), turning a stored 0.9999999 into 0; rounding keeps it 1."""
    ds = data.load("credit")
    assert list(ds.train.columns[:2]) == ["Time", "V1"] and ds.label == "Class"
    assert ds.train.Class.sum() + ds.test.Class.sum() == 6


def test_credit_with_wrong_schema_is_refused(tmp_path, monkeypatch):
    (tmp_path / "credit_card").mkdir()
    pd.DataFrame({"a": [1, 2], "Class": [0, 1]}).to_csv(tmp_path / "credit_card/creditcard.csv")
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(tmp_path))
    with pytest.raises(DataError, match="lacks the columns"):
        data.load("credit")


def test_isolet_reads_the_full_uci_files(tmp_path, monkeypatch):
    rng = np.random.default_rng(1)
    (tmp_path / "isolet").mkdir()
    for name, n in (("isolet1+2+3+4.data", 52), ("isolet5.data", 26)):
        x = rng.uniform(-1, 1, (n, 617)).round(4)
        lines = [", ".join(f"{v:.4f}" for v in row) + f", {float(i % 26 + 1)}" for i, row in enumerate(x)]
        (tmp_path / "isolet" / name).write_text("\n".join(lines) + "\n")
    monkeypatch.setenv("RAUDIT_DATA_DIR", str(tmp_path))
    ds = data.load("isolet")
    assert len(ds.train) + len(ds.test) == 78 and ds.train.shape[1] == 618
    assert ds.train.vowel.sum() + ds.test.vowel.sum() == 15
    assert "fallback" not in ds.notes and ds.notes["part"].startswith("full")


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownNameError, match="unknown dataset 'cervicl'; known: breast-cancer, cervical"):
        data.load("cervicl")


def test_missing_path_is_a_data_error(tmp_path):
    with pytest.raises(DataError, match="no such file"):
        data.load(str(tmp_path / "nope.csv"))


def test_missing_files_say_how_to_fix(monkeypatch):
    # credit's URL is unreachable offline: the message names the file and both fixes. Its
    # file has no pinned hash, so unpinned downloads are allowed first (the refusal without
    # that is tested in test_data_fetch); it used to pass only after a test leaked the flag.
    monkeypatch.setenv("RAUDIT_ALLOW_UNPINNED", "1")
    with pytest.raises(DataError, match=r"credit_card/creditcard.csv.*RAUDIT_DATA_DIR.*datasets import"):
        data.load("credit")


def test_options_for_user_files_only():
    with pytest.raises(ConfigError, match="user files"):
        data.load("digits", label="is_zero")


@pytest.mark.parametrize("seed", [-1, 1.5, True, 2**32])
def test_bad_seed(seed):
    with pytest.raises(ConfigError, match="seed"):
        data.load("digits", seed=seed)


def test_info_is_static_and_json_ready(credit_dir):
    import json

    for name in data.names():
        i = data.info(name)
        json.dumps(i)
        assert {"rows", "columns", "positives", "licence", "status", "available"} <= set(i)
    assert data.info("credit")["status"] == "data dir"
    assert data.info("worst-case")["status"] == "built in"
    with pytest.raises(UnknownNameError):
        data.info("nope")


def test_an_audit_of_mnist10_is_refused_in_one_line_before_any_work(shared_data, tmp_path):
    from typer.testing import CliRunner

    from raudit.cli.app import app

    out = tmp_path / "audit"
    res = CliRunner().invoke(app, ["audit", "--impl", "identity", "--dataset", "mnist10",
                                   "--backend", "local", "--out", str(out)])
    err = res.stderr.strip()
    assert res.exit_code == 2 and err.startswith("error: ") and "\n" not in err, res.output
    assert "needs a binary 0/1 label" in err and not out.exists()
