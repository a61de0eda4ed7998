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
from typing import Any

from raudit.campaign import fields
from raudit.campaign.config import JobSpec
from raudit.errors import ConfigError, RauditError

# The command line's generator shortcuts (--preset, --teachers, --lambda, --max-iter),
# accepted as job keys and turned into options exactly as `raudit audit` does.
SHORTCUTS = {"preset": "preset", "teachers": "teachers", "lam": "lam", "max_iter": "max_iter"}
UTILITY_SWEEPS = ("eps", "teachers", "presets", "conditional")
UTILITY_TUPLES = ("epsilons", "teachers", "presets", "conditional", "classifiers", "settings")
INSPECT_KEYS = ("impl", "dataset", "label", "bounds", "options", "epsilon", "delta", "seed",
                "iterations", "preset", "teachers", "lam", "max_iter", "probes")
INSPECT_RUNNER = "raudit.runs.inspect:run_inspect_job"  # a plain function of (settings, folder)


def _key_of(message: str, settings: dict) -> str | None:
    """The setting a validation message is about (the longest key it mentions)."""
    hits = [k for k in settings
            if re.search(rf"(?<![\w-])(--)?({re.escape(k)}|{re.escape(k.replace('_', '-'))})(?![\w-])",
                         message)]
    if hits:
        return max(hits, key=len)
    # "unknown generator 'x'", "unknown dataset 'y'": the message quotes the value
    quoted = [k for k, v in settings.items() if isinstance(v, str) and repr(v) in message]
    return quoted[0] if quoted else None


def _fail(job: JobSpec, exc: Exception, key: str | None = None) -> ConfigError:
    msg = " ".join(str(exc).split())
    key = key or _key_of(msg, job.settings)
    where = job.lines.get(key, job.where) if key else job.where
    err = ConfigError(f"{where}: job {job.name}" + (f", key {key!r}" if key else "") + f": {msg}")
    err.key = key  # build_all sets it aside to find the next
    return err


def _unknown(job: JobSpec, known: set[str]) -> None:
    for key in job.settings:
        if key not in known:
            raise _fail(job, ConfigError(f"unknown {job.kind} setting {key!r}; known: "
                                         f"{', '.join(sorted(known))}"), key)


def audit_request(job: JobSpec, chunk_size: int | None = None):
    from raudit.audit.runner import AuditRequest
    from raudit.generators.kwargs import generator_kwargs

    known = {f.name for f in dataclasses.fields(AuditRequest)} | set(SHORTCUTS)
    _unknown(job, known)
    s = dict(job.settings)
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


def utility_request(job: JobSpec):
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


def inspect_runner():
    """Issue 12's plain function for an inspect job, or a ConfigError saying it is missing."""
    module, _, attr = INSPECT_RUNNER.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        raise ConfigError("inspect jobs need raudit inspect (issue 12), which this raudit "
                          "does not have") from None


def build(job: JobSpec, chunk_size: int | None = None):
    """The job object of one expanded job, or a ConfigError naming the key and line."""
    from raudit.runs import jobs as jb
    from raudit.runs.utility_job import UtilityJob

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
    except ConfigError as exc:
        if str(exc).startswith(job.where.split(":")[0] + ":"):
            raise  # already located
        raise _fail(job, exc) from None
    except (RauditError, TypeError, ValueError) as exc:
        raise _fail(job, exc) from None


def _job_errors(spec: JobSpec, chunk_size: int | None) -> tuple[Any, list[str]]:
    """The job, or every error of it: each error's key is set aside (its default taken)
    and the job built again, until it builds or an error names no key of the job."""
    errors: list[str] = []
    settings = dict(spec.settings)
    while True:
        try:
            job = build(dataclasses.replace(spec, settings=settings), chunk_size)
            return (None if errors else job), errors
        except ConfigError as exc:
            errors.append(str(exc))
            key = getattr(exc, "key", None)
            if key not in settings:
                return None, errors
            del settings[key]


def build_all(specs: list[JobSpec], chunk_sizes: dict[str, int] | None = None) -> list:
    """Every job, or one ConfigError listing every error of every job (each with key and
    line), so one run of ``--dry-run`` shows them all."""
    out, errors = [], []
    for spec in specs:
        job, found = _job_errors(spec, (chunk_sizes or {}).get(spec.name))
        if job is not None:
            out.append(job)
        errors += found
    if errors:
        head = f"{len(errors)} error(s) in the campaign:" if len(errors) > 1 else ""
        raise ConfigError((head + "\n  " + "\n  ".join(errors)) if head else errors[0])
    return out


@dataclasses.dataclass
class InspectJob:
    """A training inspection (issue 12): run once, in the driver, into
    ``OUT/inspect/job=<name>/`` (its own folder layout)."""

    name: str
    settings: dict
    runner: Any
    kind: str = "inspect"

    def planned_models(self) -> int:
        return 1

    def run(self, out) -> dict[str, Any]:
        folder = out / "inspect" / f"job={self.name}"
        return self.runner(self.settings, folder) or {}
