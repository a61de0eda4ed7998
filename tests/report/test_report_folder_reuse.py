"""Issue 48: `raudit report` into a folder that holds an earlier report removes that
report's files it does not write again (they were left beside the new page), and never
touches anything else in the folder."""

from __future__ import annotations

import json

from raudit.report.build import WRITTEN, build


def test_a_second_report_clears_the_firsts_outputs(audit_store, utility_store, tmp_path):
    out = tmp_path / "report"
    first = build(utility_store, out)
    old = {p.relative_to(out).as_posix() for p in first["tables"] + first["figures"]}
    (out / "notes.txt").write_text("mine")  # the user's own file
    (out / "figures" / "from-an-older-raudit.png").write_bytes(b"png")  # no record of it
    said = []
    second = build(audit_store, out, notice=said.append)
    now = {p.relative_to(out).as_posix() for p in second["tables"] + second["figures"]}
    on_disk = {p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file()}
    assert old - now and not (old - now) & on_disk  # the utility report's files are gone
    assert "figures/from-an-older-raudit.png" not in on_disk
    assert now <= on_disk and "notes.txt" in on_disk and "index.html" in on_disk
    recorded = set(json.loads((out / WRITTEN).read_text())["files"])
    assert recorded == on_disk - {"notes.txt", WRITTEN} and now | {"index.html"} <= recorded
    assert said and said[0].startswith("removed ")


def test_report_folder_is_ignored_by_git():
    from pathlib import Path

    ignored = (Path(__file__).resolve().parents[2] / ".gitignore").read_text().split()
    assert "/report/" in ignored
