"""The claimed / eps_true / audited table of G-PATE's upstream bug switches (issue 47, item 5).

For the faithful tabular G-PATE (``--preset paper-tabular``) with each switch off and on
(``shared_teacher_state``, ``shared_teacher_init``, ``accountant=gnmax``), at small sizes:

* on ``breast-cancer`` (455 training rows, 30 teachers of 15 rows, all in one slot of the
  authors' 40), sigma1 = 5, sigma2 = 2, eps = 100 (the sizes at which the data-dependent
  stop changes the run): one training run's claimed eps (``eps_hat``), the eps of the same
  released queries by the data-independent curves at the teachers one record reaches
  (1; with shared optimiser state every teacher of its slot: the threshold check and the
  histogram are Gaussian, so a record moving s teachers' votes costs what sigma / s costs
  one), and the transcript audit (``--threat-model transcript``, its eps_true and eps_cp);
* on ``worst-case`` (5 rows, 2 teachers sharing one slot, sigma1 = 20, sigma2 = 10, eps = 4):
  the black-box audit (``querybased``) and its eps_true.

    RAUDIT_DATA_DIR=/work/shared/data OMP_NUM_THREADS=1 python tools/gpate_switch_table.py \
        [--trials 10000] [--shadow-models 500] [--seed 0]

Prints a markdown table (docs/generators/gpate.md holds its last run). The training run of
the first columns is the transcript audit's own (the same seed), so its eps_true describes it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time

import numpy as np

from raudit import data, generators, seeds
from raudit.accountants.gnmax import (DEFAULT_ORDERS, eps_from_rdp, rdp_gnmax_independent,
                                      rdp_threshold_independent)
from raudit.generators.gpate.slots import slot_count

DELTA = 1e-5
#: the transcript cell (breast-cancer) and the black-box cell (worst-case)
TRANSCRIPT = {"dataset": "breast-cancer", "epsilon": 100.0,
              "options": {"sigma1": 5.0, "sigma2": 2.0}}
BLACK_BOX = {"dataset": "worst-case", "epsilon": 4.0,
             "options": {"teachers": 2, "slot_teachers": 2, "sigma1": 20.0, "sigma2": 10.0,
                         "max_iter": 200}}
SWITCHES = [("all off (paper-tabular)", {}),
            ("shared_teacher_state=true", {"shared_teacher_state": True}),
            ("shared_teacher_init=true", {"shared_teacher_init": True}),
            ("accountant=gnmax", {"accountant": "gnmax"})]


def reach(k: int, slot_teachers: int, shared_state: bool) -> int:
    """Teachers whose votes one record can move: its own, or with shared optimiser state
    every teacher of its slot (they step through the moments its gradients entered)."""
    return -(-k // slot_count(k, slot_teachers)) if shared_state else 1


def independent_eps(sigma1: float, sigma2: float, asked: int, answered: int, s: int) -> float:
    """eps at DELTA of ``asked`` threshold checks and ``answered`` noisy histograms by the
    data-independent RDP curves, at a record moving ``s`` teachers' votes."""
    o = np.asarray(DEFAULT_ORDERS, dtype=np.float64)
    rdp = asked * rdp_threshold_independent(sigma1 / s, o) + answered * rdp_gnmax_independent(
        sigma2 / s, o)
    return float(eps_from_rdp(rdp, o, DELTA))


def transcript_cell(switch: dict, trials: int, seed: int, out: str) -> dict:
    import raudit.api as ra

    opts = {**TRANSCRIPT["options"], **switch}
    ds = data.load(TRANSCRIPT["dataset"])
    gen = generators.get("gpate")(preset="paper-tabular", **opts)
    gen.fit(ds.train, epsilon=TRANSCRIPT["epsilon"], delta=DELTA, columns=ds.columns,
            seed=seeds.derive_seed(seed, seeds.TRANSCRIPT, 1))  # the audit's training run
    s, hp = gen.summary(), gen.resolve(len(ds.train), ds.train.shape[1])
    k = reach(hp.teachers, hp.slot_teachers, hp.shared_teacher_state)
    res = ra.audit(impl="gpate", threat_model="transcript", dataset=TRANSCRIPT["dataset"],
                   epsilon=TRANSCRIPT["epsilon"], delta=DELTA, preset="paper-tabular",
                   options=opts, shadow_models=trials, seed=seed, backend="local", out=out,
                   quiet=True)
    return {"steps": s["iterations"], "claimed": s["eps_hat"], "reach": k,
            "independent": independent_eps(hp.sigma1, hp.sigma2, s["queries"], s["answered"], k),
            "eps_true": res.summary["eps_true"], "eps_cp": res.eps_lower, "max": res.eps_max}


def black_box_cell(switch: dict, shadow: int, seed: int, out: str) -> dict:
    import raudit.api as ra

    res = ra.audit(impl="gpate", attack="querybased", dataset=BLACK_BOX["dataset"],
                   epsilon=BLACK_BOX["epsilon"], delta=DELTA, preset="paper-tabular",
                   options={**BLACK_BOX["options"], **switch}, shadow_models=shadow, seed=seed,
                   backend="local", chunk_size=50, out=out, quiet=True)
    return {"eps_true": res.summary["eps_true"], "eps_cp": res.eps_lower, "max": res.eps_max,
            "auc": res.auc}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=10_000, help="transcript trials per world")
    ap.add_argument("--shadow-models", type=int, default=500, help="black-box models per world")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    print("| switch | steps | claimed | data-independent eps (teachers a record moves) | "
          "transcript: eps_true / eps_cp (max) | worst-case black-box: eps_true / eps_cp "
          "(max), AUC |")
    print("|---|---|---|---|---|---|")
    t0 = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, switch) in enumerate(SWITCHES):
            tr = transcript_cell(switch, a.trials, a.seed, f"{tmp}/t{i}")
            bb = black_box_cell(switch, a.shadow_models, a.seed, f"{tmp}/b{i}")
            print(f"| `{name}` | {tr['steps']} | {tr['claimed']:.2f} | {tr['independent']:.4g} "
                  f"({tr['reach']}) | {tr['eps_true']:.2f} / {tr['eps_cp']:.2f} "
                  f"({tr['max']:.2f}) | {bb['eps_true']:.2f} / {bb['eps_cp']:.2f} "
                  f"({bb['max']:.2f}), {bb['auc']:.3f} |", flush=True)
    print(f"\n{time.process_time() - t0:.0f} CPU-s; transcript {a.trials} trials per world, "
          f"black-box {a.shadow_models} models per world, seed {a.seed}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
