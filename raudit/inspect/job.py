"""An inspection request: what `raudit inspect` and a campaign's inspect job ask for, and
each generator's options under it (the study's settings where it takes them).
:func:`raudit.runs.run_inspect` runs it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from raudit import generators
from raudit.errors import ConfigError
from raudit.seeds import check_root

__all__ = ["InspectRequest", "STUDY_LAMBDA", "STUDY_MAX_ITER", "STUDY_TEACHERS",
           "generator_options", "request_from_settings"]

#: the study's inspection and audit settings (section 6.1-6.2): k = 5, lambda = 1e-3,
#: at most 1,000 iterations for the generators that have no stopping rule
STUDY_TEACHERS, STUDY_LAMBDA, STUDY_MAX_ITER = 5, 1e-3, 1000


@dataclass(frozen=True)
class InspectRequest:
    """``impls`` empty with ``all_`` True: every registered generator. ``options``: -o
    KEY=VALUE strings (with ``all_``, applied to the generators that take them)."""

    impls: tuple[str, ...] = ("paper",)
    all_: bool = False
    dataset: str = "cervical"
    label: str | None = None
    bounds: str | None = None
    epsilon: float = 1.0
    delta: float | None = None
    teachers: int = STUDY_TEACHERS
    lam: float = STUDY_LAMBDA
    max_iter: int = STUDY_MAX_ITER
    seed: int = 0
    preset: str = "default"
    options: tuple[str, ...] = ()
    probes: bool = True

    def __post_init__(self) -> None:
        check_root(self.seed)
        if self.all_ and self.impls:
            raise ConfigError("give --impl or --all, not both")
        if self.teachers < 1 or self.max_iter < 1:
            raise ConfigError(f"--teachers and --max-iter must be at least 1, got "
                              f"{self.teachers} and {self.max_iter}")
        if not (self.lam > 0 and self.epsilon > 0):
            raise ConfigError(f"--lambda and --epsilon must be positive, got {self.lam} and {self.epsilon}")
        generators.base.check_privacy(self.epsilon, self.delta)

    def manifest(self, names: list[str], dataset: str) -> dict[str, Any]:
        spec = asdict(self)
        spec.update(impls=names, dataset=dataset, options=list(self.options), all=spec.pop("all_"))
        return {"kind": "inspect", **spec}


def generator_options(impl: str, req: InspectRequest, n_rows: int, n_cols: int, *,
                      strict: bool = True) -> dict:
    """Generator kwargs: the study's settings where the generator takes them, then -o.

    ``max_iter`` caps the generator's own iteration count (never raises it). With
    ``strict`` False an -o option the generator lacks is left out for it."""
    from raudit.generators.kwargs import generator_kwargs

    cls = generators.get(impl)
    caps = cls.describe()
    given = {"preset": req.preset, "teachers": req.teachers, "lam": req.lam}
    kwargs = {k: v for k, v in given.items() if v is not None and caps.accepts(k)}
    items = list(req.options)
    if not strict:
        items = [i for i in items if caps.accepts(i.partition("=")[0].replace("-", "_"))]
    kwargs.update(generator_kwargs(impl, preset=None, teachers=None, lam=None, max_iter=None,
                                   device=None, options=items))
    if caps.accepts("max_iter") and caps.options is not None and "max_iter" not in kwargs:
        resolve = getattr(cls(**kwargs), "resolve", None)
        own = getattr(resolve(n_rows, n_cols), "max_iter", None) if callable(resolve) else None
        kwargs["max_iter"] = req.max_iter if own is None else min(own, req.max_iter)
    return kwargs


def request_from_settings(settings: dict[str, Any]) -> InspectRequest:
    """A campaign job's settings as an :class:`InspectRequest` (ConfigError/TypeError on a
    bad or unknown key, which the campaign reports with its line). ``impl`` is a name, a
    list of names or ``all``; ``options`` a mapping or a list of KEY=VALUE strings;
    ``iterations`` is an alias of ``max_iter``."""
    s = dict(settings)
    impl = s.pop("impl", "paper")
    impls = tuple(str(i) for i in impl) if isinstance(impl, (list, tuple)) else (str(impl),)
    opts = s.pop("options", None) or {}
    items = (tuple(f"{k}={v}" for k, v in opts.items()) if isinstance(opts, dict)
             else tuple(str(o) for o in opts))
    if "iterations" in s:
        s["max_iter"] = s.pop("iterations")
    all_ = impls == ("all",)
    return InspectRequest(impls=() if all_ else impls, all_=all_, options=items, **s)
