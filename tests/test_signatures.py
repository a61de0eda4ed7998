"""Issue 26 item 4: no function outside ``cli/`` and ``api/`` takes more than 10 parameters
(``self`` and ``cls`` not counted); options travel as one frozen object instead (the
generators' ``Options``, ``TeacherSource``, ``TeacherTraining``, ``CrosscheckSpec``). The
commands and their Python functions are the exception: each takes one keyword per flag, as a
user writes them, and hands them on as one frozen settings object (``runs/audit_settings``).

Read from the source with ``ast``, so no module is imported to check it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import raudit

ROOT = Path(raudit.__file__).parent
MOST = 10


def _count(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    a = fn.args
    names = [p.arg for p in a.posonlyargs + a.args]
    n = len(names) + len(a.kwonlyargs) + (a.vararg is not None) + (a.kwarg is not None)
    return n - 1 if names and names[0] in ("self", "cls") else n


def test_no_function_outside_the_commands_takes_more_than_ten_parameters():
    wide = []
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT)
        if rel.parts[0] in ("cli", "api"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _count(node) > MOST:
                wide.append(f"{rel}:{node.lineno} {node.name} ({_count(node)})")
    assert not wide, "more than 10 parameters (group them in a frozen object):\n" + "\n".join(wide)
