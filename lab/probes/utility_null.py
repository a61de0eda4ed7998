"""Utility under a data-free control: a caller of ``raudit utility --control coin``.

For a generator that votes or aggregates, the only path from the records to the
generator is the teachers' votes (plus the bounds and metadata the encoder reads).
``raudit utility --control coin`` runs every sweep point twice, the real fits and the
same fits (same seeds) with every released vote replaced by a fair coin, and reports
both with mean +- se, the paired one-sided test over fits and the learning threshold
(:mod:`raudit.utility.learning`). This script keeps the older entry point:

    RAUDIT_DATA_DIR=../shared/data python lab/probes/utility_null.py --impl borealis \\
        --dataset cervical --epsilon 1 --fits 5 --samples 5 --setting B --delta 1e-5 \\
        --out runs/null-borealis

Every argument goes to ``raudit utility`` with ``--control coin`` added; the control
is part of each config, so any backend runs it (Ray included). Generators without a
control (those whose labels do not come from votes: ``original``, ``turing``, ``gan``,
``dpgan``, ...) are refused by the command itself, before any work.
"""

from __future__ import annotations

import sys



def main(argv: list[str]) -> int:
    if any(a == "--control" or a.startswith("--control=") for a in argv):
        print("utility_null: adds --control coin itself; drop --control", file=sys.stderr)
        return 2
    from raudit.cli.app import main as cli

    return cli(["utility", *argv, "--control", "coin"]) or 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
