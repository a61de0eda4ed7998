"""Help screens a newcomer reads: no Python types after flags (`<bool>`, `<list[str]>`),
no `{arg}` in usage lines, no help text eaten as markup, every option explained, and
`-o` meaning --option wherever it exists."""

from __future__ import annotations

import pytest
import typer

from raudit.cli.app import app, main
from raudit.cli.helptext import tidy


def _commands():
    root = typer.main.get_command(app)
    tidy(root)
    out = []

    def walk(cmd, path):
        subs = getattr(cmd, "commands", {})
        if not subs:
            out.append((path, cmd))
        for name, sub in subs.items():
            walk(sub, [*path, name])
    walk(root, [])
    return out


COMMANDS = _commands()


@pytest.mark.parametrize("path,cmd", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_has_help_and_o_means_option(path, cmd):
    for p in cmd.params:
        if p.param_type_name == "option":
            assert (p.help or "").strip(), f"raudit {' '.join(path)} {p.opts[0]} has no help"
            if "-o" in p.opts:
                assert "--option" in p.opts, f"raudit {' '.join(path)}: -o is {p.opts}"


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=[" ".join(p) for p, _ in COMMANDS])
def test_help_screen_reads_cleanly(path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0
    text = capsys.readouterr().out
    assert "<bool>" not in text and "<list[" not in text, text
    usage = next(ln for ln in text.splitlines() if "Usage:" in ln)
    assert "{" not in usage, usage


def test_target_width_help_keeps_its_interval(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # one line per option
    with pytest.raises(SystemExit):
        main(["audit", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "stop once the interval [eps_lo, eps_hi] is narrower than this" in text
