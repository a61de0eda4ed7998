"""Knowledge of a generator lives in generators/ (its ``mechanism()``, its options; issue
44 item 4): outside generators/ and cli/ (which names generators for its help and
flags) no code compares a generator's name. Read from the source, like test_layers."""

from __future__ import annotations

import re
from pathlib import Path

import raudit

IMPL_COMPARISON = re.compile(r"""\bimpl\s*(==|!=)\s*["']|\bimpl\s+(not\s+)?in\s+[(\[{]\s*["']""")


def impl_comparisons(root: Path) -> list[str]:
    hits = []
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        if rel.startswith(("generators/", "cli/")):
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if IMPL_COMPARISON.search(line):
                hits.append(f"raudit/{rel}:{n}: {line.strip()}")
    return hits


def test_no_generator_name_is_compared_outside_generators_and_cli():
    assert impl_comparisons(Path(raudit.__file__).parent) == []


def test_the_generator_name_check_can_fail():
    for line in ('if impl == "paper":', "if game.impl != 'fixed':", 'if impl in ("a", "b"):',
                 'if req.impl not in ["gpate"]:'):
        assert IMPL_COMPARISON.search(line), line
    for line in ("if impl in PAIRINGS:", "impl = req.impl", 'if kind == "paper":'):
        assert not IMPL_COMPARISON.search(line), line
