"""What a report is made of, independent of how it is rendered (HTML or Markdown).

A report is a list of sections; a section holds blocks in order: paragraphs, verdict
lines, tables (a DataFrame, also written as CSV), figures (a PNG beside the page),
key/value lists, preformatted text and lines of links.

A link target is a path relative to the page, or ``page:NAME#anchor`` for a sub-page of
the same report (written as NAME.html or NAME.md, whichever the report's format is).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd


@dataclass
class Para:
    text: str


@dataclass
class Verdict:
    label: str  # which audit
    text: str  # raudit.audit.verdict.verdict's sentence
    violated: bool
    caution: bool = False  # not violated, but no pass either (raudit.audit.verdict.caution)


@dataclass
class Table:
    title: str
    frame: pd.DataFrame
    csv: str  # file name under tables/
    note: str = ""
    links: dict[tuple[int, str], str] = field(default_factory=dict)  # (row, column) -> href
    row_ids: list[str] | None = None  # an anchor per row, for links from other tables
    display: dict[str, str] = field(default_factory=dict)  # cell value -> shorter text shown


@dataclass
class Figure:
    title: str
    png: str  # path relative to the page, e.g. figures/eps.png
    caption: str = ""
    wide: bool = False  # a full-width figure; narrow ones sit two to a row
    thumb: bool = False  # a small picture that links to the full one (many figures, short page)


@dataclass
class KeyValues:
    items: list[tuple[str, str]]


@dataclass
class Pre:
    text: str


@dataclass
class Links:
    """One line: ``lead`` then the links, e.g. raw data kept out of the page."""

    lead: str
    items: list[tuple[str, str]]  # (label, href)


Block = Para | Verdict | Table | Figure | KeyValues | Pre | Links


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    pages: dict[str, "Report"] = field(default_factory=dict)  # its sub-pages, by file stem
    anchor: str = ""  # an id for links from other pages (default: its position)

    def add(self, block: Block) -> Block:
        self.blocks.append(block)
        return block


@dataclass
class Report:
    title: str
    sections: list[Section] = field(default_factory=list)
