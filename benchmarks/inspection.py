"""Wall time of `raudit inspect` per implementation on cervical at the study's settings.

k = 5, eps = 1, lambda = 1e-3, delta the generator's own, at most 1,000 iterations (the
CLI's defaults), one torch thread, both probes on; timed in two parts: the instrumented run
(training + events + samples), the two probes and the checks, then the plots. Target: under
2 minutes per implementation on CPU.

    RAUDIT_DATA_DIR=../shared/data python benchmarks/inspection.py [--impl paper borealis ...]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch

from raudit import data
from raudit.inspect.job import InspectRequest, generator_options
from raudit.inspect.plots import plot_all
from raudit.inspect.runner import InspectSpec, inspect_generator

PORTS = ["paper", "original", "updated", "synthcity", "turing", "borealis", "smartnoise"]


def measure(impl: str, ds) -> dict:
    n, d = ds.train.shape
    opts = generator_options(impl, InspectRequest(impls=(impl,)), n, d)  # the CLI's defaults
    t1 = time.perf_counter()
    run = inspect_generator(InspectSpec(impl, options=opts), ds, probes=True)
    t2 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        plot_all(run["_context"], Path(tmp))
    t3 = time.perf_counter()
    return {"impl": impl, "iterations": run["iterations"], "events": run["events"],
            "run_and_probes_s": round(t2 - t1, 2),
            "plots_s": round(t3 - t2, 2), "total_s": round(t2 - t1 + t3 - t2, 2),
            "violated": [v["category"] for v in run["violations"] if v["status"] == "violated"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--impl", nargs="+", default=PORTS)
    ap.add_argument("--dataset", default="cervical")
    args = ap.parse_args()
    torch.set_num_threads(1)
    ds = data.load(args.dataset)
    for impl in args.impl:
        print(json.dumps(measure(impl, ds)), flush=True)


if __name__ == "__main__":
    main()
