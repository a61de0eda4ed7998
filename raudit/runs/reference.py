"""Reference rates: a plan's estimate without training anything on this machine.

``reference-rates.json`` (beside this module) holds, per generator set-up of the shipped
campaigns (``configs/``), what a short calibration measured on a reference machine:
model-iterations per CPU-second at each chunk size M it was measured at (``rates``: a
chunk's rate grows with M, 10x from M = 8 to 128 on the worst case, so a rate at one M
said nothing of a run at another), and the iterations per model when the models stopped
by their own eps rule within the calibration (a fact of the data and the options, the
same on every machine). ``tools/reference_rates.py`` writes it, with the reference
machine's :func:`speed` beside. Older entries hold one ``rate`` at ``m`` (8).

On another kind of machine the rates are scaled by the ratio of the two machines'
:func:`speed`: steps per CPU-second of a fixed small training loop (the generators'
networks are small, so their time is mostly per-step overhead, as this loop's is),
measured once per machine and cached (again when it was measured on a much busier
machine than now). On the reference's own kind of machine (:func:`speed_factor`) they
are used as measured: that probe read 900 to 3,200 steps/CPU-s on one 2-core host kind
across days and loads, a wider spread than between two hosts of a kind. It is a
cross-machine estimate, labelled "reference" wherever it is used; a set-up calibrated on
this machine uses its own rate.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from raudit.runs.chunk_cache import Fit

PATH = Path(__file__).with_name("reference-rates.json")
SPEED_STEPS = 300


def fit_key(fit: Fit) -> str:
    """A set-up's key without the machine (the iterations do not depend on it)."""
    impl, opts, dataset, eps, delta, label, bounds = fit
    return json.dumps([impl, sorted((str(k), repr(v)) for k, v in opts.items()), str(dataset),
                       eps, delta, label, bounds])


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    try:
        data = json.loads(PATH.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lookup(fit: Fit) -> dict[str, Any] | None:
    """The reference entry of a set-up: {"rates" ({M: model-iterations per CPU-second on
    the reference machine}) or the older "rate" at "m", "iterations" (None: not stopped
    within the calibration)}, or None (not in the table). :func:`scaled_rates` turns its
    rates into this machine's."""
    table = _table()
    got = table.get("setups", {}).get(fit_key(fit))
    return dict(got) if got and table.get("speed") else None


def entry_rates(entry: dict[str, Any]) -> dict[int, float]:
    """{M: model-iterations per CPU-second} of a reference entry, on the reference machine."""
    if entry.get("rates"):
        return {int(m): float(r) for m, r in entry["rates"].items()}
    return {int(entry.get("m") or 8): float(entry["rate"])}


def scaled_rates(entry: dict[str, Any]) -> dict[int, float]:
    """A reference entry's rates on this machine: {M: model-iterations per CPU-second}."""
    f = speed_factor()
    return {m: r * f for m, r in entry_rates(entry).items()}


def speed_factor() -> float:
    """This machine's rates over the reference machine's: 1 on the reference's own kind
    of machine (see the module: the speed probe's spread on one host kind is wider than
    what it would correct), else the ratio of the two :func:`speed` figures."""
    from raudit.runs.chunk_cache import machine

    table = _table()
    if table.get("machine") == machine():
        return 1.0
    return speed() / float(table["speed"])


def measure_speed() -> float:
    """Steps per CPU-second of a fixed small training loop, on one thread."""
    import torch

    from raudit.runs.calibrate import one_thread

    with one_thread():
        g = torch.Generator().manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(),
                                  torch.nn.Linear(64, 1))
        opt = torch.optim.Adam(net.parameters(), lr=1e-3)
        x, y = torch.randn(64, 32, generator=g), torch.randn(64, 1, generator=g)
        for _ in range(20):  # warm up the allocator and the kernels
            _step(net, opt, x, y)
        c0 = time.process_time()
        for _ in range(SPEED_STEPS):
            _step(net, opt, x, y)
        return SPEED_STEPS / max(time.process_time() - c0, 1e-9)


def _step(net: Any, opt: Any, x: Any, y: Any) -> None:
    opt.zero_grad()
    ((net(x) - y) ** 2).mean().backward()
    opt.step()


def speed() -> float:
    """This machine's :func:`measure_speed`, measured once and cached per machine."""
    from raudit.runs import chunk_cache

    from raudit.runs.costs import busy_load

    k = json.dumps(["speed", chunk_cache.machine()])
    got = chunk_cache.lookup_value(k)
    now = chunk_cache.load_average()
    busier = got and got.get("load") is not None and now is not None and \
        got["load"] > busy_load(now)  # measured on a busier machine than now: again
    if got and got.get("steps_per_cpu_s") and not busier:
        return float(got["steps_per_cpu_s"])
    value = measure_speed()
    chunk_cache.store_value(k, {"steps_per_cpu_s": value, "load": now})
    return value
