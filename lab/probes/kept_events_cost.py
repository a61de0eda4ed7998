"""CPU cost of keeping one shadow model's privacy events (the black-box eps_true of the
ports): one 50-model chunk with and without ``events_of``, run twice each side by side.

    python lab/probes/kept_events_cost.py
"""

from __future__ import annotations

import time

from raudit.audit import chunk
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, prepare

CASES = [("smartnoise", {"max_iter": 200}), ("dpgan", {}), ("synthcity", {"max_iter": 50}),
         ("updated", {"max_iter": 50})]


def main() -> None:
    for impl, opts in CASES:
        game, _, _ = prepare(AuditRequest(impl=impl, attack="querybased", shadow_models=50,
                                          options=opts))
        spec = {"audit_id": "x", "game": game.spec(), "world": "in",
                "trials": trials(game, world="in", count=50)}
        cpu: dict[str, list[float]] = {}
        for kept in (False, True) * 2:
            c0 = time.process_time()
            chunk.run_chunk({**spec, "events_of": spec["trials"][0]["trial_id"]} if kept else spec)
            cpu.setdefault("kept" if kept else "plain", []).append(time.process_time() - c0)
        a, b = min(cpu["plain"]), min(cpu["kept"])
        print(f"{impl} {opts} on worst-case: plain {a:.2f} s, events kept {b:.2f} s CPU per "
              f"50-model chunk (x{b / a:.2f})")


if __name__ == "__main__":
    main()
