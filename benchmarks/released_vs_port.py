"""Released smartnoise-synth against raudit's port: CPU seconds of training per model.

Both sides train on the cervical training split at the same settings (eps 1, delta 1e-5,
k = 5, batch 64; the released PATEGAN's lambda 1e-3 and 100 orders), so both stop after the
same iteration (33). The released side runs one process per fit (raudit's exec adapter, as
`raudit crosscheck` does); its entry script records the CPU seconds of upstream's ``train()``
(``fit_cpu_seconds``) next to the wall time, and the process's whole CPU time is read from
this process's children. The port trains M models in one call; its CPU seconds include the
set-up (encoders, partitions). CPU seconds, not wall: on a shared machine waiting for a core
does not count. Prints one JSON line per measurement.

    RAUDIT_DATA_DIR=/work/shared/data RAUDIT_UPSTREAM_DIR=/work/upstream \\
        python benchmarks/released_vs_port.py --released 2 --models 1 32
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

import torch

from raudit import generators
from raudit.data.registry import load

OPTIONS = {"teachers": 5, "batch": 64}
PRIVACY = {"epsilon": 1.0, "delta": 1e-5}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def released_config(upstream_dir: str | None, folder: Path) -> str:
    """The installed environment's exec config, pointed at raudit's own copy of the entry
    script (the installed copy may predate ``fit_cpu_seconds``)."""
    from raudit.crosscheck.runner import resolve_config
    from raudit.upstream.entries import __file__ as entries

    config = json.loads(Path(resolve_config("smartnoise", None, upstream_dir)).read_text())
    config["command"] = [config["command"][0], str(Path(entries).parent / "smartnoise_pategan.py")]
    path = folder / "exec.json"
    path.write_text(json.dumps(config))
    return str(path)


def released(ds, fits: int, config: str) -> None:
    from raudit.generators.exec_adapter import exec_class

    cls = exec_class(config)
    for s in range(fits):
        gen, c0, t0 = cls(**OPTIONS), _children_cpu(), time.perf_counter()
        gen.fit(ds.train, seed=1000 + s, columns=ds.columns, **PRIVACY)
        summary = gen.summary_
        print(json.dumps({"side": "released", "seed": 1000 + s, "iterations": summary.get("iterations"),
                          "train_cpu_s": summary.get("fit_cpu_seconds"),
                          "train_wall_s": summary.get("fit_seconds"),
                          "process_cpu_s": round(_children_cpu() - c0, 3),
                          "process_wall_s": round(time.perf_counter() - t0, 3)}), flush=True)


def port(ds, sizes: list[int]) -> None:
    cls = generators.get("smartnoise")
    for m in sizes:
        gen, c0 = cls(**OPTIONS), time.process_time()
        fitted = gen.fit_many([ds.train] * m, seeds=[1000 + s for s in range(m)], columns=ds.columns,
                              **PRIVACY)
        print(json.dumps({"side": "port", "M": m,
                          "iterations": sorted({f.summary()["iterations"] for f in fitted}),
                          "cpu_s_per_model": round((time.process_time() - c0) / m, 4)}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--released", type=int, default=2, help="released fits (0: port only)")
    ap.add_argument("--models", type=int, nargs="+", default=[1, 32], help="port batch sizes M")
    ap.add_argument("--upstream-dir", default=None, help="root of the upstream environments")
    a = ap.parse_args()
    torch.set_num_threads(1)
    ds = load("cervical")
    port(ds, a.models)
    if a.released:
        with tempfile.TemporaryDirectory() as tmp:
            released(ds, a.released, released_config(a.upstream_dir, Path(tmp)))


if __name__ == "__main__":
    main()
