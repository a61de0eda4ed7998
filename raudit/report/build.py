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
from raudit.report import audits, inspect, provenance, render, utility
from raudit.report.load import load
from raudit.report.model import Figure, Report, Table
from raudit.results.files import check_writable, write_atomic

FORMATS = ("html", "md")


def build(results: Path | str, out: Path | str, fmt: str = "html", embed: bool = False,
          notice: Callable[[str], None] = lambda m: None) -> dict[str, Any]:
    """Write the report of ``results`` to ``out``; returns the page, figures and tables."""
    if fmt not in FORMATS:
        raise ConfigError(f"--format takes {' or '.join(FORMATS)}, got {fmt!r}")
    results, out = Path(results), Path(out)
    res = load(results, notice)
    if out.resolve() == results.resolve():
        raise ConfigError("--out must not be the results folder itself; choose another folder")
    check_writable(out)
    out.mkdir(parents=True, exist_ok=True)
    title = {"campaign": "raudit campaign report", "utility": "raudit utility report",
             "inspect": "raudit inspect report"}.get(res.kind, "raudit audit report")
    report = Report(f"{title}: {results.name}")
    for make in (audits.section, utility.section, inspect.section):
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
    _clear_stale(out, [*pages, *figures, *tables], notice)
    return {"page": pages[0], "pages": pages, "figures": figures, "tables": tables,
            "kind": res.kind, "sections": [s.title for s in report.sections]}


#: what a report folder says it wrote, so that the next report into it removes what it
#: no longer writes (a previous report's figures and tables beside a new page mislead)
WRITTEN = ".raudit-report.json"


def _clear_stale(out: Path, written: list[Path], notice: Callable[[str], None]) -> None:
    """Remove the files an earlier report wrote into ``out`` that this one did not: those
    its record lists, and any figures/*.png or tables/*.csv (the report's own folders,
    also where an older raudit left no record). Other files are never touched."""
    import json

    record = out / WRITTEN
    mine = {p.resolve() for p in written}
    earlier: set[Path] = set()
    try:
        earlier = {(out / f).resolve() for f in json.loads(record.read_text())["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no record (a first report, or one by an older raudit)
    earlier |= {p.resolve() for p in (out / "figures").glob("*.png")}
    earlier |= {p.resolve() for p in (out / "tables").glob("*.csv")}
    stale = sorted(p for p in earlier - mine if p.is_file() and p.is_relative_to(out.resolve()))
    for p in stale:
        p.unlink(missing_ok=True)
    if stale:
        notice(f"removed {len(stale)} file(s) of an earlier report in {out}")
    text = json.dumps({"files": sorted(p.relative_to(out.resolve()).as_posix() for p in mine)},
                      indent=1)
    write_atomic(record, lambda fh: fh.write(text.encode("utf-8")))
