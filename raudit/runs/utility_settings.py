"""A utility benchmark's settings as one value: ``raudit utility``'s flags and
:func:`raudit.utility`'s keyword arguments both become a :class:`UtilitySettings`, checked
and turned into a :class:`~raudit.utility.plan.UtilityRequest` by :func:`request` (the
same messages for both), and run with its plots by :func:`run`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from raudit.errors import ConfigError

if TYPE_CHECKING:
    from raudit.runs.schedule import Progress
    from raudit.utility.plan import UtilityRequest

__all__ = ["UtilitySettings", "SWEEPS", "request", "default_out", "run"]

SWEEPS = ("eps", "teachers", "presets", "conditional")


@dataclass(frozen=True)
class UtilitySettings:
    """``raudit utility``'s flags with their defaults; a repeatable flag takes one value or
    a sequence of them."""

    impl: str = "paper"
    dataset: str = "cervical"
    epsilon: float | Sequence[float] | None = None
    sweep: str | Sequence[str] | None = None
    control: str | None = None
    teachers: str | int | Sequence[str | int] | None = None
    preset: str | Sequence[str] | None = None
    conditional: bool | str | Sequence[bool | str] | None = None
    delta: float | None = None
    lam: float | None = None
    max_iter: int = 10_000
    options: Sequence[str] | Mapping[str, object] | None = None
    label: str | None = None
    bounds: Path | str | None = None
    fits: int = 5
    samples: int = 5
    seed: int = 0
    classifier: str | Sequence[str] | None = None
    setting: str | Sequence[str] | None = None
    real_only: bool = False
    reference: float | None = None
    out: Path | str | None = None
    chunk_size: int | None = None
    workers: int | None = None
    backend: str = "ray"
    device: str = "auto"
    retries: int = 1


def _bools(values: Sequence[object]) -> tuple[bool, ...]:
    out = []
    for v in values:
        if isinstance(v, bool):
            out.append(v)
            continue
        t = str(v).strip().lower()
        if t not in ("true", "false", "yes", "no", "1", "0"):
            raise ConfigError(f"--conditional takes true or false, got {v!r}")
        out.append(t in ("true", "yes", "1"))
    return tuple(out)


def _listed(value: object) -> list[Any]:
    """A repeatable flag's values: one value or a sequence of them."""
    if value is None:
        return []
    if isinstance(value, (str, int, float)):
        return [value]
    if not isinstance(value, Iterable):
        raise ConfigError(f"a repeatable setting takes one value or a list of them, got {value!r}")
    return list(value)


def request(s: UtilitySettings) -> UtilityRequest:
    """The checked :class:`~raudit.utility.plan.UtilityRequest` of ``s``."""
    from raudit.generators.kwargs import check_generator_args, check_shared, generator_kwargs
    from raudit.runs.audit_settings import option_list

    if not s.real_only:  # a mistyped option before torch loads (raudit.generators.declared)
        check_generator_args(str(s.impl), preset=None, teachers=None, lam=s.lam,
                             max_iter=None, options=option_list(s.options))
    from raudit.utility import plan

    sweeps = _listed(s.sweep)
    bad = [x for x in sweeps if x not in SWEEPS]
    if bad:
        raise ConfigError(f"--sweep takes {', '.join(SWEEPS)}; got {bad}")
    sweep = set(sweeps)
    epsilon = _listed(s.epsilon)
    if "eps" in sweep and epsilon:
        epsilon = sorted(set(epsilon))
        if len(epsilon) < 2:
            raise ConfigError(f"--sweep eps with --epsilon needs at least two values (or no "
                              f"--epsilon: the study's grid); got {epsilon}")
    kwargs = {} if s.real_only else generator_kwargs(
        str(s.impl), preset=None, teachers=None, lam=s.lam, max_iter=None, device=None,
        options=option_list(s.options))
    if not s.real_only:
        # --max-iter caps each fit (the plan passes it on only below a generator's own
        # count), so it is not a constructor option here; given, it gets every command's
        # checks: at least 1, and a generator without iterations refuses it
        if s.max_iter != UtilitySettings.max_iter:
            generator_kwargs(str(s.impl), preset=None, teachers=None, lam=None,
                             max_iter=s.max_iter, device=None, options=None)
        for preset in _listed(s.preset):
            check_shared(str(s.impl), preset=str(preset))
    eps = plan.STUDY_EPSILONS if "eps" in sweep and not epsilon else tuple(epsilon or (1.0,))
    return plan.UtilityRequest(
        impl=str(s.impl), dataset=s.dataset, label=s.label,
        bounds=None if s.bounds is None else str(s.bounds),
        options=kwargs, epsilons=tuple(float(e) for e in eps), delta=s.delta,
        teachers=tuple(f"N/{r}" for r in plan.STUDY_TEACHER_RATIOS) if "teachers" in sweep
        else tuple(str(t) for t in _listed(s.teachers)),
        presets=("default", "paper") if "presets" in sweep
        else tuple(_listed(s.preset) or ("default",)),
        conditional=(False, True) if "conditional" in sweep else _bools(_listed(s.conditional)),
        fits=s.fits, samples=s.samples, seed=s.seed, classifiers=tuple(_listed(s.classifier)),
        settings=tuple(_listed(s.setting) or plan.SETTINGS), real_only=s.real_only,
        chunk_size=s.chunk_size, max_iter=s.max_iter, control=s.control)


def default_out(s: UtilitySettings) -> Path:
    from raudit.generators.exec_adapter import folder_name

    name = "real" if s.real_only else folder_name(str(s.impl))
    return Path("runs") / f"utility-{name}-{Path(s.dataset).stem}-F{s.fits}xS{s.samples}-s{s.seed}"


def run(s: UtilitySettings, progress: Progress | None = None,
        notice: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Check, run (or resume) and plot: the result ``raudit utility --json`` prints."""
    from raudit.engine.driver import EngineConfig
    from raudit.runs.utility import run_utility
    from raudit.utility.plot import learning_vs_eps, utility_vs_eps

    req = request(s)
    engine = EngineConfig(backend=s.backend, workers=s.workers, device=s.device,
                          retries=s.retries)
    out = Path(s.out) if s.out is not None else default_out(s)
    # the total first, before anything trains
    result = run_utility(req, out, engine, progress, reference=s.reference, notice=notice,
                         estimate=True)
    png = None if s.real_only else utility_vs_eps(result, out / "utility_vs_eps.png")
    result["plot"] = None if png is None else str(png)
    if s.control and not s.real_only:
        curve = learning_vs_eps(result, out / "learning_vs_eps.png")
        result["learning_plot"] = None if curve is None else str(curve)
    return result
