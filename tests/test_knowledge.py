"""Knowledge lives where it belongs, read from the source like test_layers (issue 44):

* a generator's (its ``mechanism()``, its options) in generators/ (item 4): outside
  generators/ and cli/ (which names generators for its help and flags) no code compares a
  generator's name;
* a threat model's in its object (raudit.runs.threats.THREATS; item 5): outside that
  registry and cli/ (which names threat models in its help and views) no code compares a
  threat model's name.
"""

from __future__ import annotations

import re
from pathlib import Path

import raudit
from raudit.runs.threats import THREATS

ROOT = Path(raudit.__file__).parent

IMPL_COMPARISON = re.compile(r"""\bimpl\s*(==|!=)\s*["']|\bimpl\s+(not\s+)?in\s+[(\[{]\s*["']""")

# every registered threat model's name, and the level a data-only audit records
NAMES = "|".join(re.escape(n) for n in sorted(THREATS.names()) + ["data-only"])
QUOTED = rf"""["']({NAMES})["']"""
THREAT_COMPARISON = re.compile(rf"""(==|!=)\s*{QUOTED}|{QUOTED}\s*(==|!=)"""
                               rf"""|\bin\s+[(\[{{][^)\]}}]*{QUOTED}""")


def matching_lines(pattern: re.Pattern[str], allowed: tuple[str, ...]) -> list[str]:
    """``raudit/<file>:<line>: <text>`` for each line of raudit/ that ``pattern`` matches,
    outside files whose path (relative to raudit/) starts with one of ``allowed``."""
    hits = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel.startswith(allowed):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                hits.append(f"raudit/{rel}:{n}: {line.strip()}")
    return hits


def test_no_generator_name_is_compared_outside_generators_and_cli():
    assert matching_lines(IMPL_COMPARISON, ("generators/", "cli/")) == []


def test_no_threat_model_name_is_compared_outside_the_registry_and_cli():
    assert matching_lines(THREAT_COMPARISON, ("runs/threats.py", "cli/")) == []


def test_the_generator_name_check_can_fail():
    for line in ('if impl == "paper":', "if game.impl != 'fixed':", 'if impl in ("a", "b"):',
                 'if req.impl not in ["gpate"]:'):
        assert IMPL_COMPARISON.search(line), line
    for line in ("if impl in PAIRINGS:", "impl = req.impl", 'if kind == "paper":'):
        assert not IMPL_COMPARISON.search(line), line


def test_the_threat_model_name_check_can_fail():
    for line in ('threat = x if req.threat_model == "white-box" else None',
                 "if 'black-box' != level:", 'if s.threat_model in ("transcript", "active"):',
                 'if row["threat_model"] not in ["one-run"]:', 'if kind == "data-only":'):
        assert THREAT_COMPARISON.search(line), line
    for line in ('name = "white-box"', "if req.white_box:", 'if kind == "paper":',
                 'THREATS.get("external")', "if name in THREATS:"):
        assert not THREAT_COMPARISON.search(line), line
