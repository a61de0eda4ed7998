"""Named seed streams (raudit.seeds): the audit's values pinned, and train derives like the audit."""

import json

import numpy as np
import pytest

from typer.testing import CliRunner

from raudit import seeds
from raudit.audit import game as g
from raudit.audit.runner import AuditRequest, prepare
from raudit.cli.app import app
from raudit.errors import ConfigError


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


# Issue 46.7: a root seed outside [0, 2**63) passed validation, trained every model and
# failed when writing the int64 seed column (or SeedSequence refused -1 with a traceback).
# raudit.seeds.check_root is the one check: --seed's parser and the request objects.
BAD_SEEDS = (-1, 2**63, 2**64)


@pytest.mark.parametrize("seed", BAD_SEEDS)
@pytest.mark.parametrize("command", [
    ["audit", "--impl", "identity", "-S", "10"], ["train", "--impl", "identity"],
    ["utility", "--impl", "identity"], ["inspect", "--impl", "identity"], ["crosscheck"]])
def test_every_command_refuses_a_seed_out_of_range_in_one_line(tmp_path, capsys, command, seed):
    from raudit.cli.app import main

    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main([*command, "--seed", str(seed), "--out", str(out)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.count("\n") == 1 and err.startswith("error: Invalid value for '--seed': it must "
                                                    "be from 0 to 2**63-1"), err
    assert f"got {seed}" in err and not out.exists()


@pytest.mark.parametrize("seed", [*BAD_SEEDS, True, 1.5, "3"])
def test_the_request_objects_refuse_a_seed_out_of_range(seed):
    from raudit.inspect.job import InspectRequest
    from raudit.utility.plan import UtilityRequest

    for make in (lambda: AuditRequest(impl="identity", seed=seed),
                 lambda: UtilityRequest(impl="identity", seed=seed),
                 lambda: InspectRequest(impls=("identity",), seed=seed)):
        with pytest.raises(ConfigError, match=r"^(--)?seed must be (from 0 to 2\*\*63-1|an "
                                              r"integer)"):
            make()


@pytest.mark.parametrize("kind", ["audit", "utility", "inspect"])
def test_a_campaign_refuses_a_seed_out_of_range_before_work(tmp_path, capsys, kind):
    from raudit.cli.app import main

    config = tmp_path / "c.yaml"
    config.write_text(f"name: s\njobs:\n  - name: a\n    kind: {kind}\n    impl: identity\n"
                      f"    seed: {2**63}\n")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as exit_:
        main(["campaign", str(config), "--out", str(out)])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.count("\n") == 1, err
    assert "c.yaml:6: job a, key 'seed'" in err and "2**63-1" in err, err
    assert not out.exists()


def test_the_largest_seed_is_accepted():
    assert AuditRequest(impl="identity", seed=2**63 - 1).seed == 2**63 - 1
    assert seeds.check_root(np.int64(5)) == 5
