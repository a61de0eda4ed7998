"""A tiny external generator for the exec adapter's tests: run as `python fake_external.py DIR`.

It uses numpy and pandas only (no raudit), as a program in another environment would.
fit keeps per-column means, stds and ranges; sample draws independent normals, clipped
and rounded to the training types. Environment switches make it misbehave on purpose:
FAKE_FAIL=1 exits 1, FAKE_SLEEP=S sleeps, FAKE_ROWS=K returns K rows.
"""

import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

folder = Path(sys.argv[-1])  # the work folder is always the last argument
req = json.loads((folder / "request.json").read_text())
if os.environ.get("FAKE_FAIL"):
    print("fake failure: the package is broken", file=sys.stderr)
    sys.exit(1)
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
if req["action"] == "fit":
    df = pd.read_parquet(folder / "train.parquet")
    state = {c: [float(df[c].mean()), float(df[c].std() or 0.0), float(df[c].min()),
                 float(df[c].max()), str(df[c].dtype)] for c in df.columns}
    (folder / "state.json").write_text(json.dumps({"columns": state, "seed": req["seed"]}))
    (folder / "summary.json").write_text(json.dumps({"iterations": 3, "eps_hat": req["epsilon"]}))
    with open(folder / "events.jsonl", "w") as f:
        for it in range(3):
            f.write(json.dumps({"iteration": it, "eps_hat": req["epsilon"] * (it + 1) / 3}) + "\n")
else:
    state = json.loads((folder / "state.json").read_text())
    rng = np.random.default_rng([state["seed"], req["seed"]])
    n = int(os.environ.get("FAKE_ROWS", req["n"]))
    out = {}
    for c, (mu, sd, lo, hi, dtype) in state["columns"].items():
        x = np.clip(rng.normal(mu, sd, n), lo, hi)
        out[c] = np.round(x).astype(dtype) if dtype.startswith(("int", "uint")) else x
    pd.DataFrame(out).to_parquet(folder / "synthetic.parquet")
