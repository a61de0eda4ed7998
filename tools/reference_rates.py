"""Write raudit/runs/reference-rates.json: the reference rates a dry-run uses on a machine
that has calibrated nothing yet (see raudit.runs.reference).

For every distinct generator set-up of the given campaign files: one calibration of
M = 8 models capped at CAL_ITERS iterations (model-iterations per CPU-second, and the
iterations per model when the models stopped by eps within the cap), plus this machine's
speed (raudit.runs.reference.measure_speed, the median of 5). Run it on a quiet machine.

    RAUDIT_DATA_DIR=/work/shared/data python tools/reference_rates.py configs/*.yaml

``--add`` keeps the file's set-ups and speed and measures only the set-ups it lacks, each
rate scaled to the file's reference speed by this machine's speed measured now (so the
entries stay comparable).
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
from datetime import datetime, timezone

from raudit.campaign.run import load_jobs
from raudit.runs import calibrate as cb
from raudit.runs import reference
from raudit.runs.chunk_cache import load_average, machine
from raudit.runs.job_estimate import CAL_M


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--add", action="store_true", help="keep the file's set-ups; measure the missing")
    a = ap.parse_args()
    old = json.loads(reference.PATH.read_text()) if a.add else {}
    setups: dict[str, dict] = dict(old.get("setups", {}))
    scale = 1.0
    if a.add:
        speed = float(old["speed"])
        head = {k: v for k, v in old.items() if k != "setups"}
        # this machine's speed now, to put new rates on the file's reference scale
        scale = speed / statistics.median(reference.measure_speed() for _ in range(5))
    else:
        speed = statistics.median(reference.measure_speed() for _ in range(5))
        head = {"machine": machine(), "python": platform.python_version(),
                "speed": round(speed, 1), "load": load_average(),
                "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "configs": []}
    for path in a.configs:
        for job in load_jobs(path)[1]:
            if job.kind == "inspect":
                continue
            fit = cb.job_fit(job)
            k = reference.fit_key(fit)
            if k in setups:
                continue
            impl, opts, dataset, eps, delta, label, bounds = fit
            cal = cb.fit_rate(impl, opts, dataset, eps, delta, CAL_M, label, bounds,
                              cap=cb.CAL_ITERS)
            cap = min(int(opts.get("max_iter") or cb.CAL_ITERS), cb.CAL_ITERS)
            # only a stop by eps before the cap is a fact to keep (not the cap itself)
            stopped = (cal.iterations if cal.iterations is not None
                       and cal.iterations < cap else None)
            setups[k] = {"rate": round(cal.cpu_rate * scale, 3), "m": CAL_M, "iterations": stopped}
            print(f"{impl:12s} {dataset!s:14s} {cal.cpu_rate:9.1f} model-it/CPU-s"
                  f"{'' if stopped is None else f', stops at {stopped}'}", flush=True)
            _write(head, setups, [], a.add)  # each set-up kept as soon as it is measured
    _write(head, setups, a.configs, a.add)
    print(f"{len(setups)} set-ups, speed {speed:,.0f} steps/CPU-s -> {reference.PATH}")


def _write(head: dict, setups: dict, done: list[str], add: bool) -> None:
    """The file with the set-ups measured so far, written whole and then renamed (a run
    stopped midway keeps what it measured; a config counts as covered only at the end)."""
    out = {**head, "configs": sorted(set(head.get("configs", [])) | set(done)), "setups": setups}
    if add:
        out.update(added_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                   added_load=load_average())
    tmp = reference.PATH.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=1) + "\n")
    tmp.replace(reference.PATH)


if __name__ == "__main__":
    main()
