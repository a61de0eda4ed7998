"""What a report is made of, independent of how it is rendered (HTML or Markdown).

A report is a list of sections; a section holds blocks in order: paragraphs, verdict
lines, tables (a DataFrame, also written as CSV), figures (a PNG beside the page),
key/value lists and preformatted text.
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


@dataclass
class Table:
    title: str
    frame: pd.DataFrame
    csv: str  # file name under tables/
    note: str = ""


@dataclass
class Figure:
    title: str
    png: str  # path relative to the page, e.g. figures/eps.png
    caption: str = ""
    wide: bool = False  # a full-width figure; narrow ones sit two to a row


@dataclass
class KeyValues:
    items: list[tuple[str, str]]


@dataclass
class Pre:
    text: str


Block = Para | Verdict | Table | Figure | KeyValues | Pre


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)

    def add(self, block: Block) -> Block:
        self.blocks.append(block)
        return block


@dataclass
class Report:
    title: str
    sections: list[Section] = field(default_factory=list)
