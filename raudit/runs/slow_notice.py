"""A line for a measurement the user waits on: said only once it has run a few seconds,
so a quick estimate prints nothing extra and a slow one is never silent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

SLOW_S = 3.0  # a measurement still running after this long is said (said_if_slow)


@contextmanager
def said_if_slow(notice: Callable[[str], None], text: str) -> Iterator[None]:
    """``notice(text)`` once the block has run :data:`SLOW_S` seconds (at once when it is
    0): a dry run that measured for minutes printed nothing meanwhile."""
    if SLOW_S <= 0:
        notice(text)
        yield
        return
    timer = threading.Timer(SLOW_S, notice, args=(text,))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
