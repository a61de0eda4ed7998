"""The benchmark suite's one entry point (run from the repository root).

    python -m benchmarks readme [--device cuda] [--smoke] [--only KEY ...] [--out DIR]
    python -m benchmarks table [--check]
    python -m benchmarks list [--device cuda]

``readme`` measures the README's performance figures on this host and writes
``benchmarks/results/<host kind>-<commit>.json``; ``table`` writes the tables of README.md and
docs/performance.md from the newest file of each host kind (``--check``: exit 1 if either is
out of date); ``list`` prints each figure's key and command. The scripts beside this file
are the benchmarks themselves; each runs on its own too (``python benchmarks/SCRIPT.py -h``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks import readme, table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="what", required=True)
    r = sub.add_parser("readme", help="measure the README's figures on this host")
    r.add_argument("--device", default="cpu", help="cpu, or cuda for a GPU host's figures")
    r.add_argument("--smoke", action="store_true", help="the smallest sizes (checks it runs)")
    r.add_argument("--only", nargs="+", metavar="KEY", help="these figures only (see list)")
    r.add_argument("--out", type=Path, default=readme.RESULTS, help="folder of the results file")
    r.add_argument("--timeout", type=float, default=3600, help="seconds per figure")
    t = sub.add_parser("table", help="write the tables from the newest results")
    t.add_argument("--check", action="store_true", help="only check; exit 1 if out of date")
    t.add_argument("--results", type=Path, default=table.RESULTS)
    ls = sub.add_parser("list", help="the figures and their commands")
    ls.add_argument("--device", default="cpu")
    a = ap.parse_args(argv)
    if a.what == "list":
        for f in readme.figures(a.device):
            print(f"{f.key}: {f.command()}")
        return 0
    if a.what == "table":
        pages = table.stale(a.results) if a.check else table.write(a.results)
        verb = "out of date" if a.check else "written"
        print(f"{verb}: {', '.join(pages)}" if pages else "tables are current")
        return 1 if a.check and pages else 0
    known = {f.key for f in readme.figures(a.device)}
    if a.only and (bad := sorted(set(a.only) - known)):
        print(f"benchmarks: unknown figure(s) {', '.join(bad)}; known: {', '.join(sorted(known))}",
              file=sys.stderr)
        return 2
    print(readme.run(a.device, a.smoke, a.only, a.out, a.timeout))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
