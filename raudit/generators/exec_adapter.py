"""Out-of-process generators: ``--impl exec:CONFIG`` runs a program in its own environment.

A released package often cannot live in raudit's environment (other torch, opacus or
pandas pins). The adapter talks to it through files, never a shell::

    CONFIG (JSON)  {"command": ["/envs/sn/bin/python", "/path/entry.py"],
                    "timeout_s": 600, "env": {"OMP_NUM_THREADS": "1"}, "name": "smartnoise-1.0.8"}

For each call raudit writes ``request.json`` into the model's work folder and runs
``command + [folder]`` (an argument list, the folder last: nothing is parsed by a shell):

* fit: ``{"action": "fit", "epsilon", "delta", "seed", "columns": [...], "options"}``
  with the training table in ``train.parquet``; the program keeps whatever state it
  needs in the folder and may write ``summary.json`` (``iterations``, ``eps_hat``, ...)
  and ``events.jsonl`` (one JSON object per line, kept as the summary's ``events``);
* sample: ``{"action": "sample", "n", "seed"}``; the program writes ``synthetic.parquet``
  (or ``synthetic.csv``) with the training table's columns.

A missing interpreter, a non-zero exit (with the program's last stderr lines), a
timeout, or output of the wrong shape are one-line errors. The work folder lives as
long as the fitted model (a temporary folder, removed with it).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from raudit.errors import ConfigError, DataError
from raudit.generators.base import Generator

PREFIX = "exec:"
DEFAULT_TIMEOUT_S = 3600.0


def read_config(path: str | Path) -> dict[str, Any]:
    """The adapter config, checked: ``command`` a non-empty list of strings, whose
    program exists; ``timeout_s`` positive; ``env`` a mapping of strings."""
    p = Path(path).expanduser()
    try:
        cfg = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"adapter config {p} not found (--impl exec:CONFIG takes a JSON "
                          "file with a 'command' list)") from None
    except ValueError as exc:
        raise ConfigError(f"adapter config {p} is not valid JSON: {exc}") from None
    cmd = cfg.get("command") if isinstance(cfg, dict) else None
    if not (isinstance(cmd, list) and cmd and all(isinstance(c, str) and c for c in cmd)):
        raise ConfigError(f"adapter config {p}: 'command' must be a non-empty list of strings "
                          "(the program and its arguments; no shell is used)")
    if shutil.which(cmd[0]) is None:
        raise ConfigError(f"adapter config {p}: program {cmd[0]!r} not found; create its "
                          "environment first (or fix the path)")
    timeout = cfg.get("timeout_s", DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise ConfigError(f"adapter config {p}: timeout_s must be a positive number, got {timeout!r}")
    env = cfg.get("env", {})
    if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str)
                                          for k, v in env.items())):
        raise ConfigError(f"adapter config {p}: env must map names to strings")
    return {"command": list(cmd), "timeout_s": float(timeout), "env": dict(env),
            "name": str(cfg.get("name", p.stem)), "path": str(p)}


class ExecGenerator(Generator):
    """Base of the classes :func:`exec_class` makes; ``config_path`` is set per class."""

    name = "exec"
    description = "an out-of-process generator driven through files (--impl exec:CONFIG)"
    config_path: str = ""

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.config = read_config(self.config_path)
        self._dir: tempfile.TemporaryDirectory | None = None

    def _run(self, request: dict[str, Any]) -> None:
        folder = Path(self._dir.name)
        (folder / "request.json").write_text(json.dumps(request), encoding="utf-8")
        cfg = self.config
        try:
            done = subprocess.run([*cfg["command"], str(folder)], cwd=folder, capture_output=True,
                                  text=True, timeout=cfg["timeout_s"],
                                  env={**os.environ, **cfg["env"]}, shell=False)
        except subprocess.TimeoutExpired:
            raise DataError(f"{cfg['name']}: {request['action']} ran past its "
                            f"{cfg['timeout_s']:g} s timeout") from None
        except OSError as exc:
            raise ConfigError(f"{cfg['name']}: cannot start {cfg['command'][0]!r}: {exc}") from None
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:]) or "no error output"
            raise DataError(f"{cfg['name']}: {request['action']} exited with status "
                            f"{done.returncode}: {tail}")

    def _fit(self, data, *, epsilon, delta, seed, columns, observer) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="raudit-exec-")
        folder = Path(self._dir.name)
        self.columns_, self.dtypes_ = list(data.columns), data.dtypes.to_dict()
        data.reset_index(drop=True).rename(columns=str).to_parquet(folder / "train.parquet")
        meta = [{"name": c.name, "bounds": c.bounds, "kind": getattr(c, "kind", None)}
                for c in columns or ()]
        self._run({"action": "fit", "epsilon": epsilon, "delta": delta, "seed": int(seed),
                   "columns": meta, "options": {k: v for k, v in self.options.items()}})
        summary = _read_json(folder / "summary.json") or {}
        events = folder / "events.jsonl"
        if events.exists():
            summary["events"] = [json.loads(line) for line in
                                 events.read_text(encoding="utf-8").splitlines() if line.strip()]
        summary.setdefault("iterations", 0)
        summary.setdefault("eps_hat", float("nan"))
        self.summary_ = summary

    def sample(self, n: int, *, seed: int = 0) -> pd.DataFrame:
        if self._dir is None:
            raise ConfigError("sample() before fit()")
        folder = Path(self._dir.name)
        for name in ("synthetic.parquet", "synthetic.csv"):
            (folder / name).unlink(missing_ok=True)
        self._run({"action": "sample", "n": int(n), "seed": int(seed)})
        out = _read_table(folder, self.config["name"])
        if len(out) != n or sorted(map(str, out.columns)) != sorted(map(str, self.columns_)):
            raise DataError(f"{self.config['name']}: sample({n}) returned {len(out)} rows with "
                            f"columns {list(out.columns)[:5]}...; expected the training columns")
        out = out[[str(c) for c in self.columns_]]
        out.columns = self.columns_
        try:
            return out.astype(self.dtypes_)
        except (TypeError, ValueError) as exc:
            raise DataError(f"{self.config['name']}: a sampled column does not fit the "
                            f"training type ({exc})") from None


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except ValueError as exc:
        raise DataError(f"{path.name} written by the external generator is not JSON: {exc}") from None


def _read_table(folder: Path, name: str) -> pd.DataFrame:
    if (folder / "synthetic.parquet").exists():
        return pd.read_parquet(folder / "synthetic.parquet")
    if (folder / "synthetic.csv").exists():
        return pd.read_csv(folder / "synthetic.csv")
    raise DataError(f"{name}: sample wrote no synthetic.parquet or synthetic.csv")


@functools.lru_cache(maxsize=64)
def exec_class(config: str) -> type[ExecGenerator]:
    """The generator class of ``exec:CONFIG`` (the config is read, and checked, here)."""
    cfg = read_config(config)
    return type(f"Exec[{cfg['name']}]", (ExecGenerator,),
                {"config_path": cfg["path"], "name": PREFIX + config,
                 "description": f"out of process: {' '.join(cfg['command'])}"})


def folder_name(impl: str) -> str:
    """``impl`` as one path component for default output folders: ``exec:/x/sn/exec.json``
    becomes ``exec-sn`` (the folder `raudit upstream setup` made), ``exec:/x/fake.json``
    ``exec-fake``; other names keep their letters with ':' as '.'."""
    if impl.startswith(PREFIX):
        p = Path(impl[len(PREFIX):])
        return "exec-" + (p.parent.name if p.stem == "exec" and p.parent.name else p.stem)
    return impl.replace(":", ".").replace("/", "_")
