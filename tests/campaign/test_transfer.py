"""A campaign carried between machines: interrupted, exported, imported into a fresh
folder and finished, it ends with the summaries of an uninterrupted run; a damaged or
mismatched export is refused with one line and leaves no folder behind."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pandas as pd
import pytest

from raudit.campaign.run import run_campaign
from raudit.campaign.transfer import export_campaign, import_campaign
from raudit.engine.driver import EngineConfig
from raudit.errors import ConfigError

LOCAL = EngineConfig(backend="local", retries=0)
KEYS = ["job", "audit_id", "auc", "threshold", "tpr", "fpr", "eps_cp", "eps_jeffreys",
        "eps_bayes", "eps_max", "tp", "fn", "tn", "fp", "models_ok", "missing", "target"]
CAMPAIGN = """\
    name: t
    defaults: {attack: querybased, dataset: worst-case, shadow_models: 10, max_iter: 3, seed: 7}
    jobs:
      - name: wc-{impl}
        grid: {impl: [paper, original]}
        chunk_size: 3
      - name: sel
        impl: paper
        attack: groundhog
        dataset: breast-cancer
        target: auto
        target_candidates: 2
        selection_models: 8
        shadow_models: 5
        max_iter: 2
        chunk_size: 4
    """


def _file(tmp_path: Path, text: str = CAMPAIGN) -> Path:
    p = tmp_path / "c.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def _summaries(out: Path) -> pd.DataFrame:
    s = pd.read_parquet(out / "summary")
    s["job"] = s["job"].astype(str)
    s = s.sort_values("created_at").drop_duplicates("job", keep="last")
    return s[KEYS].sort_values("job").reset_index(drop=True)


def _interrupted(tmp_path: Path) -> tuple[Path, int]:
    """A campaign stopped half-way, and the shadow models it lost: wc-paper killed after
    half of its chunks, sel after its target pool (no shadow row or summary written),
    wc-original never started. Parts are append-only, so a kill leaves a prefix of them."""
    out = tmp_path / "a"
    run_campaign(_file(tmp_path), out, LOCAL, only=["wc-paper", "sel"])
    lost = 0
    for job, keep in (("wc-paper", 3), ("sel", 0)):
        for table in ("shadow", "summary", "estimates"):
            parts = sorted((out / table / f"job={job}").glob("part-*.parquet"))
            for part in parts[keep if table == "shadow" else 0:]:
                if table == "shadow":
                    lost += len(pd.read_parquet(part))
                part.unlink()
    return out, lost


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("transfer")
    src, lost = _interrupted(tmp)
    got = export_campaign(_file(tmp), src, tmp / "t.raudit.zip")
    return tmp, Path(got["file"]), {**got, "lost": lost}


@pytest.mark.slow
def test_exported_imported_and_finished_equals_an_uninterrupted_run(exported, tmp_path):
    _, file, got = exported
    assert got["jobs"] == ["sel", "wc-paper"]
    with zipfile.ZipFile(file) as zf:  # data only: Parquet parts, JSON manifests, no pickle
        assert {Path(n).suffix for n in zf.namelist()} == {".parquet", ".json"}
        # the selection pool travels with its job, so the target is not chosen again
        assert any(n.startswith("target-selection/shadow/job=sel/") for n in zf.namelist())
    moved = tmp_path / "b" / "camp"
    import_campaign(_file(tmp_path), moved, file)
    res = run_campaign(_file(tmp_path), moved, LOCAL)
    assert res["failed_jobs"] == []
    # only what the export lacked: wc-original, and the models of the parts the kill lost
    assert 0 < got["lost"] < 2 * 10 + 2 * 5
    assert res["models_run"] == 2 * 10 + got["lost"]
    whole = tmp_path / "whole"
    run_campaign(_file(tmp_path), whole, LOCAL)
    pd.testing.assert_frame_equal(_summaries(moved), _summaries(whole))


def test_a_damaged_export_is_refused_and_leaves_no_folder(exported, tmp_path):
    _, file, _ = exported
    data = bytearray(file.read_bytes())
    with zipfile.ZipFile(file) as zf:  # flip one byte inside a stored part
        info = next(i for i in zf.infolist() if i.filename.endswith(".parquet"))
    data[info.header_offset + 30 + len(info.filename) + 40] ^= 0xFF
    bad = tmp_path / "bad.zip"
    bad.write_bytes(bytes(data))
    with pytest.raises(ConfigError, match=r"--import .*bad.zip: not a readable export "
                                          r"\(BadZipFile"):
        import_campaign(_file(tmp_path), tmp_path / "out", bad)
    cut = tmp_path / "cut.zip"
    cut.write_bytes(file.read_bytes()[: len(data) // 2])
    with pytest.raises(ConfigError, match="not a readable export"):
        import_campaign(_file(tmp_path), tmp_path / "out", cut)
    assert not (tmp_path / "out").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def _rezip(file: Path, dest: Path, change) -> Path:
    """The export rewritten with valid CRCs: ``change(index, blobs)`` edits it."""
    with zipfile.ZipFile(file) as zf:
        blobs = {n: zf.read(n) for n in zf.namelist()}
    index = json.loads(blobs.pop("export.json"))
    change(index, blobs)
    with zipfile.ZipFile(dest, "w") as zf:
        zf.writestr("export.json", json.dumps(index))
        for n, b in blobs.items():
            zf.writestr(n, b)
    return dest


def test_a_part_that_does_not_match_its_sha256_is_refused(exported, tmp_path):
    _, file, _ = exported

    def swap(index, blobs):
        name = next(n for n in blobs if n.endswith(".parquet"))
        blobs[name] = blobs[name][:-1] + b"\0"

    bad = _rezip(file, tmp_path / "swapped.zip", swap)
    with pytest.raises(ConfigError, match=r"does not match its sha256 \(damaged in transit\)"):
        import_campaign(_file(tmp_path), tmp_path / "out", bad)

    def escape(index, blobs):
        blobs["../evil.json"] = b"{}"
        index["files"].append({"path": "../evil.json", "bytes": 2,
                               "sha256": __import__("hashlib").sha256(b"{}").hexdigest()})

    bad = _rezip(file, tmp_path / "escape.zip", escape)
    with pytest.raises(ConfigError, match="leaves the folder"):
        import_campaign(_file(tmp_path), tmp_path / "out", bad)
    assert not (tmp_path / "out").exists() and not (tmp_path / "evil.json").exists()


def test_a_mismatched_export_is_refused(exported, tmp_path):
    _, file, _ = exported
    other = _file(tmp_path, CAMPAIGN.replace("name: t", "name: u"))
    with pytest.raises(ConfigError, match="holds campaign 't', not 'u'"):
        import_campaign(other, tmp_path / "out", file)
    changed = _file(tmp_path, CAMPAIGN.replace("seed: 7", "seed: 8"))
    with pytest.raises(ConfigError, match="job wc-paper was run with other settings"):
        import_campaign(changed, tmp_path / "out", file)
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    with pytest.raises(ConfigError, match="is not empty; --import starts a fresh folder"):
        import_campaign(_file(tmp_path), tmp_path / "full", file)
    assert not (tmp_path / "out").exists()


def test_the_cli_refuses_a_damaged_file_in_one_line(exported, tmp_path):
    tmp, _, _ = exported
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    p = subprocess.run([sys.executable, "-m", "raudit.cli.app", "campaign", str(_file(tmp)),
                        "--out", str(tmp_path / "o"), "--import", str(junk), "--backend",
                        "local"], env=env, capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode != 0
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "junk.zip: not a readable export" in lines[0], p.stderr
    assert not (tmp_path / "o").exists()


def test_export_refuses_a_folder_that_is_not_this_campaigns(exported, tmp_path):
    tmp, _, _ = exported
    with pytest.raises(ConfigError, match="holds no campaign yet"):
        export_campaign(_file(tmp_path), tmp_path / "nothing", tmp_path / "x.zip")
    changed = _file(tmp_path, CAMPAIGN.replace("seed: 7", "seed: 8"))
    with pytest.raises(ConfigError, match="job wc-paper: output folder .* holds a different"):
        export_campaign(changed, tmp / "a", tmp_path / "x.zip")
    assert not (tmp_path / "x.zip").exists()
