"""Threat models are one registry kind (issue 44 item 5): six objects, each refusing what it
cannot take with one line, chosen from the flags, and naming the same folders as before."""

from __future__ import annotations

from pathlib import Path

import pytest

from raudit.errors import ConfigError
from raudit.registry import Registry
from raudit.runs.audit_plan import prepare
from raudit.runs.audit_settings import AuditSettings
from raudit.runs.threats import THREATS, ThreatModel, select

SIX = ["active", "black-box", "external", "one-run", "transcript", "white-box"]


def _folders(tmp_path: Path) -> dict[str, str]:
    for world in ("in", "out"):
        (tmp_path / world).mkdir()
        (tmp_path / world / "0.csv").write_text("a\n1\n")
    return {"synthetic_in": str(tmp_path / "in"), "synthetic_out": str(tmp_path / "out")}


def test_the_registry_lists_all_six_threat_models():
    assert isinstance(THREATS, Registry) and THREATS.kind == "threat model"
    assert THREATS.names() == SIX
    for name in SIX:
        threat = THREATS.get(name)
        assert isinstance(threat, ThreatModel) and threat.name == name
    with pytest.raises(ConfigError, match="^--threat-model must be one of black-box, white-box, "
                                          "transcript, active, external, one-run, got 'grey'$"):
        select(AuditSettings(threat_model="grey"))


# (threat model, a combination it refuses, its message) and a combination it takes
REFUSED = [
    ("black-box", dict(sequential="anytime", shadow_models="50", first_stage=50),
     "at least two stages"),
    ("white-box", dict(impl="identity"), "'identity' keeps none"),
    ("transcript", dict(impl="gan"), "'gan' emits none"),
    ("active", dict(impl="smartnoise"), "'smartnoise' has none"),
    ("external", dict(synthetic_in="x"), "needs both --synthetic-in and --synthetic-out"),
    ("one-run", dict(one_run=True, synthetic_in="x", synthetic_out="y"), "has no canaries"),
]
TAKEN = {"black-box": dict(impl="identity"), "white-box": dict(impl="gan"),
         "transcript": dict(impl="paper"), "active": dict(impl="paper"), "external": None,
         "one-run": dict(impl="identity", one_run=True, canaries=20)}


def test_every_threat_model_is_in_the_refusal_table():
    assert sorted(name for name, _, _ in REFUSED) == SIX == sorted(TAKEN)


@pytest.mark.parametrize("name,bad,needle", REFUSED)
def test_each_check_refuses_a_bad_combination_in_one_line(tmp_path, name, bad, needle):
    threat = THREATS.get(name)
    with pytest.raises(ConfigError) as err:
        threat.check(AuditSettings(threat_model=name, **bad))
    assert needle in str(err.value) and "\n" not in str(err.value)
    good = TAKEN[name] if TAKEN[name] is not None else _folders(tmp_path)
    threat.check(AuditSettings(threat_model=name, **good))  # the same model takes this one


@pytest.mark.parametrize("settings,chosen", [
    (dict(), "black-box"),
    (dict(one_run=True), "one-run"),
    (dict(synthetic_in="a", synthetic_out="b"), "external"),
    (dict(synthetic_in="a", one_run=True), "external"),  # refuses --one-run itself
    (dict(threat_model="white-box", one_run=True), "white-box"),  # and refuses it
    (dict(threat_model="transcript", one_run=True), "transcript"),  # its own one run
    (dict(threat_model="one-run"), "one-run"),
])
def test_the_flags_choose_the_threat_model(settings, chosen):
    assert select(AuditSettings(**settings)).name == chosen


@pytest.mark.parametrize("settings,folder,level,anytime", [
    (dict(), "audit-identity-groundhog-breast-cancer-S50-s0", "black-box", False),
    (dict(sequential="anytime", first_stage=10), "audit-identity-groundhog-breast-cancer-S50-s0"
     "-anytime", "black-box", True),
    (dict(impl="gan", threat_model="white-box"),
     "audit-gan-groundhog-breast-cancer-S50-s0-white-box", "white-box", False),
    (dict(impl="paper", threat_model="transcript", sequential="anytime"),
     "audit-paper-groundhog-breast-cancer-S50-s0-transcript-anytime", "black-box", False),
    # a one-run or data-only audit refuses -S (it has no trials per world; the default
    # stays in a one-run folder's name) and a data-only one --impl
    (dict(impl="paper", threat_model="active", one_run=True, canaries=20,
          shadow_models="1000"),
     "audit-paper-groundhog-breast-cancer-S1000-s0-active-onerun20", "black-box", False),
    (dict(one_run=True, canaries=20, shadow_models="1000"),
     "audit-identity-groundhog-breast-cancer-S1000-s0-onerun20", "black-box", False),
    (dict(threat_model="one-run", canaries=20, shadow_models="1000"),
     "audit-identity-groundhog-breast-cancer-S1000-s0-onerun20", "black-box", False),
    (dict(synthetic_in="IN", synthetic_out="OUT", impl="paper", shadow_models="1000"),
     "audit-external-groundhog-breast-cancer-s0", "black-box", False),
])
def test_the_plan_asks_the_threat_model(tmp_path, settings, folder, level, anytime):
    """The default folder and the shadow game's request, as the string comparisons gave
    them before the threat models owned them."""
    if "synthetic_in" in settings:
        settings = {**settings, **_folders(tmp_path)}
    plan = prepare(AuditSettings(**{"impl": "identity", "shadow_models": "50",
                                    "backend": "local", **settings}))
    assert plan.out == Path("runs") / folder
    # only white-box reads the trained models (the registry's reads_models)
    assert plan.req.white_box is (level == "white-box") and plan.req.anytime is anytime
