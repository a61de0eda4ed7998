"""Bounds apart from estimates, and "no signal" only where no threshold has signal (issue 49).

Only bounds valid for any mechanism (CP, curve) are named eps_emp and decide the
verdict; an estimate (GDP, GDP fit, Bayes, Jeffreys, multi-sample) is printed apart,
under its assumption, capped and flagged where its value says nothing about the
mechanism, and not shown where its assumption is known false. The rows below are the
issue's own numbers.
"""

from __future__ import annotations

from raudit import generators
from raudit.audit.estimators import (ESTIMATORS, bound_names, estimate_lines, estimate_names,
                                     known_false, shown)
from raudit.audit.verdict import auc_is_real, no_signal, verdict


def test_only_bounds_are_named_eps_emp():
    assert bound_names()[0] == "cp" and set(bound_names()) == {"cp", "curve"}
    assert set(estimate_names()) == {"jeffreys", "bayes", "gdp", "gdp_fit", "bayes_multi"}
    for name in ESTIMATORS.names():
        est = ESTIMATORS.get(name)
        assert est.label.startswith("eps_emp") == est.is_bound, est.label
        assert not est.in_verdict or est.is_bound


def test_the_advertised_audits_gdp_is_capped_and_flagged():
    # "eps_emp GDP 25.746 (assumes gaussian-tradeoff)" beside "eps_emp CP 4.673 of max
    # 4.681": 800 error-free trials per world
    row = {"eps_max": 4.681, "tp": 400, "fn": 0, "tn": 400, "fp": 0, "mu_gdp": 3.4,
           "mechanism_releases": "gaussian"}
    lines = dict(estimate_lines(row, {"gdp": 25.746, "jeffreys": 4.9, "bayes": 4.2}))
    assert lines["GDP estimate"].startswith("> 4.681 (assumes gaussian-tradeoff)")
    assert "ABOVE THE CEILING" in lines["GDP estimate"] and "25.75" in lines["GDP estimate"]
    assert "no error" in lines["GDP estimate"] and "no error" in lines["Bayes estimate"]
    assert lines["Bayes estimate"].startswith("4.200 ")
    assert not any(text.startswith("25.7") for text in lines.values())


def test_gdp_is_not_shown_for_a_laplace_or_randomized_response_mechanism():
    for kind in ("laplace", "randomized-response"):
        text = shown("gdp", 4.2, ceiling=8.0, no_error=False, releases=(kind,))
        assert text.startswith("not shown: it assumes a Gaussian trade-off curve") and kind in text
        assert known_false("gdp_fit", (kind,)) and not known_false("bayes", (kind,))
    assert shown("gdp", 1.5, ceiling=8.0, no_error=False, releases=("gaussian",)) == \
        "1.500 (assumes gaussian-tradeoff)"
    row = {"eps_max": 7.5, "tp": 300, "fn": 100, "tn": 350, "fp": 50, "mu_gdp": 1.19,
           "mechanism_releases": "laplace"}
    lines = dict(estimate_lines(row, {"gdp": 5.5, "gdp_fit": 4.9, "bayes": 1.0}))
    assert lines["GDP estimate"].startswith("not shown") and "GDP mu" not in lines
    assert lines["GDP fit estimate"].startswith("not shown")


def test_generators_declare_the_noise_they_release():
    def releases(name):
        return generators.get(name).capabilities.releases

    for name in ("paper", "updated", "synthcity", "smartnoise", "borealis"):
        assert releases(name) == ("laplace",), name
    for name in ("fixed", "dpgan", "gpate"):
        assert releases(name) == ("gaussian",), name
    assert releases("randomized-response") == ("randomized-response",)
    assert releases("identity") == ()


def _transcript_row(**kw):
    # raudit audit --impl paper --threat-model transcript --dataset worst-case --epsilon 2
    # -S 200000 --seed 0: the best threshold sits in a tail, CP 0.80 of eps_true 1.061
    base = {"epsilon": 2.0, "eps_cp": 0.800, "eps_curve": 0.61, "eps_max": 7.6, "auc": 0.56,
            "tpr": 0.0026, "fpr": 0.0009, "tp": 208, "fn": 79792, "tn": 79928, "fp": 72,
            "missing": 0}
    return {**base, **kw}


def test_a_tail_threshold_with_a_bound_is_not_no_signal():
    assert not no_signal(_transcript_row())
    assert not no_signal(_transcript_row(tpr=0.994, fpr=0.987, eps_cp=1.09))
    assert "no signal" not in verdict(_transcript_row())


def test_no_signal_is_never_printed_beside_a_real_auc():
    # an exec: generator that resamples its training rows, -S 50: AUC (test) 0.80, and the
    # threshold chosen on 10 validation models per world labelled every test model "in"
    row = {"epsilon": 1.0, "eps_cp": 0.0, "eps_curve": 0.0, "eps_max": 2.5, "auc": 0.80,
           "tpr": 1.0, "fpr": 1.0, "tp": 20, "fn": 0, "tn": 0, "fp": 20, "missing": 0}
    assert auc_is_real(row) and not no_signal(row)
    text = verdict(row)
    assert "no signal" not in text and "AUC 0.80 is real" in text
    # the same split with an AUC chance gives: no signal, said plainly
    flat = {**row, "auc": 0.52}
    assert not auc_is_real(flat) and no_signal(flat)
    assert "the attack found no signal (AUC 0.52)" in verdict(flat)


def test_a_pure_dp_generator_is_shown_as_pure_dp():
    from raudit.cli.audit_view import claimed

    assert claimed({"impl": "randomized-response", "epsilon": 1.0, "delta": 1e-5}) == \
        "1 (pure DP, delta 0; the bounds are computed at delta 1e-05)"
    assert claimed({"impl": "paper", "epsilon": 1.0, "delta": 1e-5}) == "1 (delta 1e-05)"
