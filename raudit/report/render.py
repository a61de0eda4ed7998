"""A report as one static HTML page (standard library only, no JavaScript) or Markdown.

Images are referenced by relative path (they lie beside the page under figures/), so
the folder can be zipped and mailed; ``embed=True`` inlines them as data: URIs
instead, for a single-file page.
"""

from __future__ import annotations

import base64
import math
import re
from html import escape
from urllib.parse import quote
from pathlib import Path

import pandas as pd

from raudit.report.model import Figure, KeyValues, Links, Para, Pre, Report, Table, Verdict

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1240px;margin:2em auto;
padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:right;vertical-align:top}
th{background:#f3f3f3}td:first-child,th:first-child{text-align:left}
figure{display:inline-block;vertical-align:top;margin:1em 1em 1em 0;max-width:48%}
figure.wide{display:block;max-width:100%}figure img{max-width:100%;border:1px solid #eee}
.scroll{overflow-x:auto}
figcaption{font-size:.85em;color:#555}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:.8em}
.note{font-size:.85em;color:#555}.caption{font-weight:600;margin-top:1em}
figure.thumb{max-width:200px;margin:.3em .6em .3em 0}figure.thumb figcaption{font-size:.75em}
td.violated{background:#fbe3e3;font-weight:600}td.ok{color:#286}
td.not_checked,td.not_applicable{color:#888}
td.violated,td.ok,td.not_checked,td.not_applicable{text-align:center}td.text{text-align:left}
"""

# A verdict box's style and its (edge, background) per kind. The page's CSS and the notebook
# box (raudit.api's results) both use them, so a verdict has one colour wherever it shows.
VERDICT_BOX = "padding:.5em .8em;margin:.4em 0;border-left:5px solid {edge};background:{bg}"
VERDICT_COLOURS = {"pass": ("#2a7", "transparent"), "caution": ("#d80", "#fff8e6"),
                   "violated": ("#c22", "#fdf2f2")}


def verdict_style(kind: str) -> str:
    """The inline style of a verdict box of ``kind`` (a key of :data:`VERDICT_COLOURS`)."""
    edge, bg = VERDICT_COLOURS[kind]
    return VERDICT_BOX.format(edge=edge, bg=bg)


CSS += "".join(f".verdict{'' if kind == 'pass' else '.' + kind}{{{verdict_style(kind)}}}\n"
               for kind in VERDICT_COLOURS)


def cell(v) -> str:
    """A table cell as text: 4 significant decimals for floats, blank for missing."""
    if v is None or v is pd.NA:
        return ""
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        return f"{v:.4g}" if abs(v) < 1e4 else f"{v:,.0f}"
    return str(v)


def href(target: str, ext: str) -> str:
    """A block's link target on a page of format ``ext``: ``page:NAME#a`` -> ``NAME.ext#a``."""
    if target.startswith("page:"):
        name, sep, anchor = target[5:].partition("#")
        name = "report" if (name, ext) == ("index", "md") else name  # the main page
        return f"{name}.{ext}{sep}{anchor}"
    return target


def _img_src(fig: Figure, page_dir: Path, embed: bool) -> str:
    if not embed:
        return escape(fig.png, quote=True)
    data = base64.b64encode((page_dir / fig.png).read_bytes()).decode("ascii")
    return f"data:image/png;base64,{data}"


STATUS = ("violated", "ok", "not_checked", "not_applicable")


def _html_cell(t: Table, i: int, col, v) -> str:
    text = escape(t.display.get(v, cell(v)) if isinstance(v, str) else cell(v))
    target = t.links.get((i, col))
    if target:
        text = f'<a href="{escape(href(target, "html"), quote=True)}">{text}</a>'
    # a status word gets its colour (the inspect matrix); any other text none
    cls = (f' class="{v}"' if v in STATUS else
           ' class="text"' if isinstance(v, str) and len(v) > 40 else "")
    return f"<td{cls}>{text}</td>"


def _html_table(t: Table) -> str:
    head = "".join(f"<th>{escape(str(c))}</th>" for c in t.frame.columns)
    ids = t.row_ids or [""] * len(t.frame)
    rows = "".join(
        (f'<tr id="{escape(rid, quote=True)}">' if rid else "<tr>")
        + "".join(_html_cell(t, i, c, v) for c, v in zip(t.frame.columns, r)) + "</tr>"
        for i, (rid, r) in enumerate(zip(ids, t.frame.itertuples(index=False, name=None))))
    note = f'<p class="note">{escape(t.note)}</p>' if t.note else ""
    link = f' (<a href="tables/{escape(t.csv, quote=True)}">CSV</a>)'
    return (f'<p class="caption">{escape(t.title)}{link}</p>'
            f'<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody>'
            f"</table></div>{note}")


def html(report: Report, page_dir: Path, embed: bool = False) -> str:
    out = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
           '<meta name="viewport" content="width=device-width, initial-scale=1">',
           f"<title>{escape(report.title)}</title><style>{CSS}</style></head><body>",
           f"<h1>{escape(report.title)}</h1>"]
    if len(report.sections) > 2:
        out.append("<nav><ul>" + "".join(
            f'<li><a href="#{escape(s.anchor or f"s{i}", quote=True)}">{escape(s.title)}</a></li>'
            for i, s in enumerate(report.sections)) + "</ul></nav>")
    for i, s in enumerate(report.sections):
        out.append(f'<section id="{escape(s.anchor or f"s{i}", quote=True)}">'
                   f"<h2>{escape(s.title)}</h2>")
        for b in s.blocks:
            if isinstance(b, Para):
                out.append(f"<p>{escape(b.text)}</p>")
            elif isinstance(b, Verdict):
                cls = ("verdict violated" if b.violated else "verdict caution" if b.caution
                       else "verdict")
                out.append(f'<p class="{cls}"><strong>{escape(b.label)}</strong>: '
                           f"{escape(b.text)}</p>")
            elif isinstance(b, Table):
                out.append(_html_table(b))
            elif isinstance(b, Figure) and b.thumb:
                src = _img_src(b, page_dir, embed)
                out.append(f'<figure class="thumb"><a href="{src}"><img src="{src}" '
                           f'alt="{escape(b.title, quote=True)}"></a><figcaption>'
                           f"{escape(b.title)}</figcaption></figure>")
            elif isinstance(b, Figure):
                wide = ' class="wide"' if b.wide else ""
                out.append(f'<figure{wide}><img src="{_img_src(b, page_dir, embed)}" '
                           f'alt="{escape(b.title, quote=True)}"><figcaption><strong>'
                           f"{escape(b.title)}</strong> {escape(b.caption)}</figcaption></figure>")
            elif isinstance(b, Links):
                out.append(f'<p class="note">{escape(b.lead)} ' + ", ".join(
                    f'<a href="{escape(href(t, "html"), quote=True)}">{escape(label)}</a>'
                    for label, t in b.items) + "</p>")
            elif isinstance(b, KeyValues):
                out.append("<table>" + "".join(
                    f"<tr><th>{escape(k)}</th><td style=\"text-align:left\">{escape(v)}</td></tr>"
                    for k, v in b.items) + "</table>")
            elif isinstance(b, Pre):
                out.append(f"<pre>{escape(b.text)}</pre>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


# Markdown passes inline HTML through to the page and turns brackets into links, so a
# field value (a job name, a plugin's error, a dataset's column) is written as text: HTML's
# three characters as entities, Markdown's punctuation backslash-escaped (CommonMark shows
# both as the character itself), on one line.
_MD_PUNCTUATION = str.maketrans({c: "\\" + c for c in "\\`*_[]|#!~{}"})

_ATTRIBUTE = str.maketrans({"|": "&#124;", "[": "&#91;", "]": "&#93;"})


def _md_escape(text: object) -> str:
    """``text`` as literal Markdown text on one line (no HTML, links or emphasis)."""
    one_line = " ".join(str(text).splitlines())
    return escape(one_line, quote=False).translate(_MD_PUNCTUATION)


def _md_url(target: str) -> str:
    """A link or image target that cannot end the ``(...)`` it is written in."""
    return quote(target, safe="/#:.-_~=%?&+,")


def _md_pre(text: str) -> list[str]:
    """A fenced code block for ``text``, whose fence no backtick run inside can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


def _md_table(frame: pd.DataFrame, links: dict | None = None, row_ids: list[str] | None = None,
              display: dict | None = None) -> list[str]:
    links, ids, display = links or {}, row_ids or [""] * len(frame), display or {}
    cols = [_md_escape(c) for c in frame.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for i, r in enumerate(frame.itertuples(index=False, name=None)):
        cells = []
        for c, v in zip(frame.columns, r):
            text = _md_escape(display.get(v, cell(v)) if isinstance(v, str) else cell(v))
            target = links.get((i, c))
            cells.append(f"[{text}]({_md_url(href(target, 'md'))})" if target and text
                         else text)
        if ids[i] and cells:  # an anchor for links from another table (inline HTML)
            # entities, which HTML reads back: | would end the cell, [ ] make links
            anchor = escape(ids[i], quote=True).translate(_ATTRIBUTE)
            cells[0] = f'<a id="{anchor}"></a>{cells[0]}'
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def markdown(report: Report) -> str:
    """The report as Markdown; every value written as text (:func:`_md_escape`), as the
    HTML page escapes it."""
    t = _md_escape
    out = [f"# {t(report.title)}", ""]
    for s in report.sections:
        out += [f"## {t(s.title)}", ""]
        for b in s.blocks:
            if isinstance(b, Para):
                out += [t(b.text), ""]
            elif isinstance(b, Verdict):
                mark = "**VIOLATED**" if b.violated else "**caution**" if b.caution else "verdict"
                out += [f"- {mark} ({t(b.label)}): {t(b.text)}", ""]
            elif isinstance(b, Table):
                out += [f"**{t(b.title)}** ([CSV]({_md_url('tables/' + b.csv)}))", "",
                        *_md_table(b.frame, b.links, b.row_ids, b.display), ""]
                if b.note:
                    out += [f"_{t(b.note)}_", ""]
            elif isinstance(b, Figure):
                out += [f"![{t(b.title)}]({_md_url(b.png)})", "",
                        f"*{t(b.title)}.* {t(b.caption)}", ""]
            elif isinstance(b, KeyValues):
                out += [*_md_table(pd.DataFrame(b.items, columns=["item", "value"])), ""]
            elif isinstance(b, Pre):
                out += [*_md_pre(b.text), ""]
            elif isinstance(b, Links):
                out += [t(b.lead) + " " + ", ".join(f"[{t(label)}]({_md_url(href(x, 'md'))})"
                                                    for label, x in b.items), ""]
    return "\n".join(out)
