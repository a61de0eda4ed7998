"""The data-only threat model: synthetic files produced elsewhere, audited without a generator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from raudit.audit import analyse as an
from raudit.audit.chunk import synthesize
from raudit.audit.external import run_external
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, chunk_specs, prepare
from raudit.cli.app import app
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError, DataError
from raudit.results import ResultStore, spec_hash
from raudit.runs.audit import run_audit

REQ = dict(impl="randomized-response", attack="querybased", epsilon=8.0, neighbours="replace",
           shadow_models=30, chunk_size=100, seed=3)


def _export(req: AuditRequest, folder) -> dict:
    """Write every shadow model's synthetic table, as the in-process audit samples it."""
    game, manifest, _ = prepare(req)
    per_world = {w: trials(game, world=w) for w in ("out", "in")}
    dirs = {w: folder / w for w in per_world}
    for spec in chunk_specs(game, spec_hash(manifest), per_world, set(), 100):
        _, _, synths = synthesize(spec)
        dirs[spec["world"]].mkdir(parents=True, exist_ok=True)
        for t, df in zip(spec["trials"], synths):
            df.to_parquet(dirs[spec["world"]] / f"model-{t['shadow_index']:04d}.parquet")
    return dirs


def test_data_only_audit_equals_the_in_process_audit(tmp_path):
    req = AuditRequest(**REQ)
    inproc = run_audit(req, tmp_path / "a", EngineConfig(backend="local"))
    dirs = _export(req, tmp_path / "files")
    ext = run_external(req, dirs["in"], dirs["out"], tmp_path / "b")
    for key in ("auc", "tp", "fn", "tn", "fp", "eps_cp", "eps_bayes", "eps_curve", "mu_gdp",
                "synthetic_rows", "models_ok"):
        assert ext[key] == inproc[key], key
    assert ext["impl"] == "external" and 0.6 < inproc["auc"]  # the attack sees something
    a = an.ok_rows(ResultStore(tmp_path / "a").read("shadow"))
    b = an.ok_rows(ResultStore(tmp_path / "b").read("shadow"))
    assert np.array_equal(np.vstack(a["features_vec"]), np.vstack(b["features_vec"]))
    # rerunning is a no-op: same folder, same summary, no duplicate rows
    again = run_external(req, dirs["in"], dirs["out"], tmp_path / "b")
    assert again["eps_cp"] == ext["eps_cp"]
    assert len(ResultStore(tmp_path / "b").read("shadow")) == 60


def _folders(tmp_path, n_in=12, n_out=12, rows=5, cols=("a", "b")):
    out = {}
    for world, n in (("in", n_in), ("out", n_out)):
        d = tmp_path / world
        d.mkdir()
        for i in range(n):
            pd.DataFrame({c: np.zeros(rows) for c in cols}).to_csv(d / f"m{i:03d}.csv", index=False)
        out[world] = d
    return out


def test_bad_folders_are_refused_before_any_work(tmp_path):
    req = AuditRequest(attack="querybased", dataset="worst-case", target="worst-case")
    d = _folders(tmp_path, n_in=12, n_out=10)
    with pytest.raises(ConfigError, match="12 files and --synthetic-out 10"):
        run_external(req, d["in"], d["out"], tmp_path / "o")
    with pytest.raises(ConfigError, match="not a folder"):
        run_external(req, tmp_path / "nope", d["out"], tmp_path / "o")
    with pytest.raises(ConfigError, match="needs --target"):
        run_external(AuditRequest(attack="groundhog", dataset="breast-cancer", target="auto"),
                     d["in"], d["in"], tmp_path / "o")
    assert not (tmp_path / "o").exists()


def test_files_must_match_the_dataset(tmp_path):
    req = AuditRequest(attack="querybased", dataset="worst-case", target="worst-case")
    d = _folders(tmp_path, cols=("x", "y"))
    with pytest.raises(DataError, match="columns"):
        run_external(req, d["in"], d["out"], tmp_path / "o")


def test_cli_data_only_errors_are_one_line(tmp_path):
    res = CliRunner().invoke(app, ["audit", "--synthetic-in", str(tmp_path)])
    assert res.exit_code == 2 and "both --synthetic-in and --synthetic-out" in res.output
    assert "Traceback" not in res.output
