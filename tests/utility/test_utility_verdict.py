"""The utility run's sentence: AUROC B against Setting A and a random guess, in words."""

from __future__ import annotations

from raudit.utility.verdict import sentence

OK = {"status": "ok", "label": "eps=1"}


def test_sentence_reads_the_drop_against_the_real_data():
    s = sentence("paper", "cervical", {**OK, "auroc_B": 0.70, "drop_vs_real": 0.5},
                 {"auroc": 0.90})
    assert s == ("paper eps=1 on cervical: classifiers trained on its synthetic data reach "
                 "AUROC 0.700 on real test data, against 0.900 trained on the real data: it "
                 "loses 50% of the real data's margin over a random guess")


def test_near_random_missing_a_and_failed_points():
    s = sentence("gan", "credit", {**OK, "auroc_B": 0.52}, None, subject=False)
    assert s.startswith("classifiers trained") and "close to a random guess" in s
    assert "Setting A, training on the real data, was not run" in s
    assert "as good as training on the real data" in sentence(
        "identity", "x", {**OK, "auroc_B": 0.9, "drop_vs_real": 0.0}, {"auroc": 0.9})
    assert "no result (all fits failed)" in sentence(
        "p", "x", {"status": "failed", "label": "eps=1", "reason": "all fits failed"}, None)


def _curve(threshold, *ps):
    rows = [{"epsilon": e, "real_mean": 0.6 + 0.01 * i, "control_mean": 0.55, "p": p, "fits": 5}
            for i, (e, p) in enumerate(zip((1.0, 10.0, 100.0), ps))]
    return {"rows": rows, "threshold": threshold, "alpha": 0.05, "group": ""}


def test_learning_sentence_names_the_threshold_and_its_test():
    from raudit.utility.verdict import learning_sentence

    line = learning_sentence("fixed", "epileptic", _curve(10.0, 0.4, 0.01, 0.001))
    assert line == ("fixed on epileptic against its coin-flip control (every released vote a "
                    "fair coin): learns from eps = 10 (mean AUROC B 0.610 vs 0.550, one-sided "
                    "p = 0.010 < 0.05 over 5 fits)")


def test_learning_sentence_when_the_votes_teach_nothing():
    from raudit.utility.verdict import learning_sentence

    line = learning_sentence("paper", "cervical", {**_curve(None, 0.7, 0.5), "group": "teachers=5"})
    assert line.startswith("paper (teachers=5) on cervical against its coin-flip control")
    assert "no learning shown up to eps = 10 (at eps = 10: mean AUROC B 0.610 vs 0.550, " \
           "p = 0.50 over 5 fits)" in line
    assert learning_sentence("paper", "cervical", {"rows": [], "threshold": None}) is None


def test_learning_sentence_names_classifiers_blind_on_the_real_table():
    # LR on epileptic scores 0.46 trained and tested on the real table: a curve it scores
    # alone measures nothing; beside classifiers that do see the data it only dilutes
    from raudit.utility.verdict import learning_sentence

    curve = _curve(None, 0.7, 0.5)
    lr_only = {"auroc": 0.46, "per_classifier": {"lr": {"auroc": 0.4645}}}
    line = learning_sentence("fixed", "epileptic", curve, lr_only)
    assert line.endswith("; but this curve measures nothing: on the real table itself (Setting "
                         "A) the classifiers score AUROC lr 0.46, no better than chance, so no "
                         "generator could show learning with them here (use -c rf or the "
                         "study's 12)")
    mixed = {"per_classifier": {"lr": {"auroc": 0.4645}, "rf": {"auroc": 0.9937}}}
    assert learning_sentence("fixed", "epileptic", curve, mixed).endswith(
        "; caution: lr 0.46 (AUROC on the real table itself, Setting A) cannot see this "
        "dataset and only dilute the mean")
    seeing = {"per_classifier": {"lr": {"auroc": 0.995}}}
    assert learning_sentence("fixed", "breast-cancer", curve, seeing) == \
        learning_sentence("fixed", "breast-cancer", curve)
