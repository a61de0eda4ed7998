"""A campaign file: YAML in, a list of validated jobs out, every error with its key and line.

::

    name: quick-audit
    defaults: {seed: 0}                    # merged into every job (a job's own keys win)
    jobs:
      - name: wc-{impl}                    # {key} takes the job's value of a grid key
        kind: audit                        # audit | utility | inspect
        grid: {impl: [paper, original]}    # the product of the lists, one job each
        attack: querybased
        shadow_models: 20
        options: {max_iter: 5}

The keys of a job are the fields of the value object the command line builds
(:class:`raudit.audit.runner.AuditRequest`, :class:`raudit.utility.plan.UtilityRequest`),
so a campaign accepts exactly what ``raudit audit`` / ``raudit utility`` accept and
fails with the same messages, prefixed by ``FILE:LINE: jobs[i].key``.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.errors import ConfigError

if TYPE_CHECKING:
    import yaml

KINDS = ("audit", "utility", "inspect")
TOP_KEYS = ("name", "description", "defaults", "jobs")
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_VALUES = 100_000  # YAML values in one file, aliases counted at every use
MAX_JOBS = 10_000  # jobs after grid expansion: more is a typo, not a campaign


@dataclass
class Node:
    """A parsed YAML value with the line of each mapping key and list item."""

    value: Any  # what YAML holds: a mapping, a list or a scalar
    line: int
    lines: dict[object, int] = field(default_factory=dict)  # key or index -> line
    children: dict[object, Node] = field(default_factory=dict)  # key or index -> Node


@dataclass(frozen=True)
class JobSpec:
    """One job after grid expansion: where it came from and its raw settings."""

    name: str
    kind: str
    settings: dict[str, Any]
    where: str  # "FILE:LINE" of the job
    lines: dict[str, str]  # setting key -> "FILE:LINE"


@dataclass
class _Budget:
    """What one document may still expand to. An alias is a reference in YAML but a copy
    here (each copy keeps its own lines), so nested aliases multiply: nine aliases of nine
    aliases of ... grew to gigabytes (the "billion laughs"). ``path``: the collection nodes
    being built, so an alias of its own ancestor is caught instead of recursing forever."""

    left: int = MAX_VALUES
    path: set[int] = field(default_factory=set)  # id() of each collection node


def _build(loader: yaml.SafeLoader, node: yaml.Node, source: str,
           budget: _Budget | None = None) -> Node:
    import yaml

    budget = budget if budget is not None else _Budget()
    line = node.start_mark.line + 1
    budget.left -= 1
    if budget.left < 0:
        raise ConfigError(f"{source}:{line}: the file expands to more than {MAX_VALUES:,} "
                          "values (aliases of aliases?); a campaign needs far fewer")
    if not isinstance(node, (yaml.MappingNode, yaml.SequenceNode)):
        return Node(loader.construct_object(node, deep=True), line)
    if id(node) in budget.path:
        raise ConfigError(f"{source}:{line}: an alias refers to a value that contains it "
                          "(a recursive alias); write the value out")
    budget.path.add(id(node))
    try:
        if isinstance(node, yaml.MappingNode):
            out = Node({}, line)
            for k, v in node.value:
                if not isinstance(k, yaml.ScalarNode):
                    raise ConfigError(f"{source}:{k.start_mark.line + 1}: a key must be a plain "
                                      "name, not a list or a mapping")
                key = loader.construct_object(k, deep=True)
                if key in out.value:
                    raise ConfigError(f"{source}:{k.start_mark.line + 1}: key {key!r} given twice")
                child = _build(loader, v, source, budget)
                out.value[key], out.lines[key], out.children[key] = \
                    child.value, k.start_mark.line + 1, child
            return out
        out = Node([], line)
        for i, v in enumerate(node.value):
            child = _build(loader, v, source, budget)
            out.value.append(child.value)
            out.lines[i], out.children[i] = v.start_mark.line + 1, child
        return out
    finally:
        budget.path.discard(id(node))


def parse(text: str, source: str = "<campaign>") -> Node:
    """The YAML document as a :class:`Node` tree (syntax errors name their line)."""
    import yaml

    try:
        loader = yaml.SafeLoader(text)
        try:
            root = loader.get_single_node()
            return _build(loader, root, source) if root is not None else Node(None, 1)
        finally:
            loader.dispose()
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{source}:{mark.line + 1}" if mark is not None else source
        problem = getattr(exc, "problem", None) or str(exc)
        raise ConfigError(f"{where}: not valid YAML ({problem})") from None


def load(path: Path | str) -> tuple[dict[str, str], list[JobSpec]]:
    """Read a campaign file: (its header: name, description; its expanded jobs)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read campaign file {path}: {exc.strerror or exc}") from None
    return expand(parse(text, str(path)), str(path), default_name=path.stem)


def expand(root: Node, source: str, default_name: str = "campaign"
           ) -> tuple[dict[str, str], list[JobSpec]]:
    """Check the file's structure and expand every job's grid."""
    if not isinstance(root.value, dict):
        raise ConfigError(f"{source}:{root.line}: a campaign is a mapping with a `jobs:` list")
    for key in root.value:
        if key not in TOP_KEYS:
            raise ConfigError(f"{source}:{root.lines[key]}: unknown key {key!r}; known: "
                              f"{', '.join(TOP_KEYS)}")
    name = str(root.value.get("name") or default_name)
    defaults = root.value.get("defaults") or {}
    if not isinstance(defaults, dict):
        raise ConfigError(f"{source}:{root.lines['defaults']}: defaults must be a mapping")
    dnode = root.children.get("defaults")
    jobs_node = root.children.get("jobs")
    if jobs_node is None or not isinstance(jobs_node.value, list) or not jobs_node.value:
        raise ConfigError(f"{source}:{root.lines.get('jobs', root.line)}: `jobs:` must be a "
                          "non-empty list")
    out: list[JobSpec] = []
    for i, job in enumerate(jobs_node.value):
        jnode = jobs_node.children[i]
        at = f"{source}:{jnode.line}"
        if not isinstance(job, dict):
            raise ConfigError(f"{at}: jobs[{i}] must be a mapping of settings")
        lines = {k: f"{source}:{dnode.lines[k]}" for k in defaults} if dnode else {}
        lines.update({k: f"{source}:{ln}" for k, ln in jnode.lines.items()})
        merged = {**defaults, **job}
        kind = merged.get("kind", "audit")
        if kind not in KINDS:
            raise ConfigError(f"{lines.get('kind', at)}: jobs[{i}].kind must be one of "
                              f"{', '.join(KINDS)}; got {kind!r}")
        grid = merged.pop("grid", None) or {}
        if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
            raise ConfigError(f"{lines.get('grid', at)}: jobs[{i}].grid must map setting names "
                              "to non-empty lists of values")
        points = math.prod(len(v) for v in grid.values())
        if len(out) + points > MAX_JOBS:
            raise ConfigError(f"{lines.get('grid', at)}: jobs[{i}].grid makes {points:,} jobs "
                              f"({' x '.join(f'{len(v):,}' for v in grid.values())}); a campaign "
                              f"holds at most {MAX_JOBS:,}: split it or shorten the lists")
        gnode = jnode.children.get("grid")
        for key in grid:
            lines[key] = f"{source}:{gnode.lines[key]}" if gnode else at
        template = str(merged.pop("name", "") or f"{kind}{i}")
        merged.pop("kind", None)
        for values in itertools.product(*grid.values()) if grid else [()]:
            point = dict(zip(grid, values))
            out.append(JobSpec(_name(template, point, lines.get("name", at), i), kind,
                               {**merged, **point}, at, lines))
    seen: dict[str, str] = {}
    for job in out:
        if job.name in seen:
            raise ConfigError(f"{job.where}: job name {job.name!r} is used twice (also at "
                              f"{seen[job.name]}); put a grid key in the name, e.g. "
                              "name: audit-{impl}")
        seen[job.name] = job.where
    return {"name": name, "description": root.value.get("description") or ""}, out


def _name(template: str, point: dict[str, Any], where: str, i: int) -> str:
    try:
        name = template.format(**{k: _slug(v) for k, v in point.items()})
    except (KeyError, IndexError, ValueError) as exc:
        raise ConfigError(f"{where}: jobs[{i}].name {template!r} refers to {exc}, which is not "
                          "a grid key of this job") from None
    import string

    used = {f for _, f, _, _ in string.Formatter().parse(template) if f}
    # grid keys the name does not mention are appended, so every point has its own name
    name += "".join(f"-{_slug(v)}" for k, v in point.items() if k not in used)
    if not NAME.match(name):
        raise ConfigError(f"{where}: jobs[{i}].name {name!r} must be letters, digits, '.', '_' "
                          "or '-' (it names a folder)")
    return name


def _slug(value: Any) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", str(value)).strip("_") or "x"


def select(jobs: list[JobSpec], only: list[str] | None) -> list[JobSpec]:
    """The jobs named by ``--only`` (exact names or fnmatch patterns), all if none."""
    if not only:
        return jobs
    import fnmatch

    chosen = [j for j in jobs if any(fnmatch.fnmatchcase(j.name, pat) for pat in only)]
    unmatched = [p for p in only if not any(fnmatch.fnmatchcase(j.name, p) for j in jobs)]
    if unmatched:
        raise ConfigError(f"--only {', '.join(unmatched)} matches no job; jobs: "
                          f"{', '.join(j.name for j in jobs)}")
    return chosen
