"""Write raudit/runs/reference-rates.json: the reference rates a dry-run uses on a machine
that has calibrated nothing yet (see raudit.runs.reference).

For every distinct generator set-up of the given campaign files: one calibration of
M = 8 models capped at CAL_ITERS iterations (model-iterations per CPU-second, and the
iterations per model when the models stopped by eps within the cap), then how the rate
moves with the chunk size: the chunk-size calibration (``calibrate_chunk``, AUTO_ITERS
iterations at M = 1, 8, 32, 128, side by side in one process) gives the ratios rate(M) /
rate(8), and the entry keeps ``rates`` = {M: rate at 8 x that ratio}. Runs train at the M
that ``chunk_size: auto`` picks (32-128), where the rate is up to 10x the rate at 8. Plus
this machine's speed (raudit.runs.reference.measure_speed, the median of 5). Run it on a
quiet machine.

    RAUDIT_DATA_DIR=/work/shared/data python tools/reference_rates.py configs/*.yaml

``--add`` keeps the file's set-ups and speed and measures only the set-ups it lacks, each
rate scaled to the file's reference speed by this machine's speed measured now (so the
entries stay comparable). ``--ratios-from LOG`` takes the ratios from a campaign's output
instead of measuring them (its ``JOB: chunk size N from model-iterations per CPU-second
M=1: ..., M=8: ...`` lines, the same calibration run by the campaign on its own slots), for
every set-up of the files that the log names, those already in the file included.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from raudit.campaign.run import load_jobs
from raudit.runs import calibrate as cb
from raudit.runs import reference
from raudit.runs.chunk_cache import load_average, machine
from raudit.runs.job_estimate import CAL_M

NOTICE = re.compile(r"(\S+): chunk size \d+ from model-iterations per CPU-second (.*?)(?: \(cached|"
                    r" on \w+)")


def logged_rates(text: str) -> dict[str, dict[int, float]]:
    """{job name: {M: rate}} from a campaign's chunk-size notices (the last one per job)."""
    out = {}
    for name, rates in NOTICE.findall(text):
        out[name] = {int(m): float(r.replace(",", ""))
                     for m, r in re.findall(r"M=(\d+): ([\d,.]+)", rates)}
    return out


def at_each_m(rate8: float, side_by_side: dict[int, float]) -> dict[str, float]:
    """{M: rate} from the rate at CAL_M and the side-by-side rates' ratios to theirs at CAL_M."""
    if CAL_M not in side_by_side or side_by_side[CAL_M] <= 0:
        return {str(CAL_M): round(rate8, 3)}
    base = side_by_side[CAL_M]
    return {str(m): round(rate8 * r / base, 3) for m, r in sorted(side_by_side.items())}


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    ap.add_argument("configs", nargs="+")
    ap.add_argument("--add", action="store_true", help="keep the file's set-ups; measure the missing")
    ap.add_argument("--ratios-from", type=Path, help="a campaign's output with chunk-size notices")
    a = ap.parse_args()
    old = json.loads(reference.PATH.read_text()) if a.add or a.ratios_from else {}
    setups: dict[str, dict[str, Any]] = dict(old.get("setups", {}))
    logged = logged_rates(a.ratios_from.read_text()) if a.ratios_from else {}
    scale = 1.0
    if a.add or a.ratios_from:
        speed = float(old["speed"])
        head = {k: v for k, v in old.items() if k != "setups"}
        # this machine's speed now, to put new rates on the file's reference scale
        if a.add:
            scale = speed / statistics.median(reference.measure_speed() for _ in range(5))
    else:
        speed = statistics.median(reference.measure_speed() for _ in range(5))
        head = {"machine": machine(), "python": platform.python_version(),
                "speed": round(speed, 1), "load": load_average(),
                "measured_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                "configs": []}
    if a.ratios_from:
        head["ratios_from"] = f"{a.ratios_from.name} (chunk-size calibration, side by side)"
    for path in a.configs:
        for job in load_jobs(path)[1]:
            if job.kind == "inspect":
                continue
            fit = cb.job_fit(job)
            k = reference.fit_key(fit)
            if k in setups and job.name in logged:
                rate8 = reference.entry_rates(setups[k]).get(CAL_M)
                if rate8:
                    setups[k] = {"rates": at_each_m(rate8, logged[job.name]),
                                 "iterations": setups[k].get("iterations")}
                continue
            if k in setups or a.ratios_from:
                continue
            impl, opts, dataset, eps, delta, label, bounds = fit
            cal = cb.fit_rate(impl, opts, dataset, eps, delta, CAL_M, label, bounds,
                              cap=cb.CAL_ITERS)
            cap = min(int(opts.get("max_iter") or cb.CAL_ITERS), cb.CAL_ITERS)
            # only a stop by eps before the cap is a fact to keep (not the cap itself)
            stopped = (cal.iterations if cal.iterations is not None
                       and cal.iterations < cap else None)
            side = cb.calibrate_chunk({"fit": fit, "device": "cpu"})["rates"]
            setups[k] = {"rates": at_each_m(cal.cpu_rate * scale, side), "iterations": stopped}
            print(f"{impl:12s} {dataset!s:14s} {cal.cpu_rate:9.1f} model-it/CPU-s at M={CAL_M}, "
                  f"x{max(side.values()) / side.get(CAL_M, 1.0):.2f} at best"
                  f"{'' if stopped is None else f', stops at {stopped}'}", flush=True)
            _write(head, setups, [], a.add)  # each set-up kept as soon as it is measured
    _write(head, setups, a.configs, a.add)
    print(f"{len(setups)} set-ups, speed {speed:,.0f} steps/CPU-s -> {reference.PATH}")


def _write(head: dict[str, Any], setups: dict[str, Any], done: list[str], add: bool) -> None:
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
