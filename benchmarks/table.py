"""The performance tables of README.md and docs/performance.md, written from the newest
results file of each host kind (``benchmarks/results/*.json``, smoke runs left out).

Each table sits between two markers and is replaced whole; nothing outside them changes.
``python -m benchmarks table`` writes both; ``--check`` only says whether they are current
(exit 1 if not), as ``tests/test_docs.py`` does.
"""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PAGES = {"README.md": "short", "docs/performance.md": "full"}
BEGIN = "<!-- performance table: written by `python -m benchmarks table`; do not edit -->"
END = "<!-- end of performance table -->"


def newest(results: Path = RESULTS) -> list[dict]:
    """The newest non-smoke results file of each host kind: CPU hosts first, the host with the
    most figures (the one the whole suite ran on) first among them."""
    best: dict[str, dict] = {}
    for path in sorted(results.glob("*.json")):
        doc = json.loads(path.read_text(encoding="utf-8"))
        if doc.get("smoke"):
            continue
        doc["file"] = path.relative_to(ROOT).as_posix() if path.is_relative_to(ROOT) else path.name
        kind = doc["host"]["kind"]
        if kind not in best or doc["date"] > best[kind]["date"]:
            best[kind] = doc
    return sorted(best.values(), key=lambda d: (d["host"].get("gpu") is not None,
                                                -len(d["figures"]), d["host"]["kind"]))


def _value(fig: dict) -> str:
    v = fig.get("value")
    if v is None:
        return f"not measured ({fig.get('skipped', 'no value')})"
    text = f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}".rstrip("0").rstrip(".")
    return text + ("x" if fig["unit"] == "x" else f" {fig['unit']}")


def _heading(doc: dict) -> str:
    h = doc["host"]
    what = h["gpu"] or f"{h['cpu']}, {h['cores']} cores" + (f", {h['isa'].upper()}" if h.get("isa") else "")
    return f"**{h['kind']}** ({what}; `{doc['file']}`)"


def render(docs: list[dict], style: str) -> str:
    """One table per host kind. ``short``: figure, value, commit; ``full`` adds the command and
    the date (the README keeps to its size, docs/performance.md says how to reproduce)."""
    parts = []
    for doc in docs:
        parts.append(_heading(doc) + (f": {doc['note']}" if doc.get("note") else ""))
        parts.append("")
        if style == "short":
            parts += ["| figure | measured | commit |", "|---|---:|---|"]
            parts += [f"| {f['label']} | {_value(f)} | `{f['commit']}` |" for f in doc["figures"]]
        else:
            parts += ["| figure | measured | commit, date | command |", "|---|---:|---|---|"]
            parts += [f"| {f['label']} | {_value(f)} | `{f['commit']}`, {f['date']} | "
                      f"`{f['command']}` |" for f in doc["figures"]]
        parts.append("")
    return "\n".join(parts).rstrip("\n")


def replaced(text: str, table: str, page: str) -> str:
    """``text`` with the block between the markers replaced by ``table``."""
    try:
        start = text.index(BEGIN) + len(BEGIN)
        end = text.index(END, start)
    except ValueError:
        raise ValueError(f"{page}: no '{BEGIN}' ... '{END}' markers") from None
    return text[:start] + "\n" + table + "\n" + text[end:]


def stale(results: Path = RESULTS, root: Path = ROOT) -> list[str]:
    """The pages whose table differs from what the newest results would write."""
    docs = newest(results)
    out = []
    for page, style in PAGES.items():
        text = (root / page).read_text(encoding="utf-8")
        if replaced(text, render(docs, style), page) != text:
            out.append(page)
    return out


def write(results: Path = RESULTS, root: Path = ROOT) -> list[str]:
    """Rewrite the tables; returns the pages that changed. Each page is written whole to a
    temporary file and renamed over the old one."""
    docs = newest(results)
    changed = []
    for page, style in PAGES.items():
        path = root / page
        text = path.read_text(encoding="utf-8")
        new = replaced(text, render(docs, style), page)
        if new != text:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)
            changed.append(page)
    return changed
