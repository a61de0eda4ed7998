"""``--control shuffle``: the data-free control of any generator, the training labels
permuted before each fit (raudit.utility.controls). Known answers from the calibration
generators: ``identity`` publishes its training table, so its control is the permuted table
and the real arm must beat it; ``independent`` reads no record, so its control is the same
fit bit for bit."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError
from raudit.runs.utility import run_utility
from raudit.utility import controls, plan
from raudit.utility.plan import UtilityRequest
from raudit.utility.runner import frame
from raudit.utility.verdict import learning_sentence

LOCAL = EngineConfig(backend="local")


def _table() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(50, 2))
    return pd.DataFrame({"a": x[:, 0], "b": x[:, 1], "y": (x[:, 0] > 0).astype(int)})


def test_shuffled_labels_permute_the_label_only_by_the_seed():
    t = _table()
    s = controls.shuffled_labels(t, 7)
    pd.testing.assert_frame_equal(s[["a", "b"]], t[["a", "b"]])  # features and row order kept
    assert sorted(s["y"]) == sorted(t["y"])  # the label marginal exactly
    assert not s["y"].equals(t["y"])  # the link is broken
    pd.testing.assert_frame_equal(controls.shuffled_labels(t, 7), s)  # a function of the seed
    assert not controls.shuffled_labels(t, 8)["y"].equals(s["y"])
    assert t["y"].equals((t["a"] > 0).astype(int))  # the input is untouched


def test_the_permutation_depends_on_root_and_fit_only():
    assert plan.shuffle_seed(0, 1) == plan.shuffle_seed(0, 1)
    assert len({plan.shuffle_seed(r, f) for r in (0, 1) for f in (0, 1, 2)}) == 6
    # a purpose of its own in the UTILITY stream: never a fit's or a sample's seed
    assert plan.shuffle_seed(0, 0) != plan.seeds(0, 0)["seed"]


def test_identity_beats_its_shuffle_control_at_every_eps(tmp_path):
    req = UtilityRequest(impl="identity", dataset="breast-cancer", epsilons=(1.0, 2.0), fits=8,
                         samples=1, classifiers=("lr",), settings=("B",), control="shuffle")
    res = run_utility(req, tmp_path / "u", LOCAL)
    (curve,) = res["learning"]
    assert curve["control"] == "shuffle" and curve["threshold"] == 1.0
    for row in curve["rows"]:
        assert row["fits"] == 8 and row["p"] < 0.01
        assert row["real_mean"] > 0.95  # LR on the real table itself
        # LR on labels with no link: a lottery per fit (breast-cancer's classes lie along
        # its main directions, so a random direction often scores far from 0.5, either
        # way), centred on 0.5 within three standard errors
        assert abs(row["control_mean"] - 0.5) < 3 * row["control_se"]
    df = frame(tmp_path / "u")
    ctrl = df[df["control"] == "shuffle"]
    per_fit = ctrl.groupby(["epsilon", "fit_index"])["value"].mean().unstack(0)
    # the same permutation of fit f at both eps (identity ignores eps), another per fit
    assert np.allclose(per_fit[1.0], per_fit[2.0]) and per_fit[1.0].nunique() == 8
    # the label marginal is the real one in every control table
    real_share = df[df["control"].isna()]["label_share"].iloc[0]
    assert np.allclose(ctrl["label_share"].dropna(), real_share)
    line = learning_sentence("identity", "breast-cancer", curve)
    assert "label-shuffle control" in line and "learns from eps = 1" in line


def test_a_generator_that_reads_no_record_equals_its_shuffle_control(tmp_path):
    req = UtilityRequest(impl="independent", dataset="breast-cancer", epsilons=(1.0, 2.0), fits=3,
                         samples=1, classifiers=("lr",), settings=("B",), control="shuffle")
    res = run_utility(req, tmp_path / "u", LOCAL)
    for row in res["learning"][0]["rows"]:
        assert row["diff"] == 0.0 and row["real_mean"] == row["control_mean"]
    assert res["learning"][0]["threshold"] is None


def test_shuffle_is_taken_by_generators_that_do_not_vote():
    for impl in ("dpgan", "gan", "independent", "fixed"):
        plan.check_control(UtilityRequest(impl=impl, dataset="breast-cancer", control="shuffle"))


@pytest.mark.parametrize("impl, control, needle", [
    ("dpgan", "coin", "dpgan does not vote or aggregate"),
    ("independent", "coin", "independent does not vote or aggregate.*--control shuffle works with any generator"),
    ("paper", "dice", "--control takes coin or shuffle, got 'dice'"),
    ("dpgan", "dice", "--control takes coin or shuffle"),
])
def test_bad_controls_are_refused_before_any_work(tmp_path, impl, control, needle):
    with pytest.raises(ConfigError, match=needle):
        run_utility(UtilityRequest(impl=impl, dataset="breast-cancer", control=control),
                    tmp_path / "o", LOCAL)
    assert not (tmp_path / "o").exists()


def test_a_control_cannot_go_with_real_only(tmp_path):
    for control in ("coin", "shuffle"):
        with pytest.raises(ConfigError, match="real-only"):
            run_utility(UtilityRequest(impl="paper", dataset="breast-cancer", control=control,
                                       real_only=True), tmp_path / "o", LOCAL)
    assert not (tmp_path / "o").exists()


def test_the_shuffle_control_does_not_depend_on_the_chunk_size(tmp_path):
    # fit f's permutation comes from (root, f) in the chunk, not from its place in a chunk
    def control_rows(m, out):
        req = UtilityRequest(impl="identity", dataset="breast-cancer", epsilons=(1.0,), fits=4,
                             samples=1, classifiers=("lr",), settings=("B",), control="shuffle",
                             chunk_size=m)
        run_utility(req, out, LOCAL)
        df = frame(out)
        return df[df["control"] == "shuffle"].groupby("fit_index")["value"].mean()

    pd.testing.assert_series_equal(control_rows(None, tmp_path / "all"), control_rows(1, tmp_path / "one"))
