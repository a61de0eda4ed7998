"""Each report kind laid out by a real browser (headless Chromium, Debian's `chromium`
package) at a 1,400 px wide window: what a reader must see first (the audit's verdict, the
utility sentence, the inspect violations table) lies within the first 1,500 px, and the page
stays under a stated height. Skipped, with the reason, where Chromium is not installed.

Bounds: the inspect page of 14 runs (what ``inspect --all`` produces) stays under 4,000 px
(issue 28); one audit or one utility run under 4,000 px; a campaign of two audits under
5,000 px (each audit adds its own ROC and score figures).
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest
from report_helpers import as_campaign

from raudit.inspect.cells import CATEGORIES
from raudit.report.build import build

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="headless browser test needs "
                                 "Debian's `chromium` package (apt-get install chromium); "
                                 "not installed here")]
FIRST_SCREEN = 1500  # px from the top of the page

MEASURE = """<script>window.addEventListener("load", function () {
  var e = document.querySelector(%s);
  document.body.setAttribute("data-m", JSON.stringify({
    height: document.documentElement.scrollHeight,
    top: e ? e.getBoundingClientRect().top + window.scrollY : null}));
});</script>"""


def layout(page, selector: str) -> dict:
    """{"height": page height in px, "top": where ``selector`` starts (None: absent)}."""
    probe = page.with_name("_layout.html")
    probe.write_text(page.read_text().replace("</body>",
                                              MEASURE % json.dumps(selector) + "</body>"))
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--window-size=1400,900", "--virtual-time-budget=5000", "--dump-dom",
                        probe.as_uri()], capture_output=True, text=True, timeout=120)
    probe.unlink()
    found = re.search(r'data-m="([^"]*)"', r.stdout)
    assert found, r.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def inspect_all(dest, n_runs=14, iterations=300, rows=686):
    """An inspect folder the size of ``inspect --all``: 14 runs, each with a long eps_hat
    trace, five teachers' row lists and a long evidence string in every cell."""
    dest.mkdir(parents=True)
    (dest / "raudit.json").write_text(json.dumps(
        {"schema_version": 1, "spec_hash": "x", "spec": {"kind": "inspect", "all": True}}))
    runs, lines = [], ["impl,category,status,evidence,plot"]
    statuses = ("violated", "ok", "not_checked", "not_applicable")
    for i in range(n_runs):
        impl = f"impl-number-{i}"
        runs.append({"impl": impl, "dataset": "cervical", "settings": {"epsilon": 1.0},
                     "iterations": iterations, "final_eps_hat": 1.0 + i / 997,
                     "eps_hat": [k / iterations + 1e-9 * k for k in range(iterations)],
                     "teachers_seen": {str(t): list(range(t * rows // 5, (t + 1) * rows // 5))
                                       for t in range(5)},
                     "events": 10, "wall_s": 1.5, "violations": []})
        for j, c in enumerate(CATEGORIES):
            ev = "measured: " + ", ".join(f"value {k} = {k / 7:.4f}" for k in range(25))
            lines.append(f'{impl},{c},{statuses[(i + j) % 4]},"{ev}",')
    (dest / "inspect.json").write_text(json.dumps(runs))
    (dest / "violations.csv").write_text("\n".join(lines) + "\n")
    return dest


def test_inspect_all_page_shows_its_table_first_and_stays_short(tmp_path):
    r = build(inspect_all(tmp_path / "ins"), tmp_path / "rep")
    m = layout(r["page"], "table")  # the violations table is the page's first table
    assert m["top"] is not None and m["top"] < FIRST_SCREEN, m
    assert m["height"] < 4000, m
    assert "impl-number-13" in r["page"].read_text()  # all 14 runs are on it


def test_audit_page_shows_its_verdict_first(audit_store, tmp_path):
    m = layout(build(audit_store, tmp_path / "rep")["page"], ".verdict")
    assert m["top"] is not None and m["top"] < FIRST_SCREEN, m
    assert m["height"] < 4000, m


def test_utility_page_shows_its_verdicts_first(utility_store, tmp_path):
    m = layout(build(utility_store, tmp_path / "rep")["page"], ".verdict")
    assert m["top"] is not None and m["top"] < FIRST_SCREEN, m
    assert m["height"] < 4000, m


def test_campaign_page_shows_its_verdicts_first(audit_store, tmp_path):
    camp = as_campaign({"a": audit_store, "b": audit_store}, tmp_path / "camp",
                       tables=("shadow", "summary"))
    m = layout(build(camp, tmp_path / "rep")["page"], ".verdict")
    assert m["top"] is not None and m["top"] < FIRST_SCREEN, m
    assert m["height"] < 5000, m
