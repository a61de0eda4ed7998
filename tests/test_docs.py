"""The documentation is part of the product: README.md stays a short guide and docs/ holds guides
and reference only (lab notebooks live in lab/, outside both), every page under docs/ is
reachable from the README, every relative link (and its #anchor) resolves, the performance
tables are the newest benchmark results, and the `raudit` commands shown in the docs' bash
blocks parse against today's CLI (all of them) and run (the short ones; a block preceded by
`<!-- long -->` is only parsed)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
README_LIMIT = 12 * 1024
# Guides and reference, not notebooks: dated runs and probes go to lab/ (issue 44).
DOCS_LIMIT = 150 * 1024
LONG_MARK = "<!-- long -->"

_FENCE = re.compile(r"^(```|~~~)(\w*)\s*$")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _pages() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _pointer_pages() -> list[Path]:
    """The one-line README.md files left in subpackages: their links are checked too."""
    return sorted((ROOT / "raudit").glob("*/README.md"))


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    text: str
    long: bool


def _split(page: Path) -> tuple[str, list[Block]]:
    """The page's prose (code blocks blanked) and its fenced code blocks."""
    prose, blocks, code, start, lang, long_ = [], [], None, 0, "", False
    last_prose = ""
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        fence = _FENCE.match(line.strip())
        if code is None and fence:
            code, start, lang, long_ = [], n, fence.group(2), last_prose == LONG_MARK
            prose.append("")
        elif code is not None and line.strip() in ("```", "~~~"):
            blocks.append(Block(page, start, lang, "\n".join(code), long_))
            code = None
            prose.append("")
        elif code is not None:
            code.append(line)
            prose.append("")
        else:
            prose.append(line)
            if line.strip():
                last_prose = line.strip()
    assert code is None, f"{_rel(page)}:{start}: unclosed code block"
    return "\n".join(prose), blocks


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    prose, _ = _split(page)
    seen: dict[str, int] = {}
    out = set()
    for line in prose.splitlines():
        m = re.match(r"^#{1,6}\s+(.*)$", line)
        if m:
            slug = _slug(m.group(1))
            out.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return out


def _links(page: Path) -> list[tuple[str, str]]:
    """(target path relative to the repository, anchor) of every relative link on a page."""
    prose, _ = _split(page)
    out = []
    for target in _LINK.findall(prose):
        if re.match(r"^[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        dest = page if not path else (page.parent / path).resolve()
        out.append((dest.relative_to(ROOT).as_posix() if dest.is_relative_to(ROOT) else str(dest),
                    anchor))
    return out


def test_readme_is_short():
    size = len(README.read_bytes())
    assert size <= README_LIMIT, f"README.md is {size} bytes; keep it under {README_LIMIT}"


def test_docs_are_guides_not_notebooks():
    size = sum(len(p.read_bytes()) for p in (ROOT / "docs").rglob("*.md"))
    assert size <= DOCS_LIMIT, (f"docs/ is {size} bytes; keep it under {DOCS_LIMIT}: dated "
                                "measurements belong in lab/, a finding in docs/findings.md")


def test_every_relative_link_resolves():
    broken = []
    for page in [*_pages(), *_pointer_pages()]:
        for dest, anchor in _links(page):
            target = ROOT / dest
            if not target.exists():
                broken.append(f"{_rel(page)} -> {dest}")
                continue
            if anchor and target.suffix == ".md" and anchor not in _anchors(target):
                broken.append(f"{_rel(page)} -> {dest}#{anchor} (no such heading)")
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_every_docs_page_is_reachable_from_the_readme():
    seen, todo = {_rel(README)}, [README]
    while todo:
        page = todo.pop()
        for dest, _ in _links(page):
            if dest.endswith(".md") and dest not in seen and (ROOT / dest).exists():
                seen.add(dest)
                todo.append(ROOT / dest)
    unreachable = sorted(_rel(p) for p in _pages() if _rel(p) not in seen)
    assert not unreachable, f"not reachable from README.md by links: {unreachable}"


def test_the_readme_keeps_the_ci_test_command():
    """`.ci/run` runs the README's test command verbatim: the two must not drift apart."""
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    marker = ci.index("# --- the README's test command, verbatim ---")
    command = ci[marker + 1].strip()
    _, blocks = _split(README)
    assert any(b.text.strip() == command for b in blocks), command


def test_performance_tables_are_the_newest_benchmark_results():
    """README.md and docs/performance.md show what `python -m benchmarks table` writes from the
    newest results file of each host kind: a figure edited by hand, or results added without
    rewriting the tables, fails here."""
    sys.path.insert(0, str(ROOT))
    from benchmarks import table

    docs = table.newest()
    assert docs, "no benchmarks/results/*.json"
    for doc in docs:  # each figure says its command and commit
        for fig in doc["figures"]:
            assert fig["command"] and re.fullmatch(r"[0-9a-f]{7,40}", fig["commit"]), fig
    assert not table.stale(), ("out of date: run `python -m benchmarks table` "
                               f"({', '.join(table.stale())})")


def test_the_table_check_fails_on_a_hand_edited_figure(tmp_path):
    sys.path.insert(0, str(ROOT))
    from benchmarks import table

    for page in table.PAGES:
        (tmp_path / page).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / page).write_text((ROOT / page).read_text(encoding="utf-8"), encoding="utf-8")
    assert table.stale(root=tmp_path) == []
    readme = tmp_path / "README.md"
    first = next(f for f in table.newest()[0]["figures"] if f.get("value") is not None)
    text = readme.read_text(encoding="utf-8")
    shown = table._value(first)
    assert shown in text
    readme.write_text(text.replace(shown, "1" + shown, 1), encoding="utf-8")
    assert table.stale(root=tmp_path) == ["README.md"]
    assert table.write(root=tmp_path) == ["README.md"]
    assert table.stale(root=tmp_path) == []


# ------------------------------------------------------------------- commands


def _commands() -> list[tuple[Block, list[str]]]:
    """Every `raudit ...` line of the bash blocks (continuations joined, comments and leading
    VAR=value assignments dropped); `$(...)` becomes a placeholder word."""
    out = []
    for page in _pages():
        for block in _split(page)[1]:
            if block.lang not in ("bash", "sh", "shell"):
                continue
            for line in block.text.replace("\\\n", " ").splitlines():
                line = re.sub(r"\$\([^)]*\)", "SUBSTITUTED", line)
                try:
                    words = shlex.split(line, comments=True)
                except ValueError as exc:  # pragma: no cover - a broken docs line
                    raise AssertionError(f"{_rel(page)}:{block.line}: {exc}: {line}") from exc
                while words and re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]):
                    words = words[1:]
                if words and words[0] == "raudit":
                    out.append((block, words[1:]))
    return out


def _parse(argv: list[str]) -> None:
    """Parse argv with the CLI's own parser, without running the command."""
    import typer.main

    from raudit.cli.app import app

    cmd, name, args = typer.main.get_command(app), "raudit", [a for a in argv if a != "--help"]
    while True:
        try:
            ctx = cmd.make_context(name, list(args))
        except Exception as exc:  # `raudit datasets` alone prints its help: not an error
            if type(exc).__name__ in ("NoArgsIsHelpError", "Exit"):
                return
            raise
        if not hasattr(cmd, "resolve_command"):
            return
        rest = [*getattr(ctx, "_protected_args", getattr(ctx, "protected_args", [])), *ctx.args]
        if not rest:
            return
        name, cmd, args = cmd.resolve_command(ctx, rest)


def test_docs_show_commands():
    pages = {_rel(b.page) for b, _ in _commands()}
    assert "README.md" in pages and len(pages) >= 8, sorted(pages)
    assert any(not b.long for b, _ in _commands())


@pytest.mark.parametrize("block,argv", _commands(),
                         ids=lambda v: f"{_rel(v.page)}:{v.line}" if isinstance(v, Block) else "")
def test_every_docs_command_parses(block, argv):
    """Long commands too: a renamed option or command breaks the docs here, at once."""
    try:
        _parse(argv)
    except Exception as exc:
        pytest.fail(f"{_rel(block.page)}:{block.line}: raudit {shlex.join(argv)}: "
                    f"{type(exc).__name__}: {exc}")


def _short_blocks_by_page() -> dict[str, list[tuple[Block, list[str]]]]:
    pages: dict[str, list[tuple[Block, list[str]]]] = {}
    for block, argv in _commands():
        if not block.long:
            pages.setdefault(_rel(block.page), []).append((block, argv))
    return pages


@pytest.mark.slow
@pytest.mark.parametrize("page", sorted(_short_blocks_by_page()))
def test_short_docs_commands_run(page, tmp_path):
    """The short commands of one page, in order, in a scratch folder that sees the repository's
    configs/ (so `raudit report runs/x` reads what `raudit audit --out runs/x` wrote)."""
    for name in ("configs", "tests", "benchmarks"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = dict(os.environ, OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0",
               RAUDIT_CACHE_DIR=str(tmp_path / ".cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    for block, argv in _short_blocks_by_page()[page]:
        done = subprocess.run([sys.executable, "-m", "raudit.cli.app", *argv], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, (f"{page}:{block.line}: raudit {shlex.join(argv)} exited "
                                      f"{done.returncode}:\n{done.stderr[-2000:]}")


# ------------------------------------------------------- deviations tables

_DEVIATION = re.compile(r"^`(\w+)`: (`[^`]*`|True|False|None\b[^(]*|[^(`]+?)\s*(?:\(.*\))?$")


def _deviation_rows() -> list[tuple[str, int, list[str], str, str]]:
    """(page, line, impls, option, faithful default) of every row of the ports' deviations
    tables: `| impl, impl | deviation | `option`: default (alternatives) |`."""
    page = ROOT / "docs" / "generators" / "pategan.md"
    rows = []
    for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("impl", "") or set(cells[0]) <= set("-: "):
            continue
        m = _DEVIATION.match(cells[2])
        if m:
            rows.append((_rel(page), n, [i.strip() for i in cells[0].split(",")],
                         m.group(1), m.group(2).strip()))
    return rows


def test_deviation_tables_name_real_options_with_their_defaults():
    """The hand-written tables must not drift from the code: every option they name exists on
    every port of its row, with the faithful default the table states."""
    from raudit import generators

    rows = _deviation_rows()
    assert len(rows) >= 25, rows  # both tables were found
    wrong = []
    for page, line, impls, option, default in rows:
        for impl in impls:
            specs = {o.name: o for o in generators.get(impl).describe().options}
            if option not in specs:
                wrong.append(f"{page}:{line}: {impl} has no option {option!r}")
                continue
            actual = specs[option].default
            if default.startswith("`"):
                expected = default.strip("`")
            elif default in ("True", "False") or default.startswith("None"):
                expected = default.split()[0]
            else:  # a rule such as max(2, N//1000): the default is computed, not a literal
                continue
            if str(actual) != expected:
                wrong.append(f"{page}:{line}: {impl}.{option} defaults to {actual!r}, "
                             f"the table says {default}")
    assert not wrong, "\n".join(wrong)


# ------------------------------------------------------- the Python API page

PYTHON_API = ROOT / "docs" / "python-api.md"


def test_the_python_api_page_runs(tmp_path):
    """Every python block of docs/python-api.md, in order, as one script in a scratch folder
    (issue 48: a notebook-style walk-through that cannot rot)."""
    blocks = [b.text for b in _split(PYTHON_API)[1] if b.lang == "python"]
    assert len(blocks) >= 8
    script = tmp_path / "walkthrough.py"
    script.write_text("\n\n".join(blocks) + "\n", encoding="utf-8")
    env = dict(os.environ, OMP_NUM_THREADS="1", RAY_USAGE_STATS_ENABLED="0", MPLBACKEND="Agg",
               RAUDIT_CACHE_DIR=str(tmp_path / ".cache"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert out.splitlines()[0] == "33 1.0074419767378342"  # the page's comment (seed 0)
    assert "--threat-model must be one of black-box" in out
    assert (tmp_path / "runs" / "nb-compare.png").stat().st_size > 0
    assert (tmp_path / "runs" / "nb-report" / "index.html").exists()
