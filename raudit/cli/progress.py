"""Progress bars (rich) that degrade to nothing when output is not a terminal or JSON is asked for."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator

from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn,
                           TimeElapsedColumn, TimeRemainingColumn)


def make_progress(*, transient: bool = False) -> Progress:
    return Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                    MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                    TimeRemainingColumn(), transient=transient)


@contextlib.contextmanager
def iteration_bar(description: str, total: int | None, *, quiet: bool = False
                  ) -> Iterator[Callable[[int], None]]:
    """Yields ``tick(done)`` that sets the bar to ``done`` iterations."""
    if quiet or not sys.stderr.isatty():
        yield lambda done: None
        return
    with make_progress(transient=True) as bar:
        task = bar.add_task(description, total=total)
        yield lambda done: bar.update(task, completed=done)


@contextlib.contextmanager
def phase_bars(quiet: bool) -> Iterator[Callable]:
    """A progress factory ``phase(description, total) -> tick(n)``: one rich bar per phase
    (with ETA) on a terminal, nothing otherwise or when ``quiet``."""
    if quiet or not sys.stderr.isatty():
        @contextlib.contextmanager
        def none(description, total):
            yield lambda n: None
        yield none
        return
    with make_progress() as bar:
        @contextlib.contextmanager
        def phase(description, total):
            task = bar.add_task(description, total=total)
            yield lambda n: bar.advance(task, n)
        yield phase
