"""The white-box threat model (raudit.audit.whitebox): what the chunk reads off the trained
models, that the black-box part of its vector is the black-box audit's, and the refusals."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from raudit import generators
from raudit.audit import chunk, whitebox
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, prepare
from raudit.data.dataset import infer_columns
from raudit.errors import ConfigError
from raudit.generators.batched import BatchedGenerator
from raudit.runs.threats import reads_models

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "contract"))
from test_generator_contract import make, small_table  # noqa: E402

BATCHED = whitebox.white_box_generators()
CRITIC = ("paper", "fixed", "smartnoise", "borealis", "gan", "dpgan")


def test_the_generators_that_keep_a_critic():
    assert set(BATCHED) == set(generators.names()) - {"identity", "independent",
                                                      "randomized-response"}
    assert {n for n in BATCHED if generators.get(n).describe().critic} == set(CRITIC)


@pytest.mark.parametrize("name", BATCHED)
def test_declared_critic_is_the_one_training_keeps(name):
    df = small_table()
    model = make(name).fit(df, epsilon=5.0, seed=1, columns=infer_columns(df))
    assert (model._batch.trained.critic is not None) == generators.get(name).describe().critic


@pytest.mark.parametrize("name", ["paper", "fixed", "smartnoise", "borealis", "gan", "dpgan",
                                  "synthcity"])
def test_white_box_view_samples_as_the_model_does_and_scores_the_target(name):
    df = small_table()
    models = make(name).fit_many([df] * 2, epsilon=5.0, seeds=[3, 4], columns=infer_columns(df))
    target = df.iloc[[5]].astype(float)
    views = BatchedGenerator.white_box_many(models, target, 40, [11, 12])
    plain = BatchedGenerator.sample_many(models, 40, [11, 12])
    for v, p in zip(views, plain):
        pd.testing.assert_frame_equal(v.samples, p)  # the same rows sample() gives
    if not generators.get(name).describe().critic:
        assert views[0].target_logit is None and views[0].sample_logits is None
        return
    trained, m = models[1]._batch.trained, models[1]
    enc = torch.as_tensor(m._batch.encoders[m._index].transform(target)[None], dtype=m._batch.dtype)
    direct = trained.critic.score(trained.critic.params.select(torch.tensor([1])), enc)
    assert views[1].target_logit == pytest.approx(float(direct.reshape(-1)[0]))
    assert views[1].sample_logits.shape == (40,) and np.isfinite(views[1].sample_logits).all()


def _specs(impl: str, options: dict, count: int = 3):
    """The same in-world chunk as a black-box and as a white-box audit (same seeds)."""
    out = {}
    for level in ("black-box", "white-box"):
        req = AuditRequest(impl=impl, attack="querybased", shadow_models=5, options=options,
                           white_box=level == "white-box")
        game, manifest, _ = prepare(req)
        ts = trials(game, world="in", count=count)
        out[level] = ({"audit_id": "x", "game": game.spec(), "world": "in", "trials": ts}, manifest)
    return out


@pytest.mark.parametrize("impl,critic", [("gan", True), ("updated", False)])
def test_black_box_part_is_the_black_box_vector(impl, critic):
    specs = _specs(impl, {"max_iter": 2})
    bb = chunk.run_chunk(specs["black-box"][0])
    wb = chunk.run_chunk(specs["white-box"][0])
    n_extra = len(whitebox.DENSITY) + (len(whitebox.CRITIC) if critic else 0)
    for b, w in zip(bb, wb):
        x, y = np.asarray(b["features_vec"]), np.asarray(w["features_vec"])
        assert len(y) == len(x) + n_extra and np.isfinite(y).all()
        np.testing.assert_array_equal(y[:len(x)], x)  # bit for bit: same models, same samples
        assert (b["seed"], b["sample_seed"]) == (w["seed"], w["sample_seed"])
    # the spec and the manifest say which threat model, with its settings
    spec, manifest = specs["white-box"]
    assert spec["game"]["white_box"] == {"samples": 1000}  # 20 x 5 rows, at least 1,000
    assert "white_box" not in specs["black-box"][0]["game"]
    assert manifest["threat_model"]["level"] == "white-box"
    assert ("student/discriminator (its score" in manifest["threat_model"]["sees"]) == critic
    assert "threat_model" not in specs["black-box"][1]


def test_white_box_features_do_not_depend_on_the_chunking():
    spec, _ = _specs("gan", {"max_iter": 2}, count=3)["white-box"]
    together = chunk.run_chunk(spec)
    alone = chunk.run_chunk({**spec, "trials": spec["trials"][2:]})
    np.testing.assert_allclose(together[2]["features_vec"], alone[0]["features_vec"],
                               rtol=1e-5, atol=1e-6)  # fit_many == fit, up to float tolerance
    again = chunk.run_chunk(spec)
    np.testing.assert_array_equal(together[0]["features_vec"], again[0]["features_vec"])


def test_density_features_see_the_target_among_the_samples():
    """Hand-made samples: the features are the distances the docstring names."""
    from raudit.attacks import AttackContext
    from raudit.generators.batch_types import WhiteBoxView

    ref = pd.DataFrame({"a": [0.0, 0.0, 10.0], "b": [0.0, 1.0, 0.0]})
    ctx = AttackContext.build(ref, pd.Series({"a": 10.0, "b": 1.0}))
    near = pd.DataFrame({"a": [10.0] * 3 + [0.0] * 7, "b": [1.0] * 3 + [0.0] * 7})
    t, span = np.array([10.0, 1.0]), np.array([10.0, 1.0])
    v = whitebox._vector(WhiteBoxView(near, 2.0, np.array([1.0] * 9 + [3.0])), t, span,
                         ["a", "b"], critic=True)
    assert v[0] == 0.0 and v[2] == pytest.approx(0.3)  # 3 of 10 samples are the target
    assert v[-1] == pytest.approx(0.9) and v[-2] == pytest.approx(2.0 - 1.2)
    assert len(ctx.columns) == 2


@pytest.mark.parametrize("impl,needle", [
    ("identity", "keeps none"),
    ("randomized-response", "keeps none"),
    ("exec:/nonexistent/gen", "exec: generator"),
])
def test_generators_without_a_reachable_model_are_refused(impl, needle):
    with pytest.raises(ConfigError, match=needle):
        whitebox.check_white_box(impl)


def test_a_shadow_model_audit_takes_only_the_trained_threat_models():
    # the registry says which threat models train shadow models and which read them
    assert [reads_models(n) for n in ("black-box", "white-box")] == [False, True]
    with pytest.raises(ConfigError, match="black-box or white-box"):
        reads_models("transcript")
    with pytest.raises(ConfigError, match="threat_model must be one of"):
        reads_models("grey-box")
    with pytest.raises(ConfigError, match="white_box must be true or false"):
        AuditRequest(white_box="white-box")  # what a YAML file or a careless caller passes


def test_sampling_a_few_models_at_a_time_changes_no_number(monkeypatch):
    spec, _ = _specs("paper", {"max_iter": 2}, count=3)["white-box"]
    together = chunk.run_chunk(spec)
    monkeypatch.setattr(whitebox, "GROUP_CELLS", 1)  # one model per forward pass
    one_by_one = chunk.run_chunk(spec)
    for a, b in zip(together, one_by_one):
        # the samples (and the density features) are the same bit for bit; the critic's
        # batched forward pass over 1 or 3 models may differ in the last float bits
        np.testing.assert_array_equal(a["features_vec"][:-4], b["features_vec"][:-4])
        np.testing.assert_allclose(a["features_vec"][-4:], b["features_vec"][-4:], rtol=1e-9,
                                   atol=1e-9)


def test_samples_scale_with_the_game_within_limits():
    assert whitebox.settings(5) == {"samples": 1000}
    assert whitebox.settings(455) == {"samples": 9100}
    assert whitebox.settings(10**6) == {"samples": 100_000}


@pytest.mark.parametrize("name", BATCHED)
def test_every_batched_generator_gives_finite_white_box_features(name):
    from test_generator_contract import FAST_FOR

    req = AuditRequest(impl=name, attack="querybased", shadow_models=5, epsilon=5.0,
                       options={"max_iter": 2, **FAST_FOR.get(name, {})}, white_box=True)
    game, _, _ = prepare(req)
    rows = chunk.run_chunk({"audit_id": "x", "game": game.spec(), "world": "out",
                            "trials": trials(game, world="out", count=2)})
    critic = generators.get(name).describe().critic
    for r in rows:
        v = np.asarray(r["features_vec"])
        assert len(v) == 8 + len(whitebox.DENSITY) + (len(whitebox.CRITIC) if critic else 0)
        assert np.isfinite(v).all()
