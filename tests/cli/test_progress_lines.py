"""Progress off a terminal: a plain line every RAUDIT_PROGRESS_EVERY seconds and one at
the end of each phase (logs, CI and `nohup` see a long run move); nothing when quiet."""

from __future__ import annotations

import pytest

from raudit.cli import progress


def test_line_progress_counts_and_estimates():
    said = []
    p = progress.LineProgress("shadow models", 200, interval=0.0, write=said.append)
    p.advance(50)
    p.advance(50)
    p.close()
    assert said[0].startswith("raudit: shadow models: 50/200 (25%), about ")
    assert said[1].startswith("raudit: shadow models: 100/200 (50%)")
    assert said[-1].startswith("raudit: shadow models: 100/200 (50%)") and len(said) == 3


def test_line_progress_says_its_end_once():
    said = []
    p = progress.LineProgress("fits", 2, interval=0.0, write=said.append)
    p.advance(1)
    p.advance(1)  # its update says 2/2 (100%): the close has nothing new to say
    p.close()
    assert len(said) == 2 and said[-1].startswith("raudit: fits: 2/2 (100%), ")


def test_line_progress_waits_its_interval():
    said = []
    p = progress.LineProgress("fits", 10, interval=3600.0, write=said.append)
    for _ in range(10):
        p.advance(1)
    assert said == []  # nothing within the interval ...
    p.close()
    assert said == [said[0]] and said[0].startswith("raudit: fits: 10/10 (100%)")  # ... but the end


def test_phase_bars_off_a_terminal_print_lines(monkeypatch, capsys):
    monkeypatch.setenv("RAUDIT_PROGRESS_EVERY", "0")
    monkeypatch.setattr(progress, "_on_terminal", lambda: False)
    with progress.phase_bars(quiet=False) as phase:
        with phase("utility fits", 4) as tick:
            tick(2)
            tick(2)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("raudit: utility fits: 2/4") and err[-1].startswith(
        "raudit: utility fits: 4/4 (100%)")


@pytest.mark.parametrize("maker", ["phase", "iteration"])
def test_quiet_prints_nothing(maker, monkeypatch, capsys):
    monkeypatch.setenv("RAUDIT_PROGRESS_EVERY", "0")
    monkeypatch.setattr(progress, "_on_terminal", lambda: False)
    if maker == "phase":
        with progress.phase_bars(quiet=True) as phase, phase("x", 3) as tick:
            tick(3)
    else:
        with progress.iteration_bar("x", 3, quiet=True) as tick:
            tick(3)
    assert capsys.readouterr().err == ""


def test_iteration_bar_off_a_terminal(monkeypatch, capsys):
    monkeypatch.setenv("RAUDIT_PROGRESS_EVERY", "0")
    monkeypatch.setattr(progress, "_on_terminal", lambda: False)
    with progress.iteration_bar("training paper", 33) as tick:
        tick(10)
        tick(33)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("raudit: training paper: 10/33") and "33/33 (100%)" in err[-1]


def test_iteration_bar_that_stops_early_says_nothing_is_left(monkeypatch, capsys):
    """Issue 48: `train` printed "33/10,000 (0%), about 4m25s left" after it finished (the
    paper stops at its budget long before its iteration cap)."""
    monkeypatch.setenv("RAUDIT_PROGRESS_EVERY", "3600")
    monkeypatch.setattr(progress, "_on_terminal", lambda: False)
    with progress.iteration_bar("training paper", 10_000) as tick:
        tick(33)
    last = capsys.readouterr().err.splitlines()[-1]
    assert "left" not in last and "33 (stopped before its cap of 10,000)" in last


def test_the_terminal_bars_eta_counts_from_the_bars_start():
    """rich's own ETA divides by the speed over its last 30 s: a bar whose ticks come
    minutes apart (a campaign's chunks) showed "-:--:--" nearly all the time. The bar's
    column says what the lines say: the time since its start over the share done."""
    from rich.progress import Progress

    now = [0.0]
    bar = Progress(progress._LeftColumn(), get_time=lambda: now[0], disable=True)
    left = progress._LeftColumn()
    # a campaign's job whose first 17-min chunk just came back: its bar is dated from then
    task = progress._started(bar, bar.add_task("b", total=10), 1020.0)
    assert left.render(bar.tasks[0]).plain == "-:--:--"  # nothing done: no rate yet
    bar.advance(task, 1)
    assert left.render(bar.tasks[0]).plain == "2:33:00"  # 9 more chunks of 17 min
    now[0] = 1020.0
    bar.advance(task, 1)
    assert left.render(bar.tasks[0]).plain == "2:16:00"
    bar.advance(task, 8)
    assert left.render(bar.tasks[0]).plain == "0:00:00"


def test_a_line_progress_dated_back_counts_its_elapsed_time_from_then(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    p = progress.LineProgress("utility-original-epileptic", 10, interval=3600.0,
                              write=lambda m: None, since=1020.0)
    p.advance(1)
    assert p.line() == ("raudit: utility-original-epileptic: 1/10 (10%), about 2h33m left, "
                        "17m00s elapsed")
