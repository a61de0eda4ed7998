"""The claimed / mechanism / audited line (raudit.audit.verdict.verdict_line)."""

from __future__ import annotations

import math

from raudit.audit.verdict import audited_eps, tightness, verdict_line


def test_a_tight_audit_of_a_correct_accountant():
    row = {"epsilon": 1.0, "eps_true": 0.97, "eps_cp": 0.9, "eps_curve": 0.85, "eps_max": 3.0}
    assert audited_eps(row) == 0.9 and abs(tightness(row) - 0.9 / 0.97) < 1e-12
    assert verdict_line(row) == ("claimed 1.00, mechanism 0.97; audited >= 0.90 (93 % of what "
                                 "it spends); the audit could show at most 3.00")


def test_an_accountant_that_under_counts_and_is_violated():
    row = {"epsilon": 1.0, "eps_true": 1.54, "eps_cp": 1.2, "eps_curve": 1.4, "eps_max": 3.0}
    assert verdict_line(row) == ("claimed 1.00, mechanism 1.54: the accountant under-counts; "
                                 "audited >= 1.40: VIOLATED; the audit could show at most 3.00")


def test_no_mechanism_and_no_bound():
    row = {"epsilon": 2.0, "eps_true": None, "eps_cp": 0.0, "eps_curve": None, "eps_max": 1.5}
    assert tightness(row) is None
    assert verdict_line(row).startswith("claimed 2.00, mechanism n/a (no privacy events); "
                                        "audited >= 0.00;")
    assert "unbounded" in verdict_line({**row, "eps_true": math.inf})
    assert "no audited bound" in verdict_line({"epsilon": 1.0, "eps_cp": math.nan})


def test_an_anytime_black_box_audit_reads_its_own_bound():
    """A black-box audit stopped by the test martingale: eps_anytime is the audited bound
    (the CP bound beside it holds at its own level), and CP's ceiling is not its power."""
    from raudit.audit.verdict import verdict

    row = {"epsilon": 1.0, "eps_true": None, "eps_cp": 0.0, "eps_curve": 0.1, "eps_max": 0.71,
           "eps_anytime": 2.25, "looks": 3, "stop_reason": "the anytime-valid eps_lo 2.25 ..."}
    assert audited_eps(row) == 2.25
    line = verdict_line(row)
    assert line.endswith("audited >= 2.25: VIOLATED") and "could show" not in line
    v = verdict(row)
    assert v.startswith("anytime-valid audit: eps >= 2.25") and "VIOLATED" in v and "3 look(s)" in v
    assert "within the claim" in verdict({**row, "eps_anytime": 0.4})


def test_an_audit_above_the_mechanism_names_a_leak_outside_the_events():
    """smartnoise on the worst case: its votes spend ~0 at delta 0.089 while the black-box
    audit shows eps >= 2 through its bounds="data" pre-pass, which emits no event."""
    row = {"epsilon": 1.0, "eps_true": 0.0, "eps_cp": 2.03, "eps_curve": 1.5, "eps_max": 2.23}
    line = verdict_line(row)
    assert "VIOLATED; the audit exceeds the mechanism: the leak is outside" in line
    within = verdict_line({**row, "eps_true": 0.2, "eps_cp": 0.6, "eps_curve": 0.1})
    assert "outside the privacy events" in within and "% of what it spends" not in within
    assert "outside" not in verdict_line({**row, "eps_true": 2.5})


def test_a_verdict_within_the_claim_but_above_the_mechanism_does_not_say_no_violation():
    """Issue 49 item 5: a user-CSV audit (data-derived bounds: a leak no event carries)
    printed "no violation detected" in its verdict and "the audit exceeds the mechanism:
    the leak is outside the privacy events" in the line beside it. Both now say the same."""
    from raudit.audit.verdict import verdict

    row = {"epsilon": 1.0, "eps_true": 0.5, "eps_cp": 0.7, "eps_curve": 0.3, "eps_max": 3.0,
           "auc": 0.8, "tp": 30, "fn": 10, "tn": 30, "fp": 10, "tpr": 0.75, "fpr": 0.25}
    v, line = verdict(row), verdict_line(row)
    assert "outside the privacy events" in line
    assert "no violation detected" not in v
    assert "within the claim, but above the mechanism's eps_true = 0.50" in v
    # the curve above eps_true with CP at 0 (the verdict read "found no signal" there)
    curve = {**row, "eps_cp": 0.0, "eps_curve": 0.6}
    assert "outside the privacy events" in verdict_line(curve)
    assert "outside the privacy events" in verdict(curve)
    assert "no violation detected" not in verdict(curve)
    # at or below the mechanism: the plain verdicts
    assert "no violation detected" in verdict({**row, "eps_true": 0.9})
    assert "outside" not in verdict({**row, "eps_true": 0.9})


def test_a_curve_bound_above_the_claim_is_a_violation_though_cp_is_within_it():
    """One rule (raudit.audit.verdict.violated): the audit's bound is the larger of CP and
    curve, so curve > claim >= CP is VIOLATED in the sentence, the API and the report."""
    from raudit.audit.verdict import verdict, violated

    row = {"epsilon": 1.0, "eps_true": 2.0, "eps_cp": 0.8, "eps_curve": 1.3, "eps_max": 3.0,
           "auc": 0.9, "tpr": 0.6, "fpr": 0.1, "tp": 60, "fn": 40, "tn": 90, "fp": 10}
    assert audited_eps(row) == 1.3 and violated(row)
    sentence = verdict(row)
    assert "eps >= 1.30" in sentence and "the claim is VIOLATED" in sentence, sentence
    assert not violated({**row, "eps_curve": 1.0})  # equal to the claim is within it
    assert not violated({**row, "eps_cp": math.nan, "eps_curve": math.nan})


# ------------------------------------------------------ what ran, in the interface's words

SHORT = {"epsilon": 1.0, "eps_cp": 0.0, "eps_curve": 0.0, "eps_max": 0.53, "auc": 0.5,
         "tpr": 1.0, "fpr": 1.0, "tp": 8, "fn": 0, "tn": 0, "fp": 8, "missing": 0}


def test_the_ceiling_advice_names_what_ran_and_the_interface_setting():
    """Issue 48: a transcript audit's verdict said "shadow models", a data-only audit's
    said to raise --shadow-models (its files are its models), and a Python API result
    advised a command-line flag."""
    from raudit.audit.verdict import verdict
    from raudit.wording import FLAGS, KEYWORDS

    game = verdict(SHORT)
    assert game.endswith("with this many shadow models it could not have shown more than "
                         "eps_max = 0.53, at most the claimed 1; raise --shadow-models")
    assert verdict(SHORT, say=KEYWORDS) == game.replace("--shadow-models", "shadow_models=")
    mech = verdict({**SHORT, "threat_model": "transcript"})
    assert "shadow model" not in mech and "this many mechanism-only trials" in mech
    assert mech.endswith("raise --shadow-models (trials per world)")
    files = verdict({**SHORT, "impl": "external"}, say=FLAGS)
    assert "this many synthetic files" in files and files.endswith(
        "give more synthetic files per world (--synthetic-in/--synthetic-out)")
    assert "--" not in verdict({**SHORT, "impl": "external"}, say=KEYWORDS)
    retry = verdict({**SHORT, "eps_cp": math.nan, "missing": 4}, say=KEYWORDS)
    assert retry.endswith("call the same raudit.api function again with the same arguments "
                          "to retry them")


def test_a_stored_verdict_verdict_cannot_write_is_kept():
    """A one-run audit's sentence names what its row does not keep (the confidence of its
    guesses); rendered from the row it read "no result: too few shadow models finished"
    beside a VIOLATED box (the report recomputed every verdict)."""
    from raudit.audit.verdict import in_words
    from raudit.wording import KEYWORDS

    said = "one-run audit of 100 canaries on the synthetic data: 98 of 100 guesses right, ..."
    row = {"epsilon": 1.0, "eps_cp": None, "auc": None, "eps_one_run": 2.42, "canaries": 100,
           "verdict": said}
    assert in_words(row) == in_words(row, KEYWORDS) == said
    assert in_words({**SHORT, "verdict": "an older sentence"}, KEYWORDS).endswith(
        "raise shadow_models=")


def test_a_transcript_anytime_stop_keeps_its_sentence():
    """Written by raudit.runs.transcript before; verdict() now writes it from the row."""
    from raudit.audit.verdict import verdict

    row = {"epsilon": 1.0, "threat_model": "transcript", "eps_anytime": 1.234, "models_ok": 400,
           "stop_reason": "the claim is rejected"}
    assert verdict(row) == ("anytime-valid audit: eps >= 1.23 at 90% confidence after 400 "
                            "trials (the claim is rejected)")
