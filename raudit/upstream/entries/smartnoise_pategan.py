"""raudit exec entry for OpenDP smartnoise-synth 1.0.8 ``PATEGAN``, run as released.

This file runs INSIDE the upstream environment (``raudit upstream setup smartnoise``):
stdlib and that environment's packages only, never raudit. It speaks raudit's exec
protocol: ``python smartnoise_pategan.py FOLDER`` reads ``FOLDER/request.json``;
a fit reads ``train.parquet`` and writes ``summary.json``, ``events.jsonl`` and its own
state (``state.json``, ``generator.npz``); a sample writes ``synthetic.parquet``.

The package's files are never edited. Three things are changed from outside, each
recorded in the summary's ``patched`` and in a ``patch`` event:

* ``num_teachers``: upstream sets ``self.num_teachers = int(N / 1000)`` inside
  ``train()`` (0 teachers, and a crash, below 1,000 rows). A property on a subclass
  takes that assignment and keeps the ``teachers`` option instead (the study's k).
* observation: ``min`` in the ``pategan`` module's globals (which shadows the builtin
  for that module only) records every eps check at the top of the loop, and
  ``moments_acc`` is wrapped to record each batch of votes and the moments it adds.
  Both return exactly what upstream computes.
* ``max_iter`` (only when asked): the check after max_iter iterations ends training
  by raising out of ``train()``; upstream itself has no cap.

Preprocessing is the study's harness: every feature ``MinMaxTransformer(lower, upper,
negative=True)`` with the training table's min/max as public bounds, the label
``ChainTransformer([LabelTransformer(), OneHotEncoder()])``. Upstream returns floats;
integer columns are rounded (raudit's schema, as the port's ``integers="round"``).
Randomness: upstream draws from torch's and numpy's global generators, so this process
seeds both from the request's seed (a separate process per call, so nothing leaks).
"""

import builtins
import json
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from snsynth.pytorch.nn import pategan as sn_module
from snsynth.pytorch.nn._generator import Generator
from snsynth.transform import ChainTransformer, LabelTransformer, MinMaxTransformer, OneHotEncoder
from snsynth.transform.table import TableTransformer

PACKAGE = "smartnoise-synth==1.0.8"
LAMBDA = 1e-3  # hard-coded in upstream's train() (noise_multiplier)
OPTIONS = {"teachers": "num_teachers (patched)", "batch": "batch_size", "latent_dim": "latent_dim",
           "binary": "binary", "teacher_steps": "teacher_iters", "student_steps": "student_iters",
           "max_iter": "(patched cap)", "lam": "fixed at 1e-3 upstream",
           # raudit's commands pass these to every generator: the released code has no
           # presets, and picks its device itself (cuda:0 when available)
           "preset": "only 'default'", "device": "ignored"}


class Stop(Exception):
    """Raised from the recording ``min`` to end training at ``max_iter``."""


def fail(message):
    print(f"smartnoise entry: {message}", file=sys.stderr)
    sys.exit(2)


def seed_all(*entropy):
    state = np.random.SeedSequence([int(e) for e in entropy]).generate_state(2)
    torch.manual_seed(int(state[0]))
    np.random.seed(int(state[1]))


def transformer(train):
    """The study's harness: MinMax features on data bounds, one-hot label."""
    parts = [MinMaxTransformer(lower=float(train[c].min()), upper=float(train[c].max()), negative=True)
             for c in train.columns[:-1]]
    parts.append(ChainTransformer([LabelTransformer(), OneHotEncoder()]))
    tt = TableTransformer(parts)
    tt.fit(train)
    return tt


def check_options(options):
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        fail(f"option(s) {', '.join(unknown)} not available in the released PATEGAN "
             f"(it takes {', '.join(sorted(OPTIONS))})")
    if "lam" in options and float(options["lam"]) != LAMBDA:
        fail(f"lam={options['lam']}: the released code hard-codes lambda = {LAMBDA}")
    if options.get("preset", "default") != "default":
        fail(f"preset={options['preset']}: the released code has no presets")


class Recorder:
    """Keeps the eps checks, the votes and the moments upstream computes."""

    def __init__(self, max_iter):
        self.max_iter, self.checks, self.votes = max_iter, [], []
        self.alphas = torch.tensor([0.0 for _ in range(100)])  # as upstream: float32 zeros
        self.moments = []

    def min(self, *args, **kwargs):
        value = builtins.min(*args, **kwargs)
        self.checks.append(float(value))
        self.moments.append([float(a) for a in self.alphas])
        if self.max_iter is not None and len(self.checks) > self.max_iter:
            raise Stop
        return value

    def moments_acc(self, num_teachers, votes, lap_scale, l_list, device="cpu"):
        increment = ORIGINAL_MOMENTS_ACC(num_teachers, votes, lap_scale, l_list, device=device)
        self.alphas = self.alphas + increment
        self.votes.append((len(self.checks) - 1, [int(v) for v in votes.reshape(-1).tolist()]))
        return increment


ORIGINAL_MOMENTS_ACC = sn_module.moments_acc


def fit(folder, req):
    options = dict(req.get("options") or {})
    check_options(options)
    train = pd.read_parquet(folder / "train.parquet")
    teachers = options.get("teachers")
    rec = Recorder(None if options.get("max_iter") is None else int(options["max_iter"]))
    seen = {}

    class Patched(sn_module.PATEGAN):
        @property
        def num_teachers(self):
            return seen["used"]

        @num_teachers.setter
        def num_teachers(self, value):  # upstream: self.num_teachers = int(len(data) / 1000)
            seen["upstream"] = int(value)
            seen["used"] = int(value) if teachers is None else int(teachers)

    model = Patched(epsilon=float(req["epsilon"]), delta=req.get("delta"),
                    binary=bool(options.get("binary", False)),
                    latent_dim=int(options.get("latent_dim", 64)),
                    batch_size=int(options.get("batch", 64)),
                    teacher_iters=int(options.get("teacher_steps", 5)),
                    student_iters=int(options.get("student_steps", 5)))
    sn_module.min = rec.min  # module globals shadow builtins for this module only
    sn_module.moments_acc = rec.moments_acc
    seed_all(req["seed"])
    started, started_cpu, stopped_by = time.perf_counter(), time.process_time(), "epsilon"
    try:
        model.train(train, transformer=transformer(train))
    except Stop:
        stopped_by = "max_iter"
    finally:
        del sn_module.min
        sn_module.moments_acc = ORIGINAL_MOMENTS_ACC
    seconds, cpu_seconds = time.perf_counter() - started, time.process_time() - started_cpu
    # every check but a breaking one is followed by one iteration; max_iter stops at a check
    iterations = len(rec.checks) - 1 if rec.checks else 0
    if stopped_by == "epsilon" and rec.checks and rec.checks[-1] <= model.epsilon:
        iterations += 1  # an exact tie ends at the while condition, after one more iteration
    weights = {k: v.detach().cpu().numpy() for k, v in model.generator.state_dict().items()}
    np.savez(folder / "generator.npz", **weights)
    (folder / "state.json").write_text(json.dumps({
        "seed": int(req["seed"]), "latent_dim": model.latent_dim, "binary": model.binary,
        "batch": model.batch_size}))
    patched = {"num_teachers": {"upstream": seen.get("upstream"), "used": seen.get("used")}}
    if rec.max_iter is not None:
        patched["max_iter"] = rec.max_iter
    with open(folder / "events.jsonl", "w", encoding="utf-8") as out:
        out.write(json.dumps({"kind": "patch", "patched": patched}) + "\n")
        for t, (eps, moments) in enumerate(zip(rec.checks, rec.moments)):
            out.write(json.dumps({"kind": "accountant", "iteration": t, "eps_hat": eps,
                                  "moments": moments}) + "\n")
        for t, n1 in rec.votes:
            out.write(json.dumps({"kind": "votes", "iteration": t, "n1": n1}) + "\n")
    summary = {"iterations": iterations, "eps_hat": rec.checks[-1] if rec.checks else float("nan"),
               "stopped_by": stopped_by, "teachers": seen.get("used"),
               "teachers_upstream": seen.get("upstream"), "lam": LAMBDA, "orders": 100,
               "delta": float(model.delta), "package": PACKAGE, "patched": patched,
               "fit_seconds": seconds, "fit_cpu_seconds": cpu_seconds, "torch": torch.__version__}
    (folder / "summary.json").write_text(json.dumps(summary))


def sample(folder, req):
    state = json.loads((folder / "state.json").read_text())
    train = pd.read_parquet(folder / "train.parquet")
    weights = np.load(folder / "generator.npz")
    tt = transformer(train)  # deterministic: the same data bounds and labels as at fit
    data_dim = tt.output_width
    model = sn_module.PATEGAN(epsilon=1.0, latent_dim=state["latent_dim"], binary=state["binary"],
                              batch_size=state["batch"])
    model.generator = Generator(state["latent_dim"], data_dim, binary=state["binary"]).double()
    model.generator.load_state_dict({k: torch.from_numpy(weights[k]) for k in weights.files})
    model._transformer = tt
    seed_all(state["seed"], req["seed"])
    with torch.no_grad():
        rows = model.sample(int(req["n"]))
    # the transformer answers in the type it was fitted on (a DataFrame here)
    out = rows.copy() if isinstance(rows, pd.DataFrame) else pd.DataFrame(list(rows))
    out.columns = train.columns
    for c in train.columns:
        if pd.api.types.is_integer_dtype(train[c].dtype):
            out[c] = np.round(out[c].astype(float)).astype(train[c].dtype)
    out.to_parquet(folder / "synthetic.parquet")


def main():
    folder = Path(sys.argv[-1])
    req = json.loads((folder / "request.json").read_text())
    torch.set_num_threads(1)
    if req["action"] == "fit":
        fit(folder, req)
    elif req["action"] == "sample":
        sample(folder, req)
    else:
        fail(f"unknown action {req['action']!r}")


if __name__ == "__main__":
    main()
