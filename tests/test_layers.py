"""The import-layer contract: each top-level part of raudit imports only parts on its own
layer or below (the layer table of /work/shared/STYLE.md), the graph of imports
between top-level parts has no cycle, and neither has the graph between modules (so no
two modules of one folder import each other, directly or round a loop).

Read from the source with ``ast`` (every ``import``, including those inside functions
and under ``if TYPE_CHECKING``, which still couple the modules), so no module is
imported to check it. ``from package import name`` is an edge to the submodule
``package.name`` where that is a module, else to the package's ``__init__``.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import raudit

ROOT = Path(raudit.__file__).parent

# Top first. A part may import a part of its own layer (the graph between them must stay
# acyclic) or of any layer below; never one above.
LAYERS: list[set[str]] = [
    {"cli", "api", "campaign"},  # commands, the Python API, YAML campaigns: compose, never compute
    {"runs"},  # jobs, the scheduler, dispatch, run_audit / run_utility / run_inspect
    {"report"},  # reads results folders, writes pages and figures
    {"audit", "utility", "inspect", "crosscheck"},  # games, estimators, benchmarks, checks
    {"engine"},  # Ray only here
    {"attacks", "generators", "results", "upstream", "plots"},
    {"accountants", "events", "data", "classifiers", "privacy"},
    {"registry", "seeds", "errors", "wording"},
]
LEVEL = {part: i for i, layer in enumerate(LAYERS) for part in layer}


def _part(module: str) -> str | None:
    bits = module.split(".")
    return bits[1] if bits[0] == "raudit" and len(bits) > 1 else None


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT.parent).with_suffix("")
    bits = list(rel.parts)
    return ".".join(bits[:-1] if bits[-1] == "__init__" else bits)


def _imports(path: Path, modules: frozenset[str] = frozenset()) -> set[str]:
    """Absolute names of the raudit modules ``path`` imports (relative imports resolved);
    ``from P import n`` also names ``P.n`` where that is one of ``modules``."""
    name = _module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            # `from raudit import data` imports the part `data`; `from P import mod`, P.mod
            subs = {f"{target}.{a.name}" for a in node.names
                    if target == "raudit" or f"{target}.{a.name}" in modules}
            out |= subs
            if len(subs) < len(node.names) or target == "raudit":  # names from P itself
                out.add(target)
    return {m for m in out if m == "raudit" or m.startswith("raudit.")}


def part_graph() -> dict[str, dict[str, list[str]]]:
    """{importing part: {imported part: [importing modules]}} between top-level parts."""
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for path in sorted(ROOT.rglob("*.py")):
        src = _part(_module_name(path)) or "(raudit)"
        for target in _imports(path):
            dst = _part(target)
            if dst is not None and dst != src:
                graph[src][dst].append(_module_name(path))
    return graph


def module_graph() -> dict[str, dict[str, list[str]]]:
    """{importing module: {imported module: [itself]}} between raudit's modules."""
    paths = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
    modules = frozenset(paths)
    graph: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for name, path in paths.items():
        for target in _imports(path, modules) & modules - {name}:
            graph[name][target].append(name)
    return graph


def upward_imports(graph) -> list[str]:
    return sorted(f"{src} -> {dst} ({', '.join(sorted(set(mods)))})"
                  for src, dsts in graph.items() if src in LEVEL
                  for dst, mods in dsts.items() if dst in LEVEL and LEVEL[dst] < LEVEL[src])


def cycles(graph) -> list[list[str]]:
    """Every strongly connected set of two or more parts (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(set(graph) | {d for ds in graph.values() for d in ds}):
        if v not in index:
            visit(v)
    return found


def test_every_part_has_a_layer():
    parts = {p.name if p.is_dir() else p.stem for p in ROOT.iterdir()
             if (p.is_dir() and (p / "__init__.py").exists())
             or (p.suffix == ".py" and p.stem != "__init__")}
    missing = sorted(parts - set(LEVEL))
    assert not missing, f"parts with no layer in LAYERS: {missing}"


def test_no_upward_imports():
    bad = upward_imports(part_graph())
    assert not bad, f"{len(bad)} upward import(s):\n" + "\n".join(bad)


def test_no_cycles_between_parts():
    found = cycles(part_graph())
    assert not found, f"{len(found)} import cycle(s) between parts: {found}"


def test_no_cycles_between_modules():
    """A cycle between modules (in practice between modules of one folder: the part graph
    above has none) means the folder was cut in the wrong place: the shared piece belongs
    in a module of its own, or the base takes its variants as arguments."""
    graph = module_graph()
    found = cycles(graph)
    detail = ["  " + " <-> ".join(group) + ": " + "; ".join(
        f"{a} -> {', '.join(sorted(set(graph[a]) & set(group)))}" for a in group)
        for group in found]
    assert not found, f"{len(found)} import cycle(s) between modules:\n" + "\n".join(detail)


@pytest.mark.parametrize("graph, upward, loops", [
    ({"audit": {"campaign": ["raudit.audit.runner"]},
      "campaign": {"audit": ["raudit.campaign.jobs"]}}, 1, 1),
    ({"cli": {"campaign": ["raudit.cli.campaign"]}, "utility": {"audit": ["raudit.utility.x"]}},
     0, 0),
])
def test_the_checks_can_fail(graph, upward, loops):
    """The checks themselves find an upward import and a cycle in a made-up graph."""
    assert len(upward_imports(graph)) == upward
    assert len(cycles(graph)) == loops
