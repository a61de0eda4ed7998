"""Utility under a data-free control: every PATE vote replaced by a fair coin.

`raudit utility` measures how well classifiers trained on synthetic data do on real
data. For a PATE generator the only path from the records to the generator is the
teachers' votes (plus the bounds and metadata the encoder reads). This script runs the
same `raudit utility` command with the vote aggregation replaced by fair coin flips, so
the student learns from labels that carry nothing: what the utility numbers reach
without any information from the teachers. Compare its summary line with the real
run's (same seed, same options); a generator whose utility does not move under the
control learned nothing from its votes at that eps.

    RAUDIT_DATA_DIR=../shared/data python benchmarks/utility_null.py --impl borealis \\
        --dataset cervical --epsilon 1 --fits 5 --samples 5 --setting B --delta 1e-5 \\
        --out runs/null-borealis

Every argument is passed to `raudit utility`; the run is in-process (`--backend local`
is added, and `--backend ray` is refused: the replacement lives in this process only).
The coins come from each model's own counter-based stream, so the control is as
reproducible as the real run. It covers the generators that label through
:mod:`raudit.generators.pategan.aggregation` (`paper`, `borealis`, `smartnoise`,
`fixed`); others are refused, since the control would silently not apply (`original`
and `turing` train their critic on real rows with noisy labels, not on teacher votes).
"""

from __future__ import annotations

import sys

import torch

from raudit.generators.pategan import aggregation

COVERED = {"paper", "borealis", "smartnoise", "fixed"}


def coin_two(n1, k, rng, scale):
    """Argmax rules (two noises): a fair label, no noise recorded."""
    u = rng.uniform(n1.shape[1], 2)
    return u[..., 0] < 0.5, torch.zeros(u.shape, dtype=torch.float64)


def coin_one(n1, k, rng, scale):
    """Threshold rule (one noise): a fair label, no noise recorded."""
    u = rng.uniform(n1.shape[1])
    return u < 0.5, torch.zeros(u.shape, dtype=torch.float64)


def install() -> None:
    aggregation.AGGREGATIONS["argmax"] = coin_two
    aggregation.AGGREGATIONS["threshold"] = coin_one
    aggregation.GAUSSIAN_AGGREGATIONS["argmax"] = coin_two


def _arg(argv: list[str], *names: str) -> str | None:
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a.split("=", 1)[1]
    return None


def main(argv: list[str]) -> int:
    impl = _arg(argv, "--impl", "-i") or "paper"
    if impl not in COVERED:
        print(f"utility_null: {impl!r} does not label through the PATE aggregation; "
              f"covered: {', '.join(sorted(COVERED))}", file=sys.stderr)
        return 2
    backend = _arg(argv, "--backend")
    if backend not in (None, "local"):
        print("utility_null: the coin flips replace the aggregation in this process only; "
              "drop --backend or use --backend local", file=sys.stderr)
        return 2
    install()
    from raudit.cli.app import main as cli

    cli(["utility", *argv, *(() if backend else ("--backend", "local"))])
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
