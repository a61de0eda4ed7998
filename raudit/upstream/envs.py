"""Isolated virtual environments for released packages (``raudit upstream setup``).

Layout, under the root (``--dir``, else ``$RAUDIT_UPSTREAM_DIR``, else
``~/.cache/raudit/upstream``)::

    ROOT/NAME/venv/              the environment (python -m venv)
    ROOT/NAME/constraints.txt    every transitive pin, given to pip with -c
    ROOT/NAME/<entry>.py         the entry script, copied from raudit/upstream/entries
    ROOT/NAME/exec.json          the CONFIG of --impl exec:CONFIG
    ROOT/NAME/raudit-upstream.json   written LAST: its presence means "complete"

A set-up whose marker matches the catalog's pins is complete: running it again only
refreshes the entry script and the config (cheap); ``force`` rebuilds. An interrupted
or failed set-up leaves no marker, so the next run starts over. pip runs with the
user's own configuration (indexes, find-links, proxies), never a shell.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections import deque
from collections.abc import Callable
from pathlib import Path

from raudit.errors import ConfigError
from raudit.upstream.catalog import Upstream

MARKER, CONFIG = "raudit-upstream.json", "exec.json"
ENTRIES = Path(__file__).resolve().parent / "entries"
PYTHON_VERSION_CODE = "import sys; print('%d.%d' % sys.version_info[:2])"


def root(directory: str | Path | None = None) -> Path:
    text = directory or os.environ.get("RAUDIT_UPSTREAM_DIR") or "~/.cache/raudit/upstream"
    return Path(text).expanduser().resolve()


def env_dir(u: Upstream, directory: str | Path | None = None) -> Path:
    return root(directory) / u.name


def interpreter(env: Path) -> Path:
    return env / "venv" / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")


def pins_digest(u: Upstream) -> str:
    text = "\n".join([*u.requirements, "--", *u.constraints])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _entry_text(u: Upstream) -> str:
    return (ENTRIES / u.entry).read_text(encoding="utf-8")


def python_version(python: str) -> str | None:
    """``"3.11"`` for an interpreter that runs, None otherwise."""
    try:
        done = subprocess.run([python, "-c", PYTHON_VERSION_CODE], capture_output=True,
                              text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def candidates(version: str) -> list[str]:
    """Where a ``pythonX.Y`` usually is: PATH, /usr/bin, /usr/local/bin, pyenv."""
    out = [p for p in (shutil.which(f"python{version}"),) if p]
    out += [f"/usr/bin/python{version}", f"/usr/local/bin/python{version}",
            str(Path(f"~/.pyenv/shims/python{version}").expanduser())]
    pyenv = Path("~/.pyenv/versions").expanduser()
    if pyenv.is_dir():
        out += [str(p / "bin" / "python") for p in sorted(pyenv.glob(f"{version}.*"))]
    return list(dict.fromkeys(out))


def find_python(u: Upstream, python: str | None = None) -> tuple[str, str]:
    """(interpreter, its X.Y version): ``python`` if given, else one of ``u.python``."""
    if python:
        found = shutil.which(python) or (python if Path(python).is_file() else None)
        version = python_version(found) if found else None
        if version is None:
            raise ConfigError(f"--python {python}: not an interpreter that runs here")
        return found, version
    for cand in candidates(u.python):
        if Path(cand).exists() and python_version(cand) == u.python:
            return cand, u.python
    raise ConfigError(f"{u.name} needs Python {u.python} (its pins were resolved for it) and none "
                      f"was found (looked for python{u.python} on PATH, /usr/bin, pyenv); "
                      "install it or pass --python PATH")


def status(u: Upstream, directory: str | Path | None = None) -> str:
    """"complete", "stale" (other pins), "incomplete" or "absent"."""
    env = env_dir(u, directory)
    if not env.exists():
        return "absent"
    try:
        marker = json.loads((env / MARKER).read_text(encoding="utf-8"))
    except (FileNotFoundError, ValueError):
        return "incomplete"
    if not interpreter(env).exists():
        return "incomplete"
    return "complete" if marker.get("pins") == pins_digest(u) else "stale"


def config_path(u: Upstream, directory: str | Path | None = None) -> Path:
    """The exec CONFIG of a complete set-up (ConfigError naming the command otherwise)."""
    if not u.installable:
        raise ConfigError(f"{u.name} cannot be set up: {u.notes}")
    state = status(u, directory)
    if state not in ("complete", "stale"):
        raise ConfigError(f"the {u.name} environment is {state} under {root(directory)}; run "
                          f"`raudit upstream setup {u.name}` first")
    return write_config(u, env_dir(u, directory))  # the entry as this raudit ships it


def write_config(u: Upstream, env: Path) -> Path:
    """Copy the entry script beside the environment and write exec.json pointing at both."""
    entry = env / u.entry
    entry.write_text(_entry_text(u), encoding="utf-8")
    cfg = {"command": [str(interpreter(env)), str(entry)], "timeout_s": 3600,
           "env": dict(u.env), "name": u.summary.split(",")[0]}
    (env / CONFIG).write_text(json.dumps(cfg, indent=2) + "\n", encoding="utf-8")
    return env / CONFIG


def _run(cmd: list[str], what: str, log: Callable[[str], None], cwd: Path) -> None:
    """Run ``cmd``, streaming its lines to ``log``; a failure is one line with the last ones."""
    tail: deque[str] = deque(maxlen=4)
    try:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    except OSError as exc:
        raise ConfigError(f"{what}: cannot start {cmd[0]}: {exc}") from None
    assert proc.stdout is not None
    for line in proc.stdout:
        line = line.rstrip()
        if line.strip():
            tail.append(line.strip())
            log(line)
    if proc.wait() != 0:
        raise ConfigError(f"{what} failed (exit {proc.returncode}): " + " | ".join(tail))


def setup(u: Upstream, *, directory: str | Path | None = None, python: str | None = None,
          force: bool = False, log: Callable[[str], None] = lambda line: None) -> dict:
    """Create (or confirm) the environment of ``u``; returns what was done and where."""
    if not u.installable:
        raise ConfigError(f"{u.name} cannot be set up: {u.notes}")
    env = env_dir(u, directory)
    state = status(u, directory)
    if state == "complete" and not force:
        return {"name": u.name, "action": "already complete", "config": str(write_config(u, env)),
                "env": str(env)}
    exe, version = find_python(u, python)  # before anything is removed
    if env.exists():
        ours = any((env / p).exists() for p in (MARKER, "venv", "constraints.txt")) or not any(env.iterdir())
        if not ours:  # never delete a folder this module did not make
            raise ConfigError(f"{env} exists and is not a raudit upstream environment; "
                              "remove it or choose another --dir")
        shutil.rmtree(env)
    env.mkdir(parents=True)
    log(f"creating a virtual environment with {exe} (Python {version}) in {env / 'venv'}")
    no_pip = [] if u.requirements else ["--without-pip"]  # nothing to install: no pip needed
    _run([exe, "-m", "venv", *no_pip, str(env / "venv")], "python -m venv", log, env)
    (env / "constraints.txt").write_text("\n".join(u.constraints) + "\n", encoding="utf-8")
    if u.requirements:
        log(f"installing {' '.join(u.requirements)}")
        _run([str(interpreter(env)), "-m", "pip", "install", "-c", str(env / "constraints.txt"),
              *u.requirements], "pip install", log, env)
    if u.imports:
        log(f"checking that {', '.join(u.imports)} import")
        _run([str(interpreter(env)), "-c", "; ".join(f"import {m}" for m in u.imports)],
             "the import check", log, env)
    config = write_config(u, env)
    marker = {"name": u.name, "pins": pins_digest(u), "python": exe, "python_version": version,
              "requirements": list(u.requirements)}
    (env / MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    return {"name": u.name, "action": "rebuilt" if state != "absent" else "created",
            "config": str(config), "env": str(env), "python_version": version}
