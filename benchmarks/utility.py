"""Time of the utility benchmark: 25 synthetic datasets x 12 classifiers, split into
generator training and classifier scoring, with the slowest classifiers.

Runs the real path (plan -> chunks -> engine -> run_chunk -> Parquet store) for each
dataset: ``--impl`` (default paper) at eps = 1, 5 fits x 5 samples, Setting B only
(the study's) or ``--settings BC``, on ``--workers`` Ray actors (default 2) with fits
in chunks of ``--chunk-size`` (default 1: five chunks, so both cores score). Reported
from the rows the chunks wrote: the generator training time (sum over fits), the
classifier scoring time (sum of every classifier's fit + score), the wall of the run,
and scoring per classifier, slowest first.

    RAUDIT_DATA_DIR=/work/shared/data python benchmarks/utility.py [--dataset cervical epileptic]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time

from raudit.engine.driver import EngineConfig
from raudit.runs.utility import run_utility
from raudit.utility.plan import UtilityRequest
from raudit.utility.runner import frame


def measure(dataset: str, impl: str, settings: str, workers: int, chunk: int, fits: int,
            samples: int) -> dict:
    req = UtilityRequest(impl=impl, dataset=dataset, epsilons=(1.0,), fits=fits, samples=samples,
                         settings=tuple(settings), chunk_size=chunk)
    with tempfile.TemporaryDirectory() as out:
        t0 = time.perf_counter()
        r = run_utility(req, out, EngineConfig(backend="ray", workers=workers))
        wall = time.perf_counter() - t0
        df = frame(out)
    syn = df[(df["impl"] != "real") & (df["status"] == "ok") & df["classifier"].notna()]
    per = syn.drop_duplicates(["trial_id", "sample_index", "setting", "classifier"])
    by_clf = per.groupby("classifier")["score_wall_s"].sum().sort_values(ascending=False)
    train = float(syn.drop_duplicates("trial_id")["train_wall_s"].sum())
    score = float(by_clf.sum())
    (p,) = r["points"]
    return {"dataset": dataset, "impl": impl, "settings": settings, "workers": workers,
            "datasets": fits * samples, "classifiers": int(per["classifier"].nunique()),
            "train_s": round(train, 1), "score_s": round(score, 1),
            "score_per_core_s": round(score / workers, 1), "wall_s": round(wall, 1),
            "auroc_B": p.get("auroc_B"), "iterations": p.get("iterations"),
            "slowest": {k: round(float(v), 1) for k, v in by_clf.items()}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", nargs="+", default=["cervical"])
    ap.add_argument("--impl", default="paper")
    ap.add_argument("--settings", default="B")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--chunk-size", type=int, default=1)
    ap.add_argument("--fits", type=int, default=5)
    ap.add_argument("--samples", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    res = [measure(d, a.impl, a.settings, a.workers, a.chunk_size, a.fits, a.samples)
           for d in a.dataset]
    if a.json:
        print(json.dumps(res, indent=2))
        return
    for r in res:
        print(f"{r['dataset']} ({r['impl']}, eps=1, {r['datasets']} synthetic datasets x "
              f"{r['classifiers']} classifiers, Setting {r['settings']}, {r['workers']} workers):")
        print(f"  generator training {r['train_s']} s (sum over fits, {r['iterations']} iterations "
              f"each), classifier scoring {r['score_s']} s of CPU (= {r['score_per_core_s']} s "
              f"on {r['workers']} cores), wall of the run {r['wall_s']} s")
        print("  scoring per classifier (s, all datasets): " +
              ", ".join(f"{k} {v}" for k, v in r["slowest"].items()))


if __name__ == "__main__":
    main()
