"""The report, the verdict and the notebook box say what ran at each threat-model level
(issue 48): a transcript or one-run audit trains no shadow model and has no ROC curve, so
its report neither opens with the shadow-model paragraph nor apologises for the figure."""

from __future__ import annotations

import pytest

import raudit.api as ra
from raudit.report.build import build

SMALL = dict(shadow_models=20, backend="local", quiet=True)


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("levels")
    return {
        "transcript": ra.audit(impl="paper", threat_model="transcript", out=root / "tr", **SMALL),
        # a one-run audit has no -S (refused)
        "one-run": ra.audit(impl="identity", one_run=True, canaries=100, out=root / "bb1",
                            backend="local", quiet=True),
        "transcript-one-run": ra.audit(impl="paper", threat_model="transcript", one_run=True,
                                       canaries=100, out=root / "tr1", backend="local",
                                       quiet=True),
        "black-box": ra.audit(impl="identity", attack="querybased", dataset="worst-case",
                              out=root / "bb", **SMALL),
    }


def _page(result, tmp_path) -> str:
    return build(result.out, tmp_path / "rep", fmt="md")["page"].read_text()


@pytest.mark.parametrize("level", ["transcript", "one-run", "transcript-one-run"])
def test_a_level_without_shadow_models_is_described_as_it_ran(stores, level, tmp_path):
    page = _page(stores[level], tmp_path)
    # not the shadow-model paragraph, no apology for a figure the level never has
    assert "trains shadow models" not in page and "no ROC curve (" not in page
    assert "no result" not in page and "shadow models finished" not in page
    said = "A one-run audit" if "one-run" in level else "trains no shadow model"
    assert said in page and "no ROC curve or score histogram" in page


def test_a_transcript_verdict_counts_trials_not_shadow_models(stores, tmp_path):
    r = stores["transcript"]
    assert "shadow model" not in r.verdict and "mechanism-only trials" in r.verdict
    assert "mechanism-only trials" in r.to_html() and "shadow models" not in r.to_html()
    assert "trials/hour" in _page(r, tmp_path)


def test_a_shadow_model_report_keeps_its_paragraph_and_curve(stores, tmp_path):
    got = build(stores["black-box"].out, tmp_path / "rep", fmt="md")
    page = got["page"].read_text()
    assert "trains shadow models with the target record" in page
    assert "trains no shadow model" not in page and "A one-run audit" not in page
    assert any(f.name.startswith("roc-") for f in got["figures"])


def test_a_one_run_audit_is_no_amber_no_result(stores, tmp_path):
    """Its bound is eps_one_run: read as "no result" (no eps_cp, no AUC) its box was amber
    and the report's sentence said too few shadow models finished."""
    from raudit.audit.verdict import caution

    for level in ("one-run", "transcript-one-run"):
        r = stores[level]
        assert not caution(r.summary) and "#d80" not in r.to_html()
        assert "one run" in r.to_html() and "100 canaries" in r.to_html()
    # 98 of 100 right on the identity generator: above the claim, and said so
    assert stores["one-run"].violated and "VIOLATED" in stores["one-run"].verdict


def test_a_data_only_audit_is_described_as_files_made_elsewhere(tmp_path):
    """Its report opened with "Each audit trains shadow models" and its provenance said
    "not recorded (resumed with nothing to train)" of a run that trains nothing."""
    import numpy as np

    from raudit import data

    train = data.load("worst-case").train
    rng = np.random.default_rng(0)
    for world in ("in", "out"):
        (tmp_path / world).mkdir()
        for i in range(20):
            train.iloc[rng.integers(0, len(train), len(train))].to_csv(
                tmp_path / world / f"m{i:03d}.csv", index=False)
    r = ra.audit(synthetic_in=tmp_path / "in", synthetic_out=tmp_path / "out",
                 dataset="worst-case", target="worst-case", attack="querybased",
                 out=tmp_path / "ext", backend="local", quiet=True)
    assert "this many synthetic files" in r.verdict and "synthetic_in=/synthetic_out=" in r.verdict
    assert "synthetic files" in r.to_html()
    page = _page(r, tmp_path)
    assert "A data-only audit reads synthetic datasets made elsewhere" in page
    assert "trains shadow models" not in page and "resumed with nothing" not in page
    assert "none: a data-only audit trains nothing" in page
    # raudit.api.report wrote the command's advice on a notebook user's page (issue 48)
    assert "(--synthetic-in/--synthetic-out)" in page
    api = ra.report(r, out=tmp_path / "api", fmt="md", quiet=True).page.read_text()
    api = api.replace("\\_", "_")  # markdown's escaped underscores
    assert "(synthetic_in=/synthetic_out=)" in api and "--synthetic-in" not in api

