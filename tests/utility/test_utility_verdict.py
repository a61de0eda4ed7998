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
