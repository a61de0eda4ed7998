"""Named seed streams (raudit.seeds): the audit's values pinned, and train derives like the audit."""

import json

from typer.testing import CliRunner

from raudit import seeds
from raudit.audit import game as g
from raudit.audit.runner import AuditRequest, prepare
from raudit.cli.app import app


def test_streams_keep_the_values_audits_were_run_with():
    assert (seeds.GAME, seeds.SELECTION, seeds.ATTACK, seeds.AUC, seeds.CONTEXT) == (0, 1, 2, 3, 4)
    assert (seeds.FIT, seeds.SAMPLE, seeds.WORLDS) == (0, 1, {"out": 0, "in": 1})
    # printed by the derivation in raudit/audit/game.py before it moved here
    assert [seeds.derive_seed(0, 0, 1, 0, 0), seeds.derive_seed(7, 1, 0, 3, 1),
            seeds.derive_seed(7, 2), seeds.derive_seed(7, 3), seeds.derive_seed(0, 4) % 2**32] == [
        8367284563267855595, 7371830021451571233, 8335630239365486733, 6823953754371609207,
        1216546553]
    assert seeds.model_seeds(5, "in", 2, stream=seeds.SELECTION) == (1529276936766295350,
                                                                      6700922363327816479)
    assert g.derive_seed is seeds.derive_seed and g.model_seeds is seeds.model_seeds


def test_train_uses_the_games_seeds_of_model_in_0(tmp_path):
    res = CliRunner().invoke(app, ["train", "--impl", "identity", "--seed", "7",
                                   "--out", str(tmp_path / "t"), "--json"])
    assert res.exit_code == 0, res.output
    s = json.loads((tmp_path / "t" / "summary.json").read_text())
    game = prepare(AuditRequest(impl="identity", attack="groundhog", dataset="breast-cancer",
                                shadow_models=5, seed=7, target="3"))[0]
    first = g.trials(game, world="in")[0]
    assert (s["seed"], s["fit_seed"], s["sample_seed"]) == (7, first["seed"], first["sample_seed"])
