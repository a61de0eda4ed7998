"""A stand-in for the released smartnoise code in crosscheck tests: raudit's own port, run
out of process through the exec protocol, writing the events the real entry script
(raudit/upstream/entries/smartnoise_pategan.py) writes.

Unlike a real entry it imports raudit (it is only a test double, in the test venv).
It trains with its own seed (derived from the request's), so its models are independent
draws, as the released code's would be. PORT_ALTER makes it wrong on purpose:
``stop`` trains one iteration more than the rule allows (a different stopping rule),
``shift`` puts the first column at its training maximum (shifted output, in range).
The model is refitted at sample time from the same seed (the port is reproducible).
"""

import json
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from raudit.accountants.pate import eps_from_moments
from raudit.events import AccountantStep, EventLog, Votes
from raudit.generators.pategan.ports.smartnoise.port import SmartNoisePateGan

folder = Path(sys.argv[-1])
req = json.loads((folder / "request.json").read_text())
alter = set(os.environ.get("PORT_ALTER", "").split(","))
if req["action"] == "fit":
    (folder / "fit.json").write_text(json.dumps(req))
fit = json.loads((folder / "fit.json").read_text())
train = pd.read_parquet(folder / "train.parquet")
options = {k: v for k, v in fit["options"].items() if k in ("teachers", "batch")}
log = EventLog()
seed = (int(fit["seed"]) * 7919 + 1) % 2**63
model = SmartNoisePateGan(**options).fit(train, epsilon=fit["epsilon"], delta=fit["delta"],
                                         seed=seed, observer=log)
if "stop" in alter:  # one more iteration than the port's rule: refit with that cap
    cap = model.summary_["iterations"] + 1
    log = EventLog()
    model = SmartNoisePateGan(**options, max_iter=cap).fit(
        train, epsilon=fit["epsilon"] + 10.0, delta=fit["delta"], seed=seed, observer=log)
if req["action"] == "fit":
    steps = log.of(AccountantStep)
    orders = steps[0].moments.shape[1]
    checks = [(0, float(eps_from_moments(np.zeros(orders), fit["delta"])), [0.0] * orders)]
    checks += [(s.iteration + 1, float(s.eps_hat[0]), s.moments[0].tolist()) for s in steps]
    with open(folder / "events.jsonl", "w") as out:
        for t, eps, moments in checks:
            out.write(json.dumps({"kind": "accountant", "iteration": t, "eps_hat": eps,
                                  "moments": moments}) + "\n")
        for v in log.of(Votes):
            out.write(json.dumps({"kind": "votes", "iteration": v.iteration,
                                  "n1": v.n1[0].tolist()}) + "\n")
    (folder / "summary.json").write_text(json.dumps({
        "iterations": len(steps), "eps_hat": checks[-1][1], "fit_seconds": 0.0,
        "patched": {"num_teachers": {"upstream": len(train) // 1000, "used": options.get("teachers")}}}))
else:
    synth = model.sample(int(req["n"]), seed=int(req["seed"]))
    if "shift" in alter:
        first = train.columns[0]
        synth[first] = train[first].max()
    synth.to_parquet(folder / "synthetic.parquet")
