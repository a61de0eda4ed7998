"""Helpers for the report tests: parse a page, list what it references, lay out stores."""

from __future__ import annotations

import json
import shutil
from html.parser import HTMLParser
from pathlib import Path


class Page(HTMLParser):
    """Collects image sources, links, text and checks tags are balanced."""

    VOID = {"img", "meta", "br", "hr", "link", "input"}

    def __init__(self):
        super().__init__()
        self.images: list[str] = []
        self.links: list[str] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        if tag == "img":
            self.images.append(a.get("src") or "")
        if tag == "a" and a.get("href"):
            self.links.append(a["href"])
        if tag not in self.VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(path: Path) -> Page:
    p = Page()
    p.feed(path.read_text(encoding="utf-8"))
    p.close()
    return p


def as_campaign(stores: dict[str, Path], dest: Path, tables=("shadow", "summary", "utility")
                ) -> Path:
    """A campaign folder (contract of #14) from single stores: OUT/<table>/job=<name>/parts."""
    dest.mkdir(parents=True)
    manifest = json.loads((next(iter(stores.values())) / "raudit.json").read_text())
    manifest["spec"] = {"kind": "campaign", "jobs": sorted(stores)}
    (dest / "raudit.json").write_text(json.dumps(manifest))
    for job, src in stores.items():
        for t in tables:
            if (src / t).is_dir():
                shutil.copytree(src / t, dest / t / f"job={job}")
    return dest


def inspect_folder(dest: Path, plot_png: Path | None, schema_version: int | None = 1) -> Path:
    """An inspect folder in the layout of #12 with one violated and one ok check."""
    dest.mkdir(parents=True)
    manifest = {"schema_version": schema_version, "spec_hash": "x", "spec": {"kind": "inspect"}}
    if schema_version is None:  # an inspect folder writes no tables: the version is optional
        del manifest["schema_version"]
    (dest / "raudit.json").write_text(json.dumps(manifest))
    runs = [{"impl": "borealis", "dataset": "cervical",
             "settings": {"teachers": 2, "epsilon": 1.0}, "iterations": 3,
             "final_eps_hat": 1.0074419767378342, "eps_hat": [0.25, 0.5, 1.0074419767378342],
             "teachers_seen": {"0": [0, 1, 2], "1": [2, 3]}, "events": 9, "wall_s": 0.5,
             "violations": []}]
    (dest / "inspect.json").write_text(json.dumps(runs))
    plot = ""
    if plot_png is not None:
        plot = "borealis-teacher-data.png"
        shutil.copyfile(plot_png, dest / plot)
    (dest / "violations.csv").write_text(
        "impl,category,status,evidence,plot\n"
        f"borealis,data_partition,violated,teachers saw overlapping rows,{plot}\n"
        "borealis,moments_accountant,ok,,\n")
    return dest
