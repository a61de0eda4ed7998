"""CPU cost of the white-box features: one 50-model chunk as a black-box and as a white-box
audit (the same trials, run twice each, side by side; the minimum of each is compared).

    python lab/probes/white_box_cost.py
"""

from __future__ import annotations

import time

from raudit.audit import chunk
from raudit.audit.game import trials
from raudit.audit.runner import AuditRequest, prepare

CASES = [("paper", {"max_iter": 200}, None, "querybased"), ("dpgan", {}, None, "querybased"),
         ("paper", {"max_iter": 20}, "breast-cancer", "groundhog")]


def main() -> None:
    for impl, opts, ds, attack in CASES:
        cpu: dict[str, list[float]] = {}
        for level in ("black-box", "white-box") * 2:
            game, _, _ = prepare(AuditRequest(impl=impl, attack=attack, dataset=ds,
                                              target="0" if ds else None, shadow_models=50,
                                              options=opts, white_box=level == "white-box"))
            spec = {"audit_id": "x", "game": game.spec(), "world": "in",
                    "trials": trials(game, world="in", count=50)}
            c0 = time.process_time()
            chunk.run_chunk(spec)
            cpu.setdefault(level, []).append(time.process_time() - c0)
        bb, wb = min(cpu["black-box"]), min(cpu["white-box"])
        print(f"{impl} {opts} on {ds or 'worst-case'}: black-box {bb:.2f} s, white-box "
              f"{wb:.2f} s CPU per 50-model chunk (x{wb / bb:.2f})")


if __name__ == "__main__":
    main()
