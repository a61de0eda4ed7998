"""raudit from Python: one function per command, the command's defaults, its checks and
its one-line errors, and a result object in return.

::

    import raudit.api as ra

    trained = ra.train(impl="paper", dataset="breast-cancer", out="runs/t")
    result = ra.audit(impl="identity", attack="querybased", dataset="worst-case",
                      shadow_models=50, backend="local", out="runs/a")
    result.verdict          # the sentence `raudit audit` ends with
    result.eps_lower        # eps_cp, the 90%-confidence lower bound
    result.shadow           # one row per shadow model (a DataFrame)
    result                  # in a notebook: the report's verdict box

The functions take the flags of their command as keyword arguments (``--shadow-models``
is ``shadow_models``, ``-o KEY=VALUE`` is ``options={"KEY": VALUE}``); ``impl`` also takes
a generator class or instance (:mod:`raudit.api.generator`). Each builds the same settings
object as its command and runs it through the same run-layer function, so a bad argument
raises the :class:`raudit.errors.RauditError` whose message is the command's error line,
before any work. Progress shows as the command's bars (rich; live in a notebook) and
``raudit:`` lines on stderr; ``quiet=True`` shows neither.

The names ``raudit.audit``, ``raudit.utility``, ``raudit.inspect``, ``raudit.report`` and
``raudit.campaign`` are raudit's packages, so the functions live here, in ``raudit.api``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar, cast

from raudit.api.arguments import check_arguments
from raudit.api.results import (AuditResult, CampaignExport, CampaignPlan, CampaignResult, InspectResult,
                                ReportResult, TrainResult, UtilityResult)

__all__ = ["audit", "train", "utility", "inspect", "campaign", "report", "AuditResult",
           "TrainResult", "UtilityResult", "InspectResult", "CampaignResult", "CampaignPlan", "CampaignExport",
           "ReportResult"]

Options = dict[str, Any] | Sequence[str] | None


F = TypeVar("F", bound=Callable[..., Any])


def _in_keyword_words(fn: F) -> F:
    """Run ``fn`` with the text written inside it (estimate lines, the engine's "... to
    resume", a report's verdicts) naming this API's keywords, not the command's flags
    (:mod:`raudit.wording`); its errors stay the command's one-line messages."""
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        from raudit.wording import KEYWORDS, speaking

        with speaking(KEYWORDS):
            return fn(*args, **kwargs)
    return cast(F, call)


def _notice(quiet: bool) -> Callable[[str], None] | None:
    if quiet:
        return None
    from raudit.cli.progress import notice
    return notice


@contextlib.contextmanager
def _phases(quiet: bool) -> Iterator[Any]:
    from raudit.cli.progress import phase_bars
    with phase_bars(quiet=quiet) as progress:
        yield progress


@_in_keyword_words
def audit(*, impl: Any = "paper", attack: str = "groundhog", features: str | None = None,
          dataset: str | None = None, target: str | None = None,
          shadow_models: int | str = 1000, epsilon: float = 1.0, delta: float | None = None,
          teachers: int | None = None, lam: float | None = None, max_iter: int | None = None,
          preset: str = "default", options: Options = None, seed: int = 0,
          synthetic_rows: int | str | None = None, label: str | None = None,
          bounds: str | Path | None = None, neighbours: str = "add-remove",
          target_candidates: int = 64, target_pairs: int = 100, target_selection: str = "pool",
          selection_models: int = 200, out: str | Path | None = None,
          chunk_size: int | str = "auto", workers: int | None = None, backend: str = "ray",
          device: str = "auto", per_gpu: int = 1, retries: int = 1, samples_per_model: int = 1,
          target_width: float | None = None, until_ceiling: bool = False,
          first_stage: int = 50, synthetic_in: str | Path | None = None,
          synthetic_out: str | Path | None = None, threat_model: str = "black-box",
          one_run: bool = False, canaries: int = 1000, sequential: str | None = None,
          quiet: bool = False) -> AuditResult:
    """Audit a generator by the distinguishing game (``raudit audit``): S shadow models per
    world, an attack, eps lower bounds against the claimed eps.

    Every argument is ``raudit audit``'s flag of the same name with its default (see
    ``raudit audit --help`` and docs/audits.md); ``sequential`` is ``--sequential``.
    ``impl``: a generator name, ``module:Class``, ``exec:CONFIG``, or a
    :class:`~raudit.generators.base.Generator` subclass or instance (not importable by
    ``module:Class``: ``backend="local"`` only). ``out``: the results folder (default
    ``runs/audit-...``); calling again with the same arguments resumes.

    Returns an :class:`AuditResult`: ``verdict``, ``eps_lower`` (eps_cp), ``eps_max``,
    ``estimates``, ``auc``, ``violated``, ``shadow`` (DataFrame), ``out``, ``summary``
    (what ``--json`` prints). Raises :class:`raudit.errors.RauditError` (the command's
    one-line message) for bad input, before any work.
    """
    check_arguments(audit, locals())  # types first: the command's parser does that for it
    from raudit.api.generator import resolved
    from raudit.cli.audit_view import summary_json
    from raudit.runs.audit_plan import execute, prepare
    from raudit.runs.audit_settings import AuditSettings

    with resolved(impl, backend, options) as (name, opts):
        plan = prepare(AuditSettings(
            impl=name, attack=attack, features=features, dataset=dataset, target=target,
            shadow_models=shadow_models, epsilon=epsilon, delta=delta, teachers=teachers,
            lam=lam, max_iter=max_iter, preset=preset, options=opts, seed=seed,
            synthetic_rows=synthetic_rows, label=label, bounds=bounds, neighbours=neighbours,
            target_candidates=target_candidates, target_pairs=target_pairs,
            target_selection=target_selection, selection_models=selection_models, out=out,
            chunk_size=chunk_size, workers=workers, backend=backend, device=device,
            per_gpu=per_gpu, retries=retries, samples_per_model=samples_per_model,
            target_width=target_width, until_ceiling=until_ceiling, first_stage=first_stage,
            synthetic_in=synthetic_in, synthetic_out=synthetic_out, threat_model=threat_model,
            one_run=one_run, canaries=canaries, sequential=sequential))
        with _phases(quiet) as progress:
            summary = summary_json(execute(plan, progress, notice=_notice(quiet)))
    return AuditResult(_in_keywords(summary))


def _in_keywords(summary: dict[str, Any]) -> dict[str, Any]:
    """An audit's summary with its verdict advising this API's keywords (``shadow_models=``),
    not the command's flags the stored sentence names."""
    from raudit.audit.verdict import in_words
    from raudit.wording import KEYWORDS

    return {**summary, "verdict": in_words(summary, KEYWORDS)} if "verdict" in summary else summary


@_in_keyword_words
def train(*, impl: Any = "paper", dataset: str = "breast-cancer", epsilon: float = 1.0,
          delta: float | None = None, teachers: int | None = None, lam: float | None = None,
          max_iter: int | None = None, seed: int = 0, preset: str = "default",
          label: str | None = None, bounds: str | Path | None = None, device: str = "auto",
          threads: int = 1, options: Options = None, rows: int | None = None,
          out: str | Path | None = None, fmt: str = "parquet", parallel: str = "none",
          workers: int = 2, events: bool = False, quiet: bool = False) -> TrainResult:
    """Fit one generator on a dataset and write its synthetic data and summary.json
    (``raudit train``; ``fmt`` is ``--format``). ``impl`` as for :func:`audit` (a class
    defined here trains in this process).

    Returns a :class:`TrainResult`: ``synthetic`` (DataFrame), ``iterations``, ``eps_hat``,
    ``warnings``, ``summary`` (summary.json), ``out``.
    """
    check_arguments(train, locals())  # types first: the command's parser does that for it
    from raudit.api.generator import resolved
    from raudit.runs.train import TrainSettings, run_train

    with resolved(impl, "local", options) as (name, opts):
        settings = TrainSettings(
            impl=name, dataset=dataset, epsilon=epsilon, delta=delta, teachers=teachers,
            lam=lam, max_iter=max_iter, seed=seed, preset=preset, label=label, bounds=bounds,
            device=device, threads=threads, options=opts, rows=rows, out=out, fmt=fmt,
            parallel=parallel, workers=workers, events=events)
        from raudit.cli.progress import iteration_bar
        r = run_train(settings, bar=lambda d, total: iteration_bar(d, total, quiet=quiet))
    return TrainResult(r.summary, r.synthetic, r.out, list(r.warnings))


@_in_keyword_words
def utility(*, impl: Any = "paper", dataset: str = "cervical",
            epsilon: float | Sequence[float] | None = None,
            sweep: str | Sequence[str] | None = None, control: str | None = None,
            teachers: str | int | Sequence[str | int] | None = None,
            preset: str | Sequence[str] | None = None,
            conditional: bool | Sequence[bool | str] | None = None,
            delta: float | None = None, lam: float | None = None, max_iter: int = 10_000,
            options: Options = None, label: str | None = None,
            bounds: str | Path | None = None, fits: int = 5, samples: int = 5, seed: int = 0,
            classifier: str | Sequence[str] | None = None,
            setting: str | Sequence[str] | None = None, real_only: bool = False,
            reference: float | None = None, out: str | Path | None = None,
            chunk_size: int | None = None, workers: int | None = None, backend: str = "ray",
            device: str = "auto", retries: int = 1, quiet: bool = False) -> UtilityResult:
    """The utility benchmark (``raudit utility``): fit the generator ``fits`` times, sample
    ``samples`` tables per fit, score the classifiers in Settings A/B/C. The repeatable flags
    (``epsilon``, ``sweep``, ``teachers``, ``preset``, ``conditional``, ``classifier``,
    ``setting``) take one value or a list.

    Returns a :class:`UtilityResult`: ``per_classifier`` and ``points`` (DataFrames),
    ``failed`` (errors of classifiers that could not score), ``summary``, ``out``.
    """
    check_arguments(utility, locals())  # types first: the command's parser does that for it
    from raudit.api.generator import resolved
    from raudit.runs.utility_settings import UtilitySettings, run

    with resolved(impl, backend, options) as (name, opts):
        settings = UtilitySettings(
            impl=name, dataset=dataset, epsilon=epsilon, sweep=sweep, control=control,
            teachers=teachers, preset=preset, conditional=conditional, delta=delta, lam=lam,
            max_iter=max_iter, options=opts, label=label, bounds=bounds, fits=fits,
            samples=samples, seed=seed, classifier=classifier, setting=setting,
            real_only=real_only,
            reference=reference, out=out, chunk_size=chunk_size, workers=workers,
            backend=backend, device=device, retries=retries)
        with _phases(quiet) as progress:
            return UtilityResult(run(settings, progress, notice=_notice(quiet)))


@_in_keyword_words
def inspect(*, impl: Any = None, all_: bool = False, dataset: str = "cervical",
            epsilon: float = 1.0, delta: float | None = None, teachers: int = 5,
            lam: float = 1e-3, max_iter: int = 1000, seed: int = 0,
            preset: str = "default", options: Options = None, label: str | None = None,
            bounds: str | Path | None = None, probes: bool = True, threads: int = 1,
            out: str | Path | None = None, quiet: bool = False) -> InspectResult:
    """Train instrumented and measure every privacy check (``raudit inspect``; ``all_`` is
    ``--all``). ``impl``: one generator (name, class or instance) or a list of names
    (default paper); ``teachers``, ``lam``, ``max_iter`` default to the study's settings.

    Returns an :class:`InspectResult`: ``violations`` (DataFrame), ``text()`` (the table
    the command prints), ``runs``, ``out``.
    """
    check_arguments(inspect, locals())  # types first: the command's parser does that for it
    from raudit.api.generator import resolved
    from raudit.inspect.job import InspectRequest
    from raudit.runs.audit_settings import option_list
    from raudit.runs.inspect import run_inspect_threads

    many = isinstance(impl, (list, tuple))
    with resolved(impl if impl is not None and not many else "paper", "local",
                  options) as (name, opts):
        impls = tuple(impl) if many else (() if impl is None else (name,))
        req = InspectRequest(
            impls=impls if impls or all_ else ("paper",), all_=all_, dataset=dataset,
            label=label, bounds=None if bounds is None else str(bounds), epsilon=epsilon,
            delta=delta, teachers=teachers, lam=lam, max_iter=max_iter, seed=seed,
            preset=preset, options=tuple(option_list(opts) or ()), probes=probes)
        runs = run_inspect_threads(req, None if out is None else Path(out), threads,
                                   notice=_notice(quiet))
    return InspectResult(runs, None if out is None else Path(out))


@_in_keyword_words
def campaign(config: str | Path, *, out: str | Path | None = None, dry_run: bool = False,
             only: str | Sequence[str] | None = None, workers: int | None = None,
             backend: str = "ray", device: str = "auto", per_gpu: int = 1, retries: int = 1,
             export: str | Path | None = None, import_: str | Path | None = None,
             quiet: bool = False) -> CampaignResult | CampaignPlan | CampaignExport:
    """Run (or resume) a campaign file (``raudit campaign``): its audits, utility runs and
    inspections over one actor pool; ``out`` defaults to ``runs/campaign-NAME``. A job that
    fails is reported in the result (``failed_jobs``), the others finish.

    Returns a :class:`CampaignResult`: ``jobs`` (DataFrame), ``failed_jobs``,
    ``table(name)`` (a stored table of every job), ``summary``, ``out``. ``dry_run``:
    validate and plan only (every error at once), a :class:`CampaignPlan`; trains nothing.
    ``export``: write the rows finished so far in ``out`` to that file and stop (a
    :class:`CampaignExport`); ``import_``: start a fresh ``out`` from such a file, then
    continue the campaign there (to carry a run from one machine to another).
    """
    check_arguments(campaign, locals())  # types first: the command's parser does that for it
    from raudit.campaign import config as cf
    from raudit.campaign import transfer
    from raudit.campaign.run import load_jobs, run_campaign
    from raudit.engine.driver import EngineConfig

    transfer.check_request(export, import_, dry_run)

    engine = EngineConfig(backend=backend, workers=workers, device=device, per_gpu=per_gpu,
                          retries=retries)
    picked = [only] if isinstance(only, str) else (list(only) if only else None)
    if dry_run:
        from raudit.campaign.dryrun import dry_plan

        header, jobs = load_jobs(config, picked, dry_run=True)  # no plugin imported or run
        return CampaignPlan(str(header["name"]), dry_plan(jobs, engine))
    if out is None:
        top, _ = cf.load(config)
        out = Path("runs") / f"campaign-{top['name']}"
    if export is not None:
        got = transfer.export_campaign(config, out, export)
        return CampaignExport(Path(got["file"]), list(got["jobs"]), int(got["files"]),
                              int(got["bytes"]))
    if import_ is not None:
        transfer.import_campaign(config, out, import_)
    with _phases(quiet) as progress:
        ran = run_campaign(config, out, engine, progress, notice=_notice(quiet), only=picked,
                           estimate=True)
    return CampaignResult({**ran, "jobs": {name: _in_keywords(r) if isinstance(r, dict) else r
                                           for name, r in ran["jobs"].items()}})


@_in_keyword_words
def report(results: str | Path | AuditResult | UtilityResult | CampaignResult, *,
           out: str | Path = "report", fmt: str = "html", embed: bool = False,
           quiet: bool = False) -> ReportResult:
    """Write the report of a results folder (``raudit report``): verdicts, figures, tables,
    provenance, as one static page. ``results``: a folder or a result object.

    Returns a :class:`ReportResult` (``page``, ``figures``, ``tables``).
    """
    check_arguments(report, locals())  # types first: the command's parser does that for it
    import sys

    from raudit.report.build import build

    folder = (results.out if isinstance(results, (AuditResult, UtilityResult, CampaignResult))
              else results)
    say = (lambda m: None) if quiet else (lambda m: print(f"warning: {m}", file=sys.stderr))
    r = build(Path(folder), Path(out), fmt=fmt, embed=embed, notice=say)
    return ReportResult(Path(r["page"]), list(r["sections"]), [Path(f) for f in r["figures"]],
                        [Path(t) for t in r["tables"]])
