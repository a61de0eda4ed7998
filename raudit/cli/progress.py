"""Progress for long commands: rich bars on a terminal; off one (a log file, CI, `nohup`,
a pipe) a plain line on stderr every ``RAUDIT_PROGRESS_EVERY`` seconds (default 30) and
one when a phase ends, so a long run is never silent. Nothing when JSON or quiet is
asked for."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from typing import ContextManager

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn,
                           SpinnerColumn, Task, TaskID, TextColumn, TimeElapsedColumn)
from rich.text import Text

DEFAULT_EVERY = 30.0  # seconds between two progress lines off a terminal

#: tick(n, work=None): n more units done (their planned CPU-seconds, where known)
Tick = Callable[..., None]
#: phase(description, total, work=None) -> a context whose value is that phase's tick
#: (raudit.runs.schedule.Progress)
Phases = Callable[..., ContextManager[Tick]]


def notice(message: str) -> None:
    """One raudit line on stderr (warnings and errors say so themselves)."""
    print(message if message.startswith(("warning", "error")) else f"raudit: {message}",
          file=sys.stderr, flush=True)


class _CountColumn(MofNCompleteColumn):
    """done/total of the bar's own unit, or its ``count`` field where the bar runs on
    another (a campaign's bar moves, and its ETA runs, by planned CPU-seconds; it counts
    models)."""

    def render(self, task: Task) -> Text:
        count = task.fields.get("count")
        return super().render(task) if count is None else Text(count, style="progress.download")


class _LeftColumn(ProgressColumn):
    """The time left from the share done since the bar started, as the lines off a
    terminal say it. rich's own column divides by the speed over its last 30 s, so a
    campaign whose chunks come back minutes apart showed no ETA most of the time."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text("")
        if task.finished:
            left = 0.0
        elif task.completed > 0 and task.elapsed:
            left = task.elapsed * (task.total - task.completed) / task.completed
        else:
            return Text("-:--:--", style="progress.remaining")
        minutes, seconds = divmod(int(left), 60)
        hours, minutes = divmod(minutes, 60)
        return Text(f"{hours:d}:{minutes:02d}:{seconds:02d}", style="progress.remaining")


def make_progress(*, transient: bool = False) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    _CountColumn(), TimeElapsedColumn(), TextColumn("eta"),
                    _LeftColumn(), transient=transient)


def _started(bar: Progress, task: TaskID, since: float) -> TaskID:
    """``task`` dated ``since`` seconds back: its elapsed time and ETA count from then."""
    if since > 0:
        for t in bar.tasks:  # rich's Task objects themselves, not copies
            if t.id == task and t.start_time is not None:
                t.start_time -= since
    return task


def every() -> float:
    """Seconds between progress lines off a terminal (``RAUDIT_PROGRESS_EVERY``)."""
    try:
        return max(0.0, float(os.environ.get("RAUDIT_PROGRESS_EVERY", DEFAULT_EVERY)))
    except ValueError:
        return DEFAULT_EVERY


def _dur(s: float) -> str:
    s = int(round(s))
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else (
        f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s")


class LineProgress:
    """One phase's progress as lines: ``update(done)`` prints when ``every`` seconds have
    passed since the last line; :meth:`close` prints the final count."""

    def __init__(self, description: str, total: int | None, *, interval: float | None = None,
                 write: Callable[[str], None] | None = None, cap: bool = False,
                 work: float | None = None, since: float = 0.0) -> None:
        # cap: ``total`` is a ceiling the phase may stop before (training iterations)
        self.description, self.total, self.cap = description, total, cap
        # work: the phase's planned CPU-seconds; with it the share done and the time left
        # go by work, not by count (a campaign's models differ 50x in cost)
        self.work, self.work_done = work, 0.0
        self.interval = every() if interval is None else interval
        self.write = write or (lambda m: print(m, file=sys.stderr, flush=True))
        # since: the phase began that many seconds ago (a campaign's job whose bar opens
        # when its first chunk is back): its elapsed time and ETA count from then
        self.last = time.monotonic()
        self.t0 = self.last - since
        self.done = 0
        self.said = ""  # the last line written

    def line(self, final: bool = False) -> str:
        """The progress line; ``final``: the phase has ended, so nothing is "left"."""
        elapsed = time.monotonic() - self.t0
        if final and self.cap and self.total and self.done < self.total:
            text = f"{self.done:,} (stopped before its cap of {self.total:,})"
        elif final and self.total:
            text = f"{self.done:,}/{self.total:,} ({100 * self.done / self.total:.0f}%)"
        elif self.work:
            share = min(1.0, self.work_done / self.work)
            text = f"{self.done:,}/{self.total or 0:,} ({100 * share:.0f}% of the planned work)"
            if 0 < share < 1:
                text += f", about {_dur(elapsed * (1 - share) / share)} left"
        elif self.total:
            text = f"{self.done:,}/{self.total:,} ({100 * self.done / self.total:.0f}%)"
            if 0 < self.done < self.total:
                text += f", about {_dur(elapsed * (self.total - self.done) / self.done)} left"
        else:
            text = f"{self.done:,} done"
        return f"raudit: {self.description}: {text}, {_dur(elapsed)} elapsed"

    def update(self, done: int) -> None:
        self.done = done
        now = time.monotonic()
        if now - self.last >= self.interval:
            self.last = now
            self.said = self.line()
            self.write(self.said)

    def advance(self, n: int, work: float | None = None) -> None:
        """``n`` more units done; ``work``: their planned CPU-seconds (bars made with
        ``work``)."""
        self.work_done += n if work is None else work
        self.update(self.done + n)

    def close(self) -> None:
        final = self.line(final=True)
        # a phase that did something says so once at the end: not twice when its last
        # update already said the same (a campaign job's bar printed "11/11 (100%)" twice)
        if self.done and final != self.said:
            self.write(final)


def _on_terminal() -> bool:
    """Live bars: on a terminal, and in a Jupyter notebook (rich draws them there as a
    widget; stderr is no tty) for the Python API."""
    return sys.stderr.isatty() or _in_notebook()


def _in_notebook() -> bool:
    if "ipykernel" not in sys.modules:  # cheap: no notebook without its kernel loaded
        return False
    from rich.console import Console

    return Console().is_jupyter


@contextlib.contextmanager
def iteration_bar(description: str, total: int | None, *, quiet: bool = False
                  ) -> Iterator[Callable[[int], None]]:
    """Yields ``tick(done)`` that sets the bar to ``done`` iterations."""
    if quiet:
        yield lambda done: None
        return
    if not _on_terminal():
        lines = LineProgress(description, total, cap=True)  # training may stop early
        try:
            yield lines.update
        finally:
            lines.close()
        return
    with make_progress(transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


@contextlib.contextmanager
def phase_bars(quiet: bool) -> Iterator[Phases]:
    """A progress factory ``phase(description, total, work=None, since=0) -> tick(n,
    work=None)``: one rich bar per phase (with ETA) on a terminal, a line every few seconds
    off one, nothing when ``quiet``. With ``work`` (the phase's planned CPU-seconds) the bar
    and its ETA move by the work each tick says its ``n`` units cost, and still count
    units. ``since``: the phase began that many seconds before it was opened."""
    if quiet:
        @contextlib.contextmanager
        def none(description: str, total: int | None, work: float | None = None,
                 since: float = 0.0) -> Iterator[Tick]:
            yield lambda n, work=None: None
        yield none
        return
    if not _on_terminal():
        @contextlib.contextmanager
        def lines(description: str, total: int | None, work: float | None = None,
                  since: float = 0.0) -> Iterator[Tick]:
            p = LineProgress(description, total, work=work, since=since)
            try:
                yield p.advance
            finally:
                p.close()
        yield lines
        return
    with make_progress() as bar:
        @contextlib.contextmanager
        def phase(description: str, total: int | None, work: float | None = None,
                  since: float = 0.0) -> Iterator[Tick]:
            if work is None:
                task = _started(bar, bar.add_task(description, total=total), since)
                yield lambda n, work=None: bar.advance(task, n)
                return
            done = [0]
            task = _started(bar, bar.add_task(description, total=work, count=f"0/{total:,}"),
                            since)

            def tick(n: int, work: float | None = None) -> None:
                done[0] += n
                bar.update(task, advance=n if work is None else work,
                           count=f"{done[0]:,}/{total:,}")
            yield tick
        yield phase
