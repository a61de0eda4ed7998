"""Reference rates: a plan's estimate without training anything on this machine.

``reference-rates.json`` (beside this module) holds, per generator set-up of the shipped
campaigns (``configs/``), what a short calibration measured on a reference machine:
model-iterations per CPU-second at M = 8, and the iterations per model when the models
stopped by their own eps rule within the calibration (a fact of the data and the
options, the same on every machine). ``tools/reference_rates.py`` writes it, with
the reference machine's :func:`speed` beside.

On another machine the rate is scaled by the ratio of the two machines' :func:`speed`:
steps per CPU-second of a fixed small training loop (the generators' networks are
small, so their time is mostly per-step overhead, as this loop's is), measured once per
machine in well under a second and cached (again when it was measured on a much busier
machine than now). It is a cross-machine estimate, labelled
"reference" wherever it is used; a set-up calibrated on this machine uses its own rate.
"""

from __future__ import annotations

import json
import time
from functools import lru_cache
from pathlib import Path

PATH = Path(__file__).with_name("reference-rates.json")
SPEED_STEPS = 300


def fit_key(fit: tuple) -> str:
    """A set-up's key without the machine (the iterations do not depend on it)."""
    impl, opts, dataset, eps, delta, label, bounds = fit
    return json.dumps([impl, sorted((str(k), repr(v)) for k, v in opts.items()), str(dataset),
                       eps, delta, label, bounds])


@lru_cache(maxsize=1)
def _table() -> dict:
    try:
        data = json.loads(PATH.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def lookup(fit: tuple) -> dict | None:
    """The reference entry of a set-up: {"rate" (model-iterations per CPU-second on the
    reference machine), "m", "iterations" (None: not stopped within the calibration)},
    or None (not in the table). :func:`scaled_rate` turns its rate into this machine's."""
    table = _table()
    got = table.get("setups", {}).get(fit_key(fit))
    return dict(got) if got and table.get("speed") else None


def scaled_rate(entry: dict) -> float:
    """A reference entry's rate on this machine (model-iterations per CPU-second)."""
    return float(entry["rate"]) * speed() / float(_table()["speed"])


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


def _step(net, opt, x, y) -> None:
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
