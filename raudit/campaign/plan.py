"""From expanded job settings to validated jobs, with errors that name the key and line.

Each job's settings become the value object the command line builds
(:class:`AuditRequest`, :class:`UtilityRequest`), so a campaign is checked by the
same code, before any work: an unknown key, a bad value, an option the generator
does not take, a dataset that does not load. Every error is collected, so one run
of ``raudit campaign --dry-run`` lists them all.
"""

from __future__ import annotations

import dataclasses
import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from raudit.campaign import fields
from raudit.campaign.config import JobSpec
from raudit.errors import ConfigError, DataUnavailable, RauditError
from raudit.runs.threats import reads_models

if TYPE_CHECKING:
    from raudit.audit.runner import AuditRequest
    from raudit.runs.jobs import AuditJob
    from raudit.runs.utility_job import UtilityJob
    from raudit.utility.plan import UtilityRequest

# The command line's generator shortcuts (--preset, --teachers, --lambda, --max-iter),
# accepted as job keys and turned into options exactly as `raudit audit` does.
SHORTCUTS = {"preset": "preset", "teachers": "teachers", "lam": "lam", "max_iter": "max_iter"}
UTILITY_SWEEPS = ("eps", "teachers", "presets", "conditional")
UTILITY_TUPLES = ("epsilons", "teachers", "presets", "conditional", "classifiers", "settings")
INSPECT_KEYS = ("impl", "dataset", "label", "bounds", "options", "epsilon", "delta", "seed",
                "iterations", "preset", "teachers", "lam", "max_iter", "probes")
INSPECT_RUNNER = "raudit.runs.inspect:run_inspect_job"  # a plain function of (settings, folder)


def _key_of(message: str, settings: dict[str, Any]) -> str | None:
    """The setting a validation message is about (the longest key it mentions)."""
    hits = [k for k in settings
            if re.search(rf"(?<![\w-])(--)?({re.escape(k)}|{re.escape(k.replace('_', '-'))})(?![\w-])",
                         message)]
    if hits:
        return max(hits, key=len)
    # "unknown generator 'x'", "unknown dataset 'y'": the message quotes the value
    quoted = [k for k, v in settings.items() if isinstance(v, str) and repr(v) in message]
    return quoted[0] if quoted else None


class JobError(ConfigError):
    """A job's error located at its line; ``key``: the setting it is about (None: the job),
    which build_all sets aside to find the job's next error."""

    def __init__(self, message: str, key: str | None) -> None:
        super().__init__(message)
        self.key = key


def _fail(job: JobSpec, exc: Exception, key: str | None = None) -> JobError:
    msg = " ".join(str(exc).split())
    key = key or _key_of(msg, job.settings)
    where = job.lines.get(key, job.where) if key else job.where
    return JobError(f"{where}: job {job.name}" + (f", key {key!r}" if key else "") + f": {msg}",
                    key)


def _unknown(job: JobSpec, known: set[str]) -> None:
    for key in job.settings:
        if key not in known:
            raise _fail(job, ConfigError(f"unknown {job.kind} setting {key!r}; known: "
                                         f"{', '.join(sorted(known))}"), key)


def _audit_settings(job: JobSpec) -> dict[str, Any]:
    """An audit job's settings checked for unknown keys, its ``threat_model`` made the
    request's ``white_box`` (a job names its threat model as `raudit audit
    --threat-model` does; the registry says what that makes of the request)."""
    known = ({f.name for f in dataclasses.fields(_audit_request_class())} - {"white_box"}
             | set(SHORTCUTS) | {"threat_model"})
    _unknown(job, known)
    s = dict(job.settings)
    if "threat_model" in s:
        name = s.pop("threat_model")
        if not isinstance(name, str):
            raise _fail(job, ConfigError(f"threat_model must be text, got {name!r:.80}"),
                        "threat_model")
        try:
            s["white_box"] = reads_models(name)
        except ConfigError as exc:
            raise _fail(job, exc, "threat_model") from None
    return s


def audit_request(job: JobSpec, chunk_size: int | None = None) -> AuditRequest:
    from raudit.audit.runner import AuditRequest
    from raudit.generators.kwargs import generator_kwargs

    s = _audit_settings(job)
    if s.get("chunk_size") == "auto":
        s["chunk_size"] = chunk_size or 100
    short = {k: s.pop(k) for k in list(s) if k in SHORTCUTS}
    impl = s.get("impl", "paper")
    if short:
        try:
            opts = generator_kwargs(impl, preset=short.get("preset"), teachers=short.get("teachers"),
                                    lam=short.get("lam"), max_iter=short.get("max_iter"),
                                    device=None, options=None)
        except RauditError as exc:
            raise _fail(job, exc, next((k for k in short if k in str(exc) or
                                        SHORTCUTS[k] in str(exc)), None)) from None
        s["options"] = {**opts, **(s.get("options") or {})}
    fields.check(AuditRequest, s)
    return AuditRequest(**s)


def utility_request(job: JobSpec) -> UtilityRequest:
    from raudit.utility import plan

    known = {f.name for f in dataclasses.fields(plan.UtilityRequest)} | {"sweep"}
    _unknown(job, known)
    s = dict(job.settings)
    sweep = s.pop("sweep", None) or []
    sweep = [sweep] if isinstance(sweep, str) else list(sweep)
    bad = [x for x in sweep if x not in UTILITY_SWEEPS]
    if bad:
        raise _fail(job, ConfigError(f"sweep takes {', '.join(UTILITY_SWEEPS)}; got {bad}"), "sweep")
    for key in UTILITY_TUPLES:
        if key in s and not isinstance(s[key], (list, tuple)):
            s[key] = [s[key]]
        if key in s:
            s[key] = tuple(s[key])
    if "eps" in sweep:
        s["epsilons"] = plan.STUDY_EPSILONS
    if "teachers" in sweep:
        s["teachers"] = tuple(f"N/{r}" for r in plan.STUDY_TEACHER_RATIOS)
    if "presets" in sweep:
        s["presets"] = ("default", "paper")
    if "conditional" in sweep:
        s["conditional"] = (False, True)
    if "epsilons" in s:
        s["epsilons"] = tuple(float(e) for e in s["epsilons"])
    if "teachers" in s:
        s["teachers"] = tuple(str(t) for t in s["teachers"])
    fields.check(plan.UtilityRequest, s)
    return plan.UtilityRequest(**s)


#: an inspect job's plain function of (settings, folder): its short JSON-ready summary
InspectRunner = Callable[[dict[str, Any], Path], "dict[str, Any] | None"]


def inspect_runner() -> InspectRunner:
    """Issue 12's plain function for an inspect job, or a ConfigError saying it is missing."""
    module, _, attr = INSPECT_RUNNER.partition(":")
    try:
        runner: InspectRunner = getattr(importlib.import_module(module), attr)
        return runner
    except (ImportError, AttributeError):
        raise ConfigError("inspect jobs need raudit inspect (issue 12), which this raudit "
                          "does not have") from None


def is_plugin(impl: object) -> bool:
    """Whether ``impl`` names a generator by where its code is (``exec:CONFIG``, a program;
    ``module:Class``, a module to import) rather than a registered name."""
    from raudit.generators import GENERATORS

    return isinstance(impl, str) and ":" in impl and impl not in GENERATORS


@dataclasses.dataclass(frozen=True)
class PluginPlan:
    """A dry run's stand-in for a job whose generator is a plugin: its settings checked as a
    run checks them, its code neither imported nor run (a dry run runs nothing of the
    user's; a module's import runs its code, an exec: program is the user's code)."""

    name: str
    kind: str
    impl: str
    dataset: str
    epsilon: float
    models: int  # the job's models or fits (an audit's target selection not counted)


def _check_plugin_reference(impl: str) -> None:
    """What can be checked of a plugin without running it: an exec: config's JSON and its
    program's presence; a module's presence (its top-level package, found, not imported)."""
    import importlib.util

    if impl.startswith("exec:"):
        from raudit.generators.exec_adapter import read_config

        read_config(impl[len("exec:"):])
        return
    module, _, attr = impl.partition(":")
    top = module.split(".")[0]
    if not top or not attr or importlib.util.find_spec(top) is None:
        raise ConfigError(f"generator plugin {impl!r}: no module {top!r} to import (write it "
                          "module:Class, with the module on PYTHONPATH)")


def plugin_plan(job: JobSpec) -> PluginPlan:
    """:class:`PluginPlan` of a job whose ``impl`` is a plugin (see :func:`is_plugin`)."""
    impl = job.settings["impl"]
    try:
        _check_plugin_reference(impl)
        if job.kind == "audit":
            # the shortcuts become the generator's options: that needs its class, so they
            # are checked when the campaign runs
            audit = _audit_request_class()(**{k: v for k, v in _audit_settings(job).items()
                                              if k not in SHORTCUTS})
            models, eps, dataset = 2 * audit.shadow_models, audit.epsilon, audit.dataset
        else:
            util = utility_request(job)
            points = 1
            for axis in (util.epsilons, util.teachers, util.presets, util.conditional):
                points *= max(1, len(axis))
            models, eps, dataset = util.fits * points, util.epsilons[0], util.dataset
    except DataUnavailable:
        raise  # not an error of the file: build_all skips the job (this machine lacks its data)
    except ConfigError as exc:
        if str(exc).startswith(job.where.split(":")[0] + ":"):
            raise
        raise _fail(job, exc) from None
    except (RauditError, TypeError, ValueError) as exc:
        raise _fail(job, exc) from None
    # an audit's default dataset comes from its attack
    return PluginPlan(job.name, job.kind, impl, str(dataset or "(the attack's)"), float(eps),
                      int(models))


def _audit_request_class() -> type[AuditRequest]:
    from raudit.audit.runner import AuditRequest

    return AuditRequest


def build(job: JobSpec, chunk_size: int | None = None, dry_run: bool = False
          ) -> Built:
    """The job object of one expanded job, or a ConfigError naming the key and line.
    ``dry_run``: a job whose generator is a plugin becomes a :class:`PluginPlan`."""
    from raudit.runs import jobs as jb
    from raudit.runs.utility_job import UtilityJob

    if dry_run and job.kind in ("audit", "utility") and is_plugin(job.settings.get("impl")):
        return plugin_plan(job)
    try:
        if job.kind == "audit":
            made = jb.AuditJob(job.name, audit_request(job, chunk_size))
            made.auto_chunk = job.settings.get("chunk_size") == "auto"
            return made
        if job.kind == "utility":
            return UtilityJob(job.name, utility_request(job))
        _unknown(job, set(INSPECT_KEYS))
        from raudit.inspect.job import InspectRequest, request_from_settings
        req = request_from_settings(dict(job.settings))  # validate now, with the job's line
        fields.check(InspectRequest, dataclasses.asdict(req))
        return InspectJob(job.name, dict(job.settings), inspect_runner())
    except DataUnavailable:
        raise  # not an error of the file: build_all skips the job (this machine lacks its data)
    except ConfigError as exc:
        if str(exc).startswith(job.where.split(":")[0] + ":"):
            raise  # already located
        raise _fail(job, exc) from None
    except (RauditError, TypeError, ValueError) as exc:
        raise _fail(job, exc) from None


def _job_errors(spec: JobSpec, chunk_size: int | None, dry_run: bool = False
                ) -> tuple[Built | None, list[str]]:
    """The job, or every error of it: each error's key is set aside (its default taken)
    and the job built again, until it builds or an error names no key of the job. A job
    whose dataset is not on this machine raises :class:`DataUnavailable` (if it has no
    other error)."""
    errors: list[str] = []
    settings = dict(spec.settings)
    while True:
        try:
            job = build(dataclasses.replace(spec, settings=settings), chunk_size, dry_run)
            return (None if errors else job), errors
        except DataUnavailable:
            if errors:
                return None, errors
            raise
        except ConfigError as exc:
            errors.append(str(exc))
            key = exc.key if isinstance(exc, JobError) else None
            if key is None or key not in settings:
                return None, errors
            del settings[key]


def build_all(specs: list[JobSpec], chunk_sizes: dict[str, int] | None = None,
              dry_run: bool = False, skipped: list[Skipped] | None = None) -> list[Built]:
    """Every job, or one ConfigError listing every error of every job (each with key and
    line), so one run of ``--dry-run`` shows them all; ``dry_run``: plugins are planned
    from their settings, never imported or run (:func:`build`).

    A job whose dataset this machine does not have and cannot fetch is not an error of the
    file (the same campaign runs whole elsewhere): it is appended to ``skipped`` and left
    out. Without a ``skipped`` list, or when every job would be skipped, it is an error."""
    out: list[Built] = []
    errors: list[str] = []
    missing: list[Skipped] = []
    for spec in specs:
        try:
            job, found = _job_errors(spec, (chunk_sizes or {}).get(spec.name), dry_run)
        except DataUnavailable as exc:
            missing.append(Skipped(spec.name, str(spec.settings.get("dataset", "")),
                                   " ".join(str(exc).split())))
            continue
        if job is not None:
            out.append(job)
        errors += found
    if skipped is not None and (out or errors):
        skipped += missing
    else:  # nowhere to say it, or nothing would be left to run: the missing data is an error
        errors += [f"{spec_where(specs, m.job)}: job {m.job}: {m.reason}" for m in missing]
    if errors:
        head = f"{len(errors)} error(s) in the campaign:" if len(errors) > 1 else ""
        raise ConfigError((head + "\n  " + "\n  ".join(errors)) if head else errors[0])
    return out


@dataclasses.dataclass(frozen=True)
class Skipped:
    """A job left out because this machine lacks its dataset: ``reason`` says how to get it."""

    job: str
    dataset: str
    reason: str


def skipped_lines(skipped: list[Skipped]) -> list[str]:
    """One line per missing dataset (not per job): its jobs and how to get the data."""
    by_reason: dict[tuple[str, str], list[str]] = {}
    for s in skipped:
        by_reason.setdefault((s.dataset, s.reason), []).append(s.job)
    return [f"skipped {len(jobs)} job(s) of dataset {dataset or '?'} ({', '.join(jobs)}): "
            f"it is not on this machine: {reason}"
            for (dataset, reason), jobs in by_reason.items()]


def spec_where(specs: list[JobSpec], name: str) -> str:
    return next((s.where for s in specs if s.name == name), "?")


@dataclasses.dataclass
class InspectJob:
    """A training inspection (issue 12): run once, in the driver, into
    ``OUT/inspect/job=<name>/`` (its own folder layout)."""

    name: str
    settings: dict[str, Any]
    runner: InspectRunner
    kind: str = "inspect"

    def planned_models(self) -> int:
        return 1

    def run(self, out: Path) -> dict[str, Any]:
        folder = out / "inspect" / f"job={self.name}"
        return self.runner(self.settings, folder) or {}


#: what :func:`build` makes of one job: a job the schedule runs, an inspect job the driver
#: runs, or (a dry run's) a plugin's plan
Built = Union["AuditJob", "UtilityJob", InspectJob, PluginPlan]
