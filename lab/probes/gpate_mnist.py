"""G-PATE on MNIST, reduced: train, sample, and the paper's CNN evaluation, beside a control.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python lab/probes/gpate_mnist.py \
        --teachers 100 --steps 100 --batch 64 --z-dim 50 --samples 10000 --epsilon 1e6

On a GPU, the authors' full settings (``--device cuda``: training and the CNN there):

    python lab/probes/gpate_mnist.py --dataset mnist10 --teachers 3733 --batch 64 \
        --samples 100000 --device cuda -o teacher_chunk=512 --z-dim 50 --epsilon 1 \
        -o sigma1=3000 -o sigma2=1000 --progress 25

``config=image`` on raudit's MNIST training split (784 pixels and the binary label
``is_zero``; the 70,000 images pooled and split 80/20), one torch thread; ``--dataset mnist10``:
the digit as the label (``conditional=true, classes=10``; the CNN scores 10-class accuracy).
``--seeds N`` runs N seeds per arm and prints mean +- SE (and, with both arms in one process,
the one-sided paired t-test of the utility benchmark, :func:`raudit.utility.learning.paired_one_sided`;
arms run in separate processes are tested afterwards with ``--summarize LOG ...``); ``class_cosine`` (and, binary, ``ink_gap``) say whether the
synthetic classes lean the way the real ones do. Two arms with the
same seed: the real run and its data-free control (``control="coin"``: every answered
coordinate gets a uniform random bin, so the generator's updates carry no information from
the data; what is answered and charged stays the real run's). Each arm's generator writes
``--samples`` labelled images; :func:`raudit.utility.cnn.evaluate` trains a CNN on them and
scores it on the real test split under each ``--protocol`` (:data:`raudit.utility.cnn.PROTOCOLS`):
``strict`` (raudit's: fixed epochs, the final model, 10 % of the synthetic rows held out) and
``paper-optimistic`` (the authors': SGD, 600 epochs, the best TEST accuracy over epochs, so
optimistic; ``--paper-epochs`` shortens it, and the line says how many ran). Printed per arm
and protocol: steps taken, eps_hat, the share of positive synthetic labels, the protocol and
whether it is optimistic, accuracy and balanced accuracy, CPU seconds; the summaries and the
paired test are per protocol, the coin-flip control beside the real run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from raudit import data, generators
from raudit.utility.cnn import PROTOCOLS, evaluate
from raudit.utility.learning import paired_one_sided


def class_cosine(syn, real, label: str) -> float:
    """Mean over classes of cos(synthetic class mean - synthetic mean, real class mean - real
    mean), pixels only: > 0 where the generator's images of a class lean the way that class's
    real images do, ~0 where its label-image link is arbitrary, < 0 where it is reversed."""
    sx, sy = syn.drop(columns=label).to_numpy(np.float32), syn[label].to_numpy()
    rx, ry = real.drop(columns=label).to_numpy(np.float32), real[label].to_numpy()
    out = []
    for c in np.unique(ry):
        if not (sy == c).any():
            continue
        s = sx[sy == c].mean(0) - sx.mean(0)
        r = rx[ry == c].mean(0) - rx.mean(0)
        out.append(float(s @ r / (np.linalg.norm(s) * np.linalg.norm(r) + 1e-12)))
    return float(np.mean(out))


def run_arm(ds, a, control: str | None, seed: int) -> list[dict]:
    """One fit and its synthetic set, scored under each of ``a.protocol``: a line each."""
    opts = dict(config="image", teachers=a.teachers, max_iter=a.steps, batch=a.batch,
                device=a.device)
    if ds.classes > 2:  # mnist10: the digit, one-hot to generator and teachers
        opts.update(conditional=True, classes=ds.classes)
    if a.z_dim:
        opts["z_dim"] = a.z_dim
    if a.label_prior is not None:  # a conditional generator: the label from a public prior
        opts.update(conditional=True, label_prior=a.label_prior)
    if a.label_channel:  # the small teacher's option (the upstream one reads the label everywhere)
        opts.update(label_channel=True, teacher_net="small")
    for kv in a.option:  # -o KEY=VALUE, values as JSON where they parse
        key, _, value = kv.partition("=")
        try:
            opts[key] = json.loads(value)
        except json.JSONDecodeError:
            opts[key] = value
    t0, w0 = time.process_time(), time.perf_counter()

    def tick(i: int) -> None:  # a long run says where it is
        if a.progress and i % a.progress == 0:
            print(f"  step {i}: {time.perf_counter() - w0:.1f} s wall", flush=True)

    gen = generators.get("gpate")(**opts)
    fitted = gen.fit_many([ds.train], epsilon=a.epsilon, seeds=[seed], progress=tick,
                          train_options={"control": control} if control else None)[0]
    train_s, train_wall = time.process_time() - t0, time.perf_counter() - w0
    syn = fitted.sample(a.samples, seed=seed + 1)
    label = ds.train.columns[-1]
    scores = [evaluate(syn.drop(columns=label).to_numpy(), syn[label].to_numpy(),
                       ds.test.drop(columns=label).to_numpy(), ds.test[label].to_numpy(),
                       protocol=name, classes=ds.classes, seed=seed, device=a.device,
                       epochs=a.epochs if name == "strict" else a.paper_epochs)
              for name in a.protocol]
    s = fitted.summary()
    share = (float(syn[label].mean()) if ds.classes == 2 else  # the largest class's share
             float(syn[label].value_counts(normalize=True).max()))
    cos = class_cosine(syn, ds.train, label)
    extra = {}
    if ds.classes == 2:  # mean pixel of the positive minus the negative class (real: zeros +)
        px = syn.drop(columns=label).to_numpy(np.float32).mean(1)
        y = syn[label].to_numpy()
        extra["ink_gap"] = float(px[y == 1].mean() - px[y == 0].mean()) if 0 < y.mean() < 1 else 0.0
    fit = {"arm": control or "real", "seed": seed, "class_cosine": cos, **extra,
           "steps": s["iterations"], "eps_hat": s["eps_hat"], "label_share": share}
    times = {"train_cpu_s": train_s, "train_wall_s": train_wall,
             "total_cpu_s": time.process_time() - t0, "total_wall_s": time.perf_counter() - w0}
    return [{**fit, "protocol": r.protocol, "optimistic": str(r.optimistic).lower(),
             "epochs": r.epochs, "epoch": r.epoch, "accuracy": r.accuracy,
             "balanced_accuracy": r.balanced_accuracy, **times} for r in scores]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teachers", type=int, default=100)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--z-dim", type=int, default=50)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=2, help="the strict protocol's epochs")
    ap.add_argument("--protocol", nargs="+", choices=list(PROTOCOLS), default=["strict"],
                    help="CNN evaluations to run on each synthetic set (paper-optimistic picks "
                         "the best TEST epoch: optimistic, and labelled so)")
    ap.add_argument("--paper-epochs", type=int, default=None,
                    help="paper-optimistic's epochs (default the paper's 600)")
    ap.add_argument("--epsilon", type=float, default=1e6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--seeds", type=int, default=1,
                    help="seeds seed .. seed+N-1 per arm; with both arms, the paired one-sided test")
    ap.add_argument("--dataset", choices=["mnist", "mnist10"], default="mnist",
                    help="mnist10: the digit as the label (10 classes, conditional=true, classes=10)")
    ap.add_argument("-o", "--option", action="append", default=[],
                    help="a gpate option KEY=VALUE (repeatable), e.g. -o sigma1=600")
    ap.add_argument("--label-channel", action="store_true",
                    help="teachers see the label as a second image channel (option label_channel)")
    ap.add_argument("--label-prior", type=float, default=None,
                    help="conditional generator with this public label prior (default: the "
                         "generator's own label head)")
    ap.add_argument("--arms", nargs="+", choices=["real", "coin"], default=["real", "coin"],
                    help="which arms to run (each can run in its own process)")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the CNN trained on real images (the ceiling)")
    ap.add_argument("--device", default="cpu", help="cpu or cuda: G-PATE's training and the CNN")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (CPU work)")
    ap.add_argument("--progress", type=int, default=0, metavar="N",
                    help="print the wall time every N training steps")
    ap.add_argument("--summarize", nargs="+", metavar="LOG",
                    help="read the arm lines of earlier runs' output (arms in separate "
                         "processes) and print mean +- SE and the paired test; trains nothing")
    ap.add_argument("--measure", choices=["accuracy", "balanced_accuracy", "class_cosine"],
                    default="accuracy", help="with --summarize: the column to test")
    a = ap.parse_args(argv)
    if a.summarize:
        return summarize(a.summarize, a.measure)
    import torch

    from raudit.errors import ConfigError
    from raudit.generators.nn.device import pick_device

    try:
        a.device = str(pick_device(a.device))  # before any work; auto -> cpu or cuda
    except ConfigError as exc:
        print(f"gpate_mnist: {exc}", file=sys.stderr)
        return 2
    torch.set_num_threads(a.threads)
    ds = data.load(a.dataset)
    label = ds.test.columns[-1]
    base = float(ds.test[label].value_counts(normalize=True).max())
    print(f"{a.dataset} ({label}, {ds.classes} classes): {len(ds.train):,} training rows, "
          f"{len(ds.test):,} test rows; a constant classifier scores accuracy {base:.4f}, "
          f"balanced {1 / ds.classes:.2f}", flush=True)
    if not a.no_reference:
        real = ds.train.sample(min(a.samples, len(ds.train)), random_state=a.seed)  # the ceiling
        for name in a.protocol:
            ref = evaluate(real.drop(columns=label).to_numpy(), real[label].to_numpy(),
                           ds.test.drop(columns=label).to_numpy(), ds.test[label].to_numpy(),
                           protocol=name, classes=ds.classes, seed=a.seed, device=a.device,
                           epochs=a.epochs if name == "strict" else a.paper_epochs)
            print(f"arm=real-images protocol={ref.protocol} optimistic={str(ref.optimistic).lower()} "
                  f"accuracy={ref.accuracy:.4f} balanced_accuracy={ref.balanced_accuracy:.4f}",
                  flush=True)
    if ds.classes == 2:
        px = ds.train.drop(columns=label).to_numpy(np.float32).mean(1)
        y = ds.train[label].to_numpy()
        print(f"real ink_gap (mean pixel, class 1 - class 0) {px[y == 1].mean() - px[y == 0].mean():.2f}")
    measure = "accuracy" if ds.classes > 2 else "balanced_accuracy"
    want = PROTOCOLS["paper-optimistic"].samples
    if "paper-optimistic" in a.protocol and a.samples != want:
        print(f"note: paper-optimistic trains on --samples {a.samples:,} synthetic images "
              f"(the paper: {want:,})", flush=True)
    scores: dict[tuple[str, str], dict[int, float]] = {}
    for seed in range(a.seed, a.seed + a.seeds):
        for control in [None if arm == "real" else arm for arm in a.arms]:
            for r in run_arm(ds, a, control, seed):
                scores.setdefault((r["protocol"], r["arm"]), {})[seed] = r[measure]
                print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}"
                               for k, v in r.items()), flush=True)
    print_summaries(scores, measure)
    return 0


def print_test(real: dict[int, float], coin: dict[int, float], measure: str,
               protocol: str) -> None:
    """The utility benchmark's statistic (:func:`raudit.utility.learning.paired_one_sided`):
    real minus coin paired by seed, one-sided t."""
    t = paired_one_sided(real, coin)
    print(f"summary protocol={protocol} optimistic={_optimistic(protocol)} real-coin {measure} "
          f"diff={t.diff:.4f} se={t.se:.4f} n={t.n} one-sided paired t p={t.p:.4g}")


def print_summaries(scores: dict[tuple[str, str], dict[int, float]], measure: str) -> None:
    """Mean +- SE per protocol and arm, and per protocol the real run against its coin-flip
    control (paired by seed: the same init, partition and z draws)."""
    for (protocol, arm), v in scores.items():
        x = np.array(list(v.values()))
        se = float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan")
        print(f"summary protocol={protocol} optimistic={_optimistic(protocol)} arm={arm} "
              f"{measure} mean={x.mean():.4f} se={se:.4f} n={x.size}")
    for protocol in dict.fromkeys(p for p, _ in scores):
        real, coin = scores.get((protocol, "real"), {}), scores.get((protocol, "coin"), {})
        if len(set(real) & set(coin)) > 1:
            print_test(real, coin, measure, protocol)


def _optimistic(protocol: str) -> str:
    known = PROTOCOLS.get(protocol)
    return "unknown" if known is None else str(known.optimistic).lower()


def summarize(paths: list[str], measure: str) -> int:
    """Arms run in separate processes: read their printed lines back and test them (lines
    written before the protocols carry none: cnn_accuracy's 2 Adam epochs, final model)."""
    scores: dict[tuple[str, str], dict[int, float]] = {}
    for path in paths:
        for line in open(path):
            f = dict(kv.split("=", 1) for kv in line.split() if "=" in kv)
            if line.startswith("arm=") and f["arm"] in ("real", "coin") and "seed" in f:
                key = (f.get("protocol", "cnn_accuracy"), f["arm"])
                scores.setdefault(key, {})[int(f["seed"])] = float(f[measure])
    print_summaries(scores, measure)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
