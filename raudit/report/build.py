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
    before = _clear_stale(out, notice)  # an earlier report's files: none may stay beside this one
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
    _record(out, before, [*pages, *figures, *tables])
    return {"page": pages[0], "pages": pages, "figures": figures, "tables": tables,
            "kind": res.kind, "sections": [s.title for s in report.sections]}


#: what a report folder says it wrote, so that the next report into it removes what it
#: no longer writes (a previous report's figures and tables beside a new page mislead)
WRITTEN = ".raudit-report.json"


def _files(out: Path) -> set[Path]:
    return {p for p in out.rglob("*") if p.is_file()}


def _clear_stale(out: Path, notice: Callable[[str], None]) -> set[Path]:
    """Remove the files an earlier report wrote into ``out``: those its record lists, and
    any figures/*.png or tables/*.csv (the report's own folders, also where an older raudit
    left no record). Other files are never touched. Runs once the input is checked, before
    this report writes anything; returns the files left (the user's own)."""
    import json

    stale: set[Path] = set()
    try:
        stale = {out / f for f in json.loads((out / WRITTEN).read_text())["files"]}
    except (OSError, ValueError, KeyError, TypeError):
        pass  # no record (a first report, or one by an older raudit)
    stale |= set((out / "figures").glob("*.png")) | set((out / "tables").glob("*.csv"))
    gone = [p for p in stale if p.is_file() and p.resolve().is_relative_to(out.resolve())]
    for p in gone:
        p.unlink(missing_ok=True)
    if gone:
        notice(f"removed {len(gone)} file(s) of an earlier report in {out}")
    return _files(out)


def _record(out: Path, before: set[Path], written: list[Path]) -> None:
    """Write the record of what this report wrote (what the next one into ``out`` removes)."""
    import json

    mine = (_files(out) - before) | {p for p in written if p.is_file()}
    text = json.dumps({"files": sorted(p.relative_to(out).as_posix() for p in mine
                                       if p.name != WRITTEN)}, indent=1)
    write_atomic(out / WRITTEN, lambda fh: fh.write(text.encode("utf-8")))
