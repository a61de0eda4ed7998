"""The report opened in a real browser: headless Chromium (Debian's `chromium` package)
renders the page, every image decodes, and the console stays clean.

The page has no JavaScript; the test writes a copy of it with a checker script that runs
on load and records the images that did not decode in a body attribute, which
``--dump-dom`` prints. A page with a missing image is the negative control.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess

import pytest

from raudit.report.build import build

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(CHROMIUM is None, reason="headless browser test needs "
                                 "Debian's `chromium` package (apt-get install chromium); "
                                 "not installed here")]

CHECKER = """<script>window.addEventListener("load", function () {
  var bad = [].filter.call(document.images, function (i) {
    return !(i.complete && i.naturalWidth > 0); }).map(function (i) {
    return i.getAttribute("src"); });
  document.body.setAttribute("data-broken", JSON.stringify(bad));
  document.body.setAttribute("data-images", String(document.images.length));
});</script>"""


def _render(page):
    probe = page.with_name("_probe.html")
    probe.write_text(page.read_text().replace("</body>", CHECKER + "</body>"))
    r = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                        "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
                        "--dump-dom", probe.as_uri()], capture_output=True, text=True, timeout=120)
    probe.unlink()
    body = re.search(r'<body[^>]*data-broken="([^"]*)"[^>]*data-images="(\d+)"', r.stdout)
    console = [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]
    broken = json.loads(html.unescape(body.group(1))) if body else None
    return r.returncode, broken, int(body.group(2)) if body else None, console, r.stdout


@pytest.fixture(scope="module")
def report_dir(audit_store, tmp_path_factory):
    return build(audit_store, tmp_path_factory.mktemp("report") / "rep")


def test_chromium_renders_the_report(report_dir):
    rc, broken, n_images, console, dom = _render(report_dir["page"])
    assert rc == 0
    assert broken == [] and n_images == len(report_dir["figures"]) == 3
    assert console == []  # no script errors, no failed loads reported to the console
    assert "verdict" in dom and "Provenance" in dom


def test_chromium_reports_a_missing_image(report_dir, tmp_path):
    copy = tmp_path / "rep"
    shutil.copytree(report_dir["page"].parent, copy)
    (copy / "figures" / "eps_emp.png").unlink()
    rc, broken, _, _, _ = _render(copy / "index.html")
    assert rc == 0 and broken == ["figures/eps_emp.png"]
