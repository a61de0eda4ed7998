"""The README's performance figures, measured: every figure's benchmark run as a user runs it
(a subprocess of ``python benchmarks/SCRIPT.py ...``), its number read from the script's
output, and all of them written to ``benchmarks/results/<host kind>-<commit>.json``.

    OMP_NUM_THREADS=1 python -m benchmarks readme                 # this host's CPU figures
    python -m benchmarks readme --device cuda                     # a GPU host's figures
    python -m benchmarks readme --smoke --out /tmp/smoke          # tiny sizes: does it run?
    python -m benchmarks table                                    # README + performance.md

A figure whose inputs are absent here (the MNIST copy, the released code's environment, a
GPU) is recorded as not measured, with the reason, never as a number. ``--smoke`` runs the
same commands at the smallest sizes and marks the file ``smoke``; the tables never read it.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SCHEMA = 1
THREADS = {"OMP_NUM_THREADS": "1"}  # per-core figures: one thread per process (Ray's actors too)


@dataclass(frozen=True)
class Figure:
    """One README figure: the command that measures it (``argv`` after ``python``, run in the
    repository root) and how its number is read from the command's stdout."""

    key: str
    label: str
    unit: str
    argv: tuple[str, ...]
    read: Callable[[str], float]
    env: dict[str, str] = field(default_factory=dict)
    needs: tuple[str, ...] = ()  # "mnist", "upstream", "ray": inputs a host may lack

    def command(self) -> str:
        """The command as a user types it (environment first; one thread, as measured)."""
        env = " ".join(f"{k}={v}" for k, v in {**THREADS, **self.env}.items())
        return " ".join((env, "python", *self.argv))


# --- reading a script's output ---------------------------------------------------------


def _last_json(out: str) -> dict:
    return json.loads([line for line in out.splitlines() if line.startswith("{")][-1])


def _rate(m: int) -> Callable[[str], float]:
    """model-iterations per (CPU-)second per core at chunk size ``m`` (throughput.py --json)."""
    return lambda out: next(r["per_core"] for r in _last_json(out)["rows"] if r["M"] == m)


def _speedup(m: int) -> Callable[[str], float]:
    return lambda out: next(r["speedup"] for r in _last_json(out)["rows"] if r["M"] == m)


def _match(pattern: str) -> Callable[[str], float]:
    def read(out: str) -> float:
        found = re.findall(pattern, out)
        if not found:
            raise ValueError(f"no line matches {pattern!r}")
        return float(found[-1].replace(",", ""))
    return read


def _end_to_end(out: str) -> float:
    return float(json.loads(out[out.index("{"):])["measured_total_s"])


def _as_user(run: str) -> Callable[[str], float]:
    """The wall time of the cold or the warm run of ``estimate.py --as-user``."""
    return lambda out: float(json.loads(out[out.index("{"):])[run]["measured_total_s"])


def _released_ratio(out: str) -> float:
    """CPU-s per model of the released code's train() over the port's at its largest M."""
    rows = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    released = [r["train_cpu_s"] for r in rows if r["side"] == "released"]
    port = [r for r in rows if r["side"] == "port"]
    best = max(port, key=lambda r: r["M"])["cpu_s_per_model"]
    return sum(released) / len(released) / best


# --- the figures -----------------------------------------------------------------------


@dataclass(frozen=True)
class Sizes:
    """The figures' sizes: the README's, or the smallest that still run every code path."""

    m: int = 128  # models per chunk of the per-core throughput figures
    m_smartnoise: int = 32
    m_gpate: int = 8
    iters: int = 20
    repeats: int = 3
    scale: str = "1"  # of the advertised audit (estimate.py --scale)
    shadow_models: int = 800  # per campaign job of the 1 -> 2 workers figure
    scaling_iters: int = 200
    chunk: int = 25
    campaign: str = "configs/study-audit.yaml"
    extrapolate_m: int = 32
    cap: int = 50
    teachers: int = 3733  # the GPU step figure (the earlier eps-1 size)
    steps: int = 2
    preset_teachers: int = 500  # the CPU step figure: paper-eps1 at k teachers, scaled to 4,000
    released: int = 2
    m_gpu: int = 8192
    m_gpu_smartnoise: int = 2048
    m_gpu_campaign: int = 1024
    white_box_models: int = 100  # shadow models per world of each white-box audit


PAPER_EPS1_TEACHERS = 4000  # the authors' eps = 1 command (gpate's paper-eps1 preset)

SMOKE = Sizes(m=2, m_smartnoise=2, m_gpate=2, iters=2, repeats=1, scale="0.005",
              shadow_models=4, scaling_iters=2, chunk=2, campaign="configs/quick-audit.yaml",
              extrapolate_m=2, cap=2, teachers=10, steps=1, preset_teachers=10, released=1, m_gpu=8,
              m_gpu_smartnoise=2, m_gpu_campaign=2, white_box_models=5)


def _throughput(impl: str, m: int, s: Sizes, *, step: bool = False, device: str = "cpu",
                iters: int | None = None) -> Figure:
    clock = ["--clock", "cpu"] if device == "cpu" else ["--device", device]
    mode = "`RAUDIT_COMPILE=step`" if step else "eager"
    return Figure(key=f"{impl}-{'step' if step else 'eager'}" + ("" if device == "cpu" else "-gpu"),
                  label=f"{impl}, M = {m:,}, {mode}",
                  unit="model-it per CPU-s" if device == "cpu" else "model-it/s",
                  argv=("benchmarks/throughput.py", "--impl", impl, "--models", str(m), "--iters",
                        str(iters or s.iters), "--repeats", str(s.repeats), *clock, "--json"),
                  read=_rate(m), env={"RAUDIT_COMPILE": "step"} if step else {})


def figures(device: str = "cpu", smoke: bool = False) -> list[Figure]:
    """The README's figures for a host of this kind; ``smoke``: the same commands, tiny."""
    s = SMOKE if smoke else Sizes()
    gpate_steps = ("benchmarks/gpate_steps.py", str(s.teachers), "--batch", "64", "--z-dim", "50",
                   "--steps", str(s.steps))
    if device != "cpu":
        gpu_iters = 2 if smoke else 50
        return [
            _throughput("paper", s.m_gpu, s, device=device, iters=gpu_iters),
            _throughput("original", s.m_gpu, s, device=device, iters=gpu_iters),
            _throughput("smartnoise", s.m_gpu_smartnoise, s, device=device,
                        iters=2 if smoke else 30),
            Figure("study-campaign-training-gpu", f"the study campaign's training, M = {s.m_gpu_campaign:,}",
                   "min", ("benchmarks/campaign.py", "--extrapolate", s.campaign, "--m",
                           str(s.m_gpu_campaign), "--cap", str(s.cap), "--device", device),
                   lambda o: 60 * _match(r"total: ([\d.]+) h of training")(o)),
            Figure("gpate-mnist-step-gpu", f"G-PATE MNIST step, {s.teachers:,} teachers", "s",
                   (*gpate_steps, "--dataset", "mnist10", "--device", device, "--chunk", "512"),
                   _match(r"\(median ([\d.]+)\)"), needs=("mnist",))]
    gpate = ("benchmarks/throughput.py", "--impl", "gpate", "--models", "1", str(s.m_gpate),
             "--iters", str(s.iters), "--repeats", str(s.repeats), "--clock", "cpu", "--json")
    out = []
    for impl in ("paper", "original", "borealis"):
        out += [_throughput(impl, s.m, s), _throughput(impl, s.m, s, step=True)]
    return out + [
        _throughput("smartnoise", s.m_smartnoise, s),
        Figure("gpate-eager", f"gpate, M = {s.m_gpate}, eager", "model-it per CPU-s", gpate,
               _rate(s.m_gpate)),
        Figure("gpate-batching", f"gpate, M = {s.m_gpate} over M = 1", "x", gpate,
               _speedup(s.m_gpate)),
        # as a user runs it: the raudit command, default environment (estimate.py drops
        # OMP_NUM_THREADS and every raudit/Ray tuning variable for it), fresh cache then warm;
        # one run of the script gives both figures (run() runs a command once)
        Figure("advertised-audit", "`raudit audit --impl smartnoise --attack groundhog` as a "
               "user runs it (default environment), cold cache", "s",
               ("benchmarks/estimate.py", "--scale", s.scale, "--as-user"), _as_user("cold"),
               needs=("ray",)),
        Figure("advertised-audit-warm", "`raudit audit --impl smartnoise --attack groundhog` "
               "as a user runs it (default environment), warm cache", "s",
               ("benchmarks/estimate.py", "--scale", s.scale, "--as-user"), _as_user("warm"),
               needs=("ray",)),
        Figure("workers-1-to-2", f"1 -> 2 Ray workers, {4 * s.shadow_models:,} models x "
               f"{s.scaling_iters} iterations", "x",
               ("benchmarks/campaign.py", "--shadow-models", str(s.shadow_models), "--iters",
                str(s.scaling_iters), "--chunk", str(s.chunk), "--scaling-only"),
               _match(r"speed-up 1 -> 2 workers, preload on: ([\d.]+)x"),
               env={"RAY_worker_niceness": "0"}, needs=("ray",)),
        Figure("study-campaign-training", f"the study campaign's training, M = {s.extrapolate_m}, "
               "extrapolated", "core-hours",
               ("benchmarks/campaign.py", "--extrapolate", s.campaign, "--m", str(s.extrapolate_m),
                "--cap", str(s.cap)), _match(r"total \(cpu clock\): ([\d.]+) core-hours")),
        Figure("released-vs-port", f"released smartnoise-synth over the port, CPU per model "
               f"(training, M = {s.m_smartnoise})", "x",
               ("benchmarks/released_vs_port.py", "--released", str(s.released), "--models",
                str(s.m_smartnoise)), _released_ratio, needs=("upstream",)),
        # a teacher's work per step does not depend on k (each holds 14 rows, the batch
        # clamps to them), so the 4,000 teachers' step is k teachers' times 4,000 / k; the
        # full size needs ~36 GB for its teachers
        Figure("gpate-mnist-step-eps1", f"G-PATE MNIST step at paper-eps1, 4,000 teachers "
               f"({s.preset_teachers:,} measured, scaled)", "CPU-s",
               ("benchmarks/gpate_steps.py", str(s.preset_teachers), "--dataset", "mnist10",
                "--preset", "paper-eps1", "--rows-per-teacher", "14", "--steps", str(s.steps)),
               lambda o: PAPER_EPS1_TEACHERS / s.preset_teachers * _match(r"\(median ([\d.]+)\)")(o),
               needs=("mnist",)),
        Figure("white-box-gain", f"white-box minus black-box eps_cp on the same models, the "
               f"least of paper, original, borealis and gan (querybased, worst case, "
               f"{s.white_box_models} models per world)", "eps",
               ("benchmarks/white_box.py", "--shadow-models", str(s.white_box_models)),
               lambda out: float(_last_json(out)["min_gain"])),
    ]


# --- the host, and what it lacks -------------------------------------------------------


def host_kind(device: str = "cpu") -> dict:
    """The host's kind (the results' file name and table heading) and what it is."""
    info = {"cpu": platform.processor() or platform.machine(), "cores": os.cpu_count(),
            "isa": "", "gpu": None}
    try:
        text = Path("/proc/cpuinfo").read_text()
        info["cpu"] = re.search(r"model name\s*:\s*(.*)", text).group(1).strip()
        flags = set(re.search(r"flags\s*:\s*(.*)", text).group(1).split())
        info["isa"] = "avx512" if "avx512f" in flags else "avx2" if "avx2" in flags else ""
    except (OSError, AttributeError):
        pass
    word = next((w for w in ("EPYC", "Xeon", "Ryzen", "Core") if w in info["cpu"]),
                info["cpu"].split()[0] if info["cpu"] else "cpu")
    kind = "-".join(x for x in (word.lower(), info["isa"], f"{info['cores']}cpu") if x)
    if device != "cpu":
        import torch

        info["gpu"] = torch.cuda.get_device_name(torch.device(device))
        kind = re.sub(r"[^a-z0-9]+", "-", info["gpu"].lower()).strip("-")
    return {"kind": kind, **info}


def missing(needs: tuple[str, ...]) -> str | None:
    """Why a figure cannot be measured here, or None."""
    data = Path(os.environ.get("RAUDIT_DATA_DIR", ROOT.parent / "shared" / "data"))
    if "mnist" in needs and not (data / "mnist").exists():
        return f"no MNIST copy under {data} (RAUDIT_DATA_DIR)"
    if "upstream" in needs and not os.environ.get("RAUDIT_UPSTREAM_DIR"):
        return "RAUDIT_UPSTREAM_DIR is not set (the released code's environments)"
    if "ray" in needs:
        try:
            import ray  # noqa: F401  (only whether it is installed)
        except ImportError:
            return "Ray is not installed"
    return None


def commit() -> tuple[str, bool]:
    """This tree's short commit and whether it differs from it."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()
    return git("rev-parse", "--short=7", "HEAD") or "unknown", bool(git("status", "--porcelain",
                                                                        "--", "raudit"))


# --- running ---------------------------------------------------------------------------


def measure(fig: Figure, timeout: float, ran: dict | None = None) -> dict:
    """Run one figure's command; its number, or why there is none. ``ran`` keeps each
    command's run for the figures after it that read the same command's output (gpate's
    rate and its batching speed-up; the advertised audit's cold and warm runs)."""
    row = {"key": fig.key, "label": fig.label, "unit": fig.unit, "command": fig.command()}
    if why := missing(fig.needs):
        return {**row, "value": None, "skipped": why}
    ran = {} if ran is None else ran
    got = ran.get(fig.command())
    if got is None:
        got = ran[fig.command()] = _execute(fig, timeout)
    done, wall = got
    if done is None:
        return {**row, "value": None, "skipped": f"ran past {timeout:g} s"}
    row["wall_s"] = wall
    if done.returncode != 0:
        tail = (done.stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return {**row, "value": None, "skipped": f"exit {done.returncode}: {tail}"}
    try:
        return {**row, "value": round(fig.read(done.stdout), 3)}
    except (ValueError, KeyError, IndexError, StopIteration, ZeroDivisionError) as exc:
        return {**row, "value": None, "skipped": f"output not understood: {exc}"}


def _execute(fig: Figure, timeout: float):
    """(the finished process or None past ``timeout``, its wall seconds)."""
    env = {**os.environ, **THREADS, **fig.env,
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    t0 = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, *fig.argv], cwd=ROOT, env=env, capture_output=True,
                              text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return None, round(time.perf_counter() - t0, 1)
    return done, round(time.perf_counter() - t0, 1)


def carry(rows: list[dict], kind: str, device: str, smoke: bool, out: Path) -> list[dict]:
    """The figures an ``--only`` run did not measure, taken from the newest earlier results
    file of this host kind, each row keeping its own commit and date: the tables are drawn
    from one file per host kind, so a partial run must not drop the rest of the host's table."""
    measured = {r["key"] for r in rows}
    keys = {f.key for f in figures(device, smoke)}
    earlier = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(out.glob("*.json"))]
    earlier = [d for d in earlier if d["host"]["kind"] == kind and bool(d.get("smoke")) == smoke]
    if not earlier:
        return []
    newest = max(earlier, key=lambda d: d["date"])
    return [r for r in newest["figures"] if r["key"] in keys and r["key"] not in measured]


def _in_suite_order(rows: list[dict], device: str, smoke: bool) -> list[dict]:
    order = {f.key: i for i, f in enumerate(figures(device, smoke))}
    return sorted(rows, key=lambda r: order.get(r["key"], len(order)))


def run(device: str = "cpu", smoke: bool = False, only: list[str] | None = None,
        out: Path = RESULTS, timeout: float = 3600) -> Path:
    """Measure the figures and write the JSON; returns its path. Written whole, then renamed:
    no reader sees half a file."""
    host = host_kind(device)
    sha, dirty = commit()
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    load = round(os.getloadavg()[0], 2)  # before: how quiet the host was when it began
    chosen = [f for f in figures(device, smoke) if not only or f.key in only]
    rows, ran = [], {}
    for fig in chosen:
        print(f"{fig.key}: {fig.command()}", file=sys.stderr, flush=True)
        rows.append({**measure(fig, timeout, ran), "commit": sha, "date": started[:10]})
        print(f"  -> {rows[-1].get('value')} {fig.unit} {rows[-1].get('skipped', '')}",
              file=sys.stderr, flush=True)
    carried = carry(rows, host["kind"], device, smoke, out) if only else []
    doc = {"schema": SCHEMA, "host": host, "commit": sha, "dirty": dirty, "date": started,
           "smoke": smoke, "load_1min": load,
           "source": "python -m benchmarks readme" + (f" --device {device}" if device != "cpu" else "")
           + (f" --only {' '.join(only)}" if only else ""),
           "figures": _in_suite_order(rows + carried, device, smoke),
           "carried": [r["key"] for r in carried]}
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{host['kind']}-{sha}{'-dirty' if dirty else ''}{'-smoke' if smoke else ''}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path
