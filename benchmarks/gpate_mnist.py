"""G-PATE on MNIST, reduced: train, sample, and the paper's CNN evaluation, beside a control.

    RAUDIT_DATA_DIR=../shared/data OMP_NUM_THREADS=1 python benchmarks/gpate_mnist.py \
        --teachers 100 --steps 100 --batch 64 --z-dim 50 --samples 10000 --epsilon 1e6

``config=image`` on raudit's MNIST training split (784 pixels and the binary label
``is_zero``; the 70,000 images pooled and split 80/20), one torch thread. Two arms with the
same seed: the real run and its data-free control (``control="coin"``: every answered
coordinate gets a uniform random bin, so the generator's updates carry no information from
the data; what is answered and charged stays the real run's). Each arm's generator writes
``--samples`` labelled images; :func:`raudit.utility.cnn.cnn_accuracy` trains the CNN on
them and scores it on the real test split. Printed per arm: steps taken, eps_hat, the
share of positive synthetic labels, accuracy and balanced accuracy, CPU seconds.
"""

from __future__ import annotations

import argparse
import time

from raudit import data, generators
from raudit.utility.cnn import cnn_accuracy


def run_arm(ds, a, control: str | None) -> dict:
    opts = dict(config="image", teachers=a.teachers, max_iter=a.steps, batch=a.batch)
    if a.z_dim:
        opts["z_dim"] = a.z_dim
    if a.label_prior is not None:  # a conditional generator: the label from a public prior
        opts.update(conditional=True, label_prior=a.label_prior)
    if a.label_channel:
        opts["label_channel"] = True
    t0 = time.process_time()
    gen = generators.get("gpate")(**opts)
    fitted = gen.fit_many([ds.train], epsilon=a.epsilon, seeds=[a.seed],
                          train_options={"control": control} if control else None)[0]
    train_s = time.process_time() - t0
    syn = fitted.sample(a.samples, seed=a.seed + 1)
    label = ds.train.columns[-1]
    score = cnn_accuracy(syn.drop(columns=label).to_numpy(), syn[label].to_numpy(),
                         ds.test.drop(columns=label).to_numpy(), ds.test[label].to_numpy(),
                         epochs=a.epochs, seed=a.seed)
    s = fitted.summary()
    return {"arm": control or "real", "steps": s["iterations"], "eps_hat": s["eps_hat"],
            "positive_share": float(syn[label].mean()), "accuracy": score.accuracy,
            "balanced_accuracy": score.balanced_accuracy, "train_cpu_s": train_s,
            "total_cpu_s": time.process_time() - t0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--teachers", type=int, default=100)
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--z-dim", type=int, default=50)
    ap.add_argument("--samples", type=int, default=10_000)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--epsilon", type=float, default=1e6)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--label-channel", action="store_true",
                    help="teachers see the label as a second image channel (option label_channel)")
    ap.add_argument("--label-prior", type=float, default=None,
                    help="conditional generator with this public label prior (default: the "
                         "generator's own label head)")
    ap.add_argument("--arms", nargs="+", choices=["real", "coin"], default=["real", "coin"],
                    help="which arms to run (each can run in its own process)")
    ap.add_argument("--no-reference", action="store_true",
                    help="skip the CNN trained on real images (the ceiling)")
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    ds = data.load("mnist")
    label = ds.test.columns[-1]
    base = float(1 - ds.test[label].mean())
    print(f"MNIST (is_zero): {len(ds.train):,} training rows, {len(ds.test):,} test rows; "
          f"a constant 'not zero' scores accuracy {base:.4f}, balanced 0.5", flush=True)
    if not a.no_reference:
        real = ds.train.sample(a.samples, random_state=a.seed)  # the CNN's ceiling at this size
        ref = cnn_accuracy(real.drop(columns=label).to_numpy(), real[label].to_numpy(),
                           ds.test.drop(columns=label).to_numpy(), ds.test[label].to_numpy(),
                           epochs=a.epochs, seed=a.seed)
        print(f"arm=real-images accuracy={ref.accuracy:.4f} "
              f"balanced_accuracy={ref.balanced_accuracy:.4f}", flush=True)
    for control in [None if arm == "real" else arm for arm in a.arms]:
        r = run_arm(ds, a, control)
        print(" ".join(f"{k}={v:.4f}" if isinstance(v, float) else f"{k}={v}" for k, v in r.items()),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
