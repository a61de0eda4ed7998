"""``raudit report``: a results folder in, a self-contained report folder out.

::

    OUT/index.html      (or OUT/report.md with format="md")
    OUT/<page>.html     sub-pages a section links to (e.g. inspect-evidence.html)
    OUT/figures/*.png   every figure, referenced by relative path
    OUT/tables/*.csv    every table of the page

Every input is checked (raudit.report.load) before anything is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from raudit.errors import ConfigError
from raudit.report import audits, inspect, provenance, render, study, utility
from raudit.report.load import load
from raudit.report.model import Figure, Report, Table
from raudit.results.files import check_writable, write_atomic
from raudit.results.schema import TABLES

FORMATS = ("html", "md")
PAGES = ("index.html", "report.md")  # a folder holding one is a report: rewritten in place


def _check_out(results: Path, out: Path) -> None:
    """Refuse an --out that is the results folder or lies in one of its data folders: a
    page or a figure in ``shadow/`` broke every later read of the table
    (``pd.read_parquet(X/"shadow")``). A new folder inside the results folder (``X/report``)
    or an earlier report's is fine."""
    root, target = results.resolve(), out.resolve()
    if target == root:
        raise ConfigError("--out must not be the results folder itself; choose another folder")
    try:
        first = target.relative_to(root).parts[0]
    except ValueError:
        return  # outside the results folder
    folder = root / first
    report = any((folder / p).is_file() for p in PAGES)
    if first in (*TABLES, "inspect") or (folder.is_dir() and not report):
        raise ConfigError(f"--out {out} lies in the results' own folder {first}/, which raudit "
                          f"reads as data; choose a new folder (e.g. {results / 'report'})")


def build(results: Path | str, out: Path | str, fmt: str = "html", embed: bool = False,
          notice: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Write the report of ``results`` to ``out``; returns the page, figures and tables."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format takes {' or '.join(FORMATS)}, got {fmt!r}")
    results, out = Path(results), Path(out)
    res = load(results, notice)
    _check_out(results, out)
    check_writable(out)
    out.mkdir(parents=True, exist_ok=True)
    title = {"campaign": "raudit campaign report", "utility": "raudit utility report",
             "inspect": "raudit inspect report"}.get(res.kind, "raudit audit report")
    report = Report(f"{title}: {results.name}")
    for make in (study.section, audits.section, utility.section, inspect.section):
        sec = make(res, out)
        if sec is not None:
            report.sections.append(sec)
    report.sections.append(provenance.section(res))
    tables = []
    subpages = {name: page for sec in report.sections for name, page in sec.pages.items()}
    for sec in report.sections + [s for p in subpages.values() for s in p.sections]:
        for b in sec.blocks:
            if isinstance(b, Table):
                path = out / "tables" / b.csv
                path.parent.mkdir(parents=True, exist_ok=True)
                text = b.frame.to_csv(index=False)
                write_atomic(path, lambda fh, t=text: fh.write(t.encode("utf-8")))
                tables.append(path)
    figures = list(dict.fromkeys(out / b.png for r in [report, *subpages.values()]
                                 for s in r.sections for b in s.blocks if isinstance(b, Figure)))
    pages = []
    for name, rep in [("index" if fmt == "html" else "report", report), *subpages.items()]:
        page = out / f"{name}.{fmt}"
        text = render.html(rep, out, embed=embed) if fmt == "html" else render.markdown(rep)
        write_atomic(page, lambda fh, t=text: fh.write(t.encode("utf-8")))
        pages.append(page)
    return {"page": pages[0], "pages": pages, "figures": figures, "tables": tables,
            "kind": res.kind, "sections": [s.title for s in report.sections]}
