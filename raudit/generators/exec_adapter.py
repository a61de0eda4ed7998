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
timeout, or output of the wrong shape or type are one-line errors. A relative program
path (``./entry.sh``, ``bin/fit``) is relative to the config's folder, in the check and in
the run alike (a bare name is looked up on PATH), and so is an argument that names a file or
folder there (``train.py`` of ``[python, train.py]``). The program runs as its own process
group (:mod:`raudit.generators.plugin_process`: the group is killed at its end and at the
timeout, its output kept as a bounded tail). The work folder lives as long as the fitted
model (a temporary folder, removed with it; one left by a killed raudit is removed by the
next run).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pandas as pd

from raudit.errors import ConfigError, DataError
from raudit.generators import plugin_process
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
    here = p.resolve().parent
    cmd = [_program(cmd[0], here), *(_argument(a, here) for a in cmd[1:])]
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


def _program(program: str, config_dir: Path) -> str:
    """``program`` as the run will start it: a relative path made absolute against the
    config's folder (the run's working folder is a temporary one); a bare name as given
    (PATH finds it)."""
    path = Path(program).expanduser()
    if path.is_absolute() or os.sep not in program:
        return str(path) if program.startswith("~") else program
    return str(config_dir / path)


def _argument(arg: str, config_dir: Path) -> str:
    """An argument naming a file or folder that exists relative to the config's folder
    (``train.py`` of ``[python, train.py]``) made absolute, as the program is: the run's
    working folder is a temporary one, where a relative name would find nothing. Any other
    argument (an option, a value, an absolute path) is passed as written."""
    if arg.startswith("-") or Path(arg).is_absolute():
        return arg
    candidate = config_dir / arg
    return str(candidate) if candidate.exists() else arg


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
            done = plugin_process.run([*cfg["command"], str(folder)], cwd=folder,
                                      env={**os.environ, **cfg["env"]}, timeout_s=cfg["timeout_s"])
        except OSError as exc:
            raise ConfigError(f"{cfg['name']}: cannot start {cfg['command'][0]!r}: {exc}") from None
        if done.timed_out:
            raise DataError(f"{cfg['name']}: {request['action']} ran past its "
                            f"{cfg['timeout_s']:g} s timeout (its process group was killed)")
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:]) or "no error output"
            raise DataError(f"{cfg['name']}: {request['action']} exited with status "
                            f"{done.returncode}: {tail}")

    def _fit(self, data, *, epsilon, delta, seed, columns, observer) -> None:
        self._dir = plugin_process.work_folder()
        folder = Path(self._dir.name)
        self.columns_, self.dtypes_ = list(data.columns), data.dtypes.to_dict()
        data.reset_index(drop=True).rename(columns=str).to_parquet(folder / "train.parquet")
        meta = [{"name": c.name, "bounds": c.bounds, "kind": getattr(c, "kind", None)}
                for c in columns or ()]
        self._run({"action": "fit", "epsilon": epsilon, "delta": delta, "seed": int(seed),
                   "columns": meta, "options": {k: v for k, v in self.options.items()}})
        name = self.config["name"]
        summary = _summary(_read_json(folder / "summary.json"), name)
        events = _events(folder / "events.jsonl", name)
        if events is not None:
            summary["events"] = events
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
    except ValueError as exc:  # bad JSON, or bytes that are not UTF-8
        raise DataError(f"{path.name} written by the external generator is not JSON: "
                        f"{str(exc).splitlines()[0]}") from None


def _summary(raw: Any, name: str) -> dict:
    """summary.json as raudit reads it: a mapping whose ``iterations`` is a whole number
    >= 0 and ``eps_hat`` a number (or null); both default when absent."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise DataError(f"{name}: summary.json must be a JSON object, got {type(raw).__name__}")
    out = dict(raw)
    it = out.setdefault("iterations", 0)
    if isinstance(it, bool) or not isinstance(it, (int, float)) or it < 0 or it != int(it):
        raise DataError(f"{name}: summary.json's iterations must be a whole number >= 0, "
                        f"got {it!r:.60}")
    out["iterations"] = int(it)
    eps = out.get("eps_hat")
    if eps is None:
        out["eps_hat"] = float("nan")
    elif isinstance(eps, bool) or not isinstance(eps, (int, float)):
        raise DataError(f"{name}: summary.json's eps_hat must be a number or null, got {eps!r:.60}")
    else:
        out["eps_hat"] = float(eps)
    return out


def _events(path: Path, name: str) -> list[dict] | None:
    """events.jsonl: one JSON object per line (blank lines skipped); None when absent."""
    if not path.exists():
        return None
    out = []
    with path.open("rb") as fh:
        for i, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                event = json.loads(raw.decode("utf-8"))
            except ValueError as exc:  # bad JSON or bytes that are not UTF-8
                raise DataError(f"{name}: events.jsonl line {i} is not JSON "
                                f"({str(exc).splitlines()[0]})") from None
            if not isinstance(event, dict):
                raise DataError(f"{name}: events.jsonl line {i} must be a JSON object, got "
                                f"{type(event).__name__}")
            out.append(event)
    return out


def _read_table(folder: Path, name: str) -> pd.DataFrame:
    for file, read in (("synthetic.parquet", pd.read_parquet), ("synthetic.csv", pd.read_csv)):
        if (folder / file).exists():
            try:
                return read(folder / file)
            except Exception as exc:  # noqa: BLE001 - a foreign file: any failure is its damage
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                raise DataError(f"{name}: sample wrote a {file} that cannot be read "
                                f"({type(exc).__name__}: {first[:200]})") from None
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
