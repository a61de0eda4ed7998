"""An xdist worker's last steps, never cut short by execnet's SIGINT (imported as a hook
by conftest.py; tests/test_xdist_wind_down.py checks it in a pytest of its own).

When the controller ends a worker, execnet gives the worker's last steps 5 s, then sends
the worker a SIGINT (``execnet.gateway_base.WorkerGateway._terminate_execution``). Those
steps come after the worker has said it finished: the plugins' terminal summaries (the
hypothesis plugin imports hypothesis there, in a worker that ran no hypothesis test),
pytest's unconfigure with its gc pass (which runs the finalisers of everything the tests
left, torch._dynamo's among them). A worker at nice 19 on a loaded machine took 6-11 s
for them (measured under SCHED_IDLE beside the study campaign), and the KeyboardInterrupt
landed wherever it was; inside a finaliser Python prints it ("Exception ignored in ..."),
which is how a torch/_dynamo traceback came to be printed before the test summary.

So a worker does the slow parts before it reports finished, and a finished worker ignores
SIGINT: a Ctrl-C is the controller's to handle, and execnet still ends a stuck worker
(os._exit after 10 s more).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import signal

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session) -> None:
    """Before xdist's own hook (a wrapper) tells the controller this worker finished."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return
    with contextlib.suppress(ImportError):  # what the hypothesis plugin's summary imports
        importlib.import_module("hypothesis.internal.observability")
    gc.collect()  # the finalisers run now, not under execnet's 5 s
    signal.signal(signal.SIGINT, signal.SIG_IGN)
