"""What a threat model does lives in its object (raudit.runs.threats.THREATS; issue 44
item 5): outside that registry and cli/ (which names threat models in its help and views)
no code compares a threat model's name, as test_generator_knowledge keeps generator names
in generators/. Read from the source, like test_layers."""

from __future__ import annotations

import re
from pathlib import Path

import raudit
from raudit.runs.threats import THREATS

# every registered name, and the level a data-only audit records
NAMES = "|".join(re.escape(n) for n in sorted(THREATS.names()) + ["data-only"])
QUOTED = rf"""["']({NAMES})["']"""
THREAT_COMPARISON = re.compile(rf"""(==|!=)\s*{QUOTED}|{QUOTED}\s*(==|!=)"""
                               rf"""|\bin\s+[(\[{{][^)\]}}]*{QUOTED}""")


def threat_comparisons(root: Path) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel == "runs/threats.py" or rel.startswith("cli/"):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if THREAT_COMPARISON.search(line):
                hits.append(f"raudit/{rel}:{n}: {line.strip()}")
    return hits


def test_no_threat_model_name_is_compared_outside_the_registry_and_cli():
    assert threat_comparisons(Path(raudit.__file__).parent) == []


def test_the_threat_model_name_check_can_fail():
    for line in ('threat = x if req.threat_model == "white-box" else None',
                 "if 'black-box' != level:", 'if s.threat_model in ("transcript", "active"):',
                 'if row["threat_model"] not in ["one-run"]:', 'if kind == "data-only":'):
        assert THREAT_COMPARISON.search(line), line
    for line in ('name = "white-box"', "if req.white_box:", 'if kind == "paper":',
                 'THREATS.get("external")', "if name in THREATS:"):
        assert not THREAT_COMPARISON.search(line), line
