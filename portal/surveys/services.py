"""Starting, running and judging obdfilter-survey runs of an SSU (DESIGN.md §10).

A survey drives the OSTs where they are mounted now, through ``survey.yml`` on their servers
(both servers of the pair at once, as they share the arrays). It refuses OSTs that are mounted
nowhere, and asks for confirmation when the metrics show clients or traffic on the filesystem:
a survey writes to the targets and loads the servers. What the script printed is kept, parsed
by ``provisioning.survey`` and judged against the pair's plan; every result line is stored.

The survey job kind (``portal.surveys.jobs``) and the provisioning job's acceptance step both
run a survey through ``run_phase`` and ``conclude``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from metrics.influxql.surveys import survey_traffic_statements
from portal import influxdb as influx
from portal.console.choices import Act, ObjectKind
from portal.console.services import Author, Proposal, audit
from portal.health.choices import Status
from portal.health.models import HealthStatus
from portal.health.services.facts import object_key
from portal.inventory.choices import PairKind, TargetKind
from portal.inventory.models import Filesystem, ServerPair, StorageArray, Target
from portal.inventory.services import RowsDisagree, ansible_inventory, pair_plan
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job, enqueue
from portal.surveys import choices
from portal.surveys.choices import Scope, Verdict
from portal.surveys.models import Survey, SurveyResult
from portal.web.numbers import format_rate
from provisioning.runner import PlaybookResult, run_playbook
from provisioning.survey.judge import SurveyVerdict, combine, judge_survey
from provisioning.survey.parse import Result, SurveyParseError, parse_lines

MiB = 1024 * 1024  # obdfilter-survey's "MB"

KIND = "survey"
_TARGET_HEADER = re.compile(r"^==> (?P<label>\S+) <==$")


class SurveyError(ValueError):
    """A survey that cannot start as asked; ``field`` names what to change."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


class ConfirmationNeeded(Exception):
    """The filesystem is in use: the survey starts only when someone confirms these warnings."""

    def __init__(self, warnings: list[str]) -> None:
        super().__init__("; ".join(warnings))
        self.warnings = warnings


# --- what to survey ---------------------------------------------------------------------------


def parameters_of(data: dict) -> dict:
    """The script's parameters from a form or an API body, checked; ``SurveyError`` names the
    first field that is wrong. Missing fields take the acceptance survey's values."""
    values = {**choices.ACCEPTANCE, **{k: v for k, v in data.items() if v not in (None, "")}}
    parameters: dict = {}
    for name in ("size_mb", "rsz_lo_kib", "rsz_hi_kib", "obj_lo", "obj_hi", "thr_lo", "thr_hi"):
        try:
            parameters[name] = int(values[name])
        except (TypeError, ValueError):
            raise SurveyError(name, f"{name}: {values[name]!r} is not a whole number") from None
    if not 1 <= parameters["size_mb"] <= 1_048_576:
        raise SurveyError("size_mb", "size_mb: give between 1 and 1048576 MB per OST")
    for name in ("obj_lo", "obj_hi", "thr_lo", "thr_hi"):
        if parameters[name] not in choices.POWERS:
            raise SurveyError(name, f"{name}: give a power of two from 1 to 1024")
    for name in ("rsz_lo_kib", "rsz_hi_kib"):
        if parameters[name] not in choices.RECORD_SIZES_KIB:
            sizes = ", ".join(str(size) for size in choices.RECORD_SIZES_KIB)
            raise SurveyError(name, f"{name}: give one of {sizes} KiB")
    for low, high in (("rsz_lo_kib", "rsz_hi_kib"), ("obj_lo", "obj_hi"), ("thr_lo", "thr_hi")):
        if parameters[low] > parameters[high]:
            raise SurveyError(high, f"{high}: must be at least {low} ({parameters[low]})")
    if parameters["obj_hi"] > parameters["thr_hi"]:
        raise SurveyError(
            "obj_hi",
            "obj_hi: at most thr_hi; the script skips combinations whose threads are not a "
            "multiple of the objects",
        )
    tests = values["tests"]
    if isinstance(tests, str):
        tests = tests.split()
    if not isinstance(tests, list | tuple) or not tests:
        raise SurveyError("tests", "tests: choose at least write")
    unknown = [test for test in tests if test not in choices.TESTS]
    if unknown:
        raise SurveyError("tests", f"tests: {unknown[0]!r} is not one of write, rewrite, read")
    if "write" not in tests:
        raise SurveyError("tests", "tests: write must run first: it creates what the others read")
    if "read" not in tests:
        raise SurveyError("tests", "tests: read is needed: the verdict judges write and read")
    parameters["tests"] = [test for test in choices.TESTS if test in tests]
    parameters["per_target"] = _boolean(values["per_target"])
    try:
        tolerance = float(values["tolerance"])
    except (TypeError, ValueError):
        raise SurveyError("tolerance", "tolerance: give a fraction such as 0.9") from None
    if tolerance > 1:
        tolerance /= 100
    if not 0.5 <= tolerance <= 1:
        raise SurveyError("tolerance", "tolerance: give between 0.5 and 1 (50 % to 100 %)")
    parameters["tolerance"] = tolerance
    return parameters


def _boolean(value) -> bool:
    if isinstance(value, str):
        return value.lower() in ("1", "true", "on", "yes")
    return bool(value)


def osts_of(pair: ServerPair):
    return Target.objects.filter(
        volume_group__array__pair=pair, kind=TargetKind.OST
    ).select_related("current_server", "primary_server")


def targets_to_survey(
    pair: ServerPair, scope: str, server: str | None = None, labels: list[str] | None = None
) -> dict[str, list[Target]]:
    """The OSTs a survey drives, by the server they are mounted on now. Refuses (naming the
    field) an OSS or an OST that is not the pair's, and OSTs that are mounted nowhere."""
    if pair.kind != PairKind.OSS:
        raise SurveyError("ssu", f"ssu: {pair.name} is an MDS pair; surveys drive OSTs")
    osts = list(osts_of(pair))
    if scope == Scope.SSU:
        chosen = osts
    elif scope == Scope.SERVER:
        hostnames = sorted(pair.servers.values_list("hostname", flat=True))
        if server not in hostnames:
            raise SurveyError("server", f"server: choose {' or '.join(hostnames)}")
        chosen = [t for t in osts if t.current_server and t.current_server.hostname == server]
        if not chosen:
            raise SurveyError("server", f"server: {server} has no OST mounted now")
    elif scope == Scope.TARGETS:
        by_label = {t.label: t for t in osts}
        unknown = [label for label in labels or [] if label not in by_label]
        if unknown:
            raise SurveyError("targets", f"targets: {unknown[0]} is not an OST of {pair.name}")
        if not labels:
            raise SurveyError("targets", "targets: choose at least one OST")
        chosen = [by_label[label] for label in sorted(set(labels))]
    else:
        raise SurveyError("scope", "scope: choose ssu, server or targets")
    if not chosen:
        raise SurveyError("ssu", f"ssu: {pair.name} has no OST")
    unmounted = [t.label for t in chosen if t.current_server is None]
    if unmounted:
        field = "targets" if scope == Scope.TARGETS else "scope"
        raise SurveyError(
            field,
            f"{field}: {', '.join(unmounted)} {'is' if len(unmounted) == 1 else 'are'} not "
            "mounted on any server: obdfilter-survey writes through a mounted target only",
        )
    by_server: dict[str, list[Target]] = {}
    for target in chosen:
        by_server.setdefault(target.current_server.hostname, []).append(target)
    return by_server


def usage_warnings(pair_or_filesystem: ServerPair | Filesystem) -> list[str]:
    """Why a survey now would compete with users: clients connected or traffic in the last
    minutes, as the metrics say. Metrics that cannot be read are a warning as well."""
    fs = getattr(pair_or_filesystem, "filesystem", pair_or_filesystem)
    filesystem = fs.name
    minutes = choices.TRAFFIC_WINDOW_SECONDS // 60
    try:
        traffic, exports = influx.query_tagged(
            survey_traffic_statements(filesystem, choices.TRAFFIC_WINDOW_SECONDS), epoch="s"
        )
    except influx.InfluxError as error:
        return [
            f"the metrics cannot be read ({str(error)[:120] or type(error).__name__}), so "
            f"nobody can tell whether clients are using {filesystem}"
        ]
    warnings = []
    mdts = fs.targets.filter(kind=TargetKind.MDT).count()
    clients = max((int(p.get("exports") or 0) for p in exports), default=0) - 1 - mdts
    if clients > 0:
        warnings.append(
            f"{clients} client{'s are' if clients != 1 else ' is'} connected to {filesystem}: "
            "their I/O slows down while the survey loads the servers"
        )
    busiest = max(((p.get("read") or 0) + (p.get("write") or 0) for p in traffic), default=0)
    if busiest >= choices.TRAFFIC_WARNING_BYTES_S:
        warnings.append(
            f"{filesystem} moved up to {format_rate(busiest)} in the last {minutes} minutes: "
            "the survey competes with that traffic and measures less than the hardware can do"
        )
    return warnings


# --- starting ---------------------------------------------------------------------------------


def start_survey(
    pair: ServerPair,
    *,
    scope: str = Scope.SSU,
    server: str | None = None,
    labels: list[str] | None = None,
    parameters: dict | None = None,
    author: Author | None = None,
    confirmed: bool = False,
) -> Survey:
    """Check the request and start the survey job with its audit entry; all or nothing.
    ``author``: who asks (the page's user, the API's, or manage.py's; the system otherwise).

    Raises ``SurveyError`` naming the field, or ``ConfirmationNeeded`` with the warnings when
    the filesystem is in use and ``confirmed`` is false.
    """
    author = author or Author.of_command()
    user = author.user if getattr(author.user, "is_authenticated", False) else None
    values = parameters_of(parameters or {})
    by_server = targets_to_survey(pair, scope, server, labels)
    warnings = usage_warnings(pair)
    if warnings and not confirmed:
        raise ConfirmationNeeded(warnings)
    with transaction.atomic():
        survey = new_survey(pair, scope, by_server, values, user, warnings)
        what = {Scope.SSU: f"SSU {pair.name}", Scope.SERVER: server}.get(
            scope, f"{len(survey.labels)} OSTs of {pair.name}"
        )
        job = create_job(
            KIND,
            f"obdfilter-survey of {what}",
            params={"survey": survey.pk},
            pairs=[pair],
            user=user,
        )
        survey.job = job
        survey.save(update_fields=["job"])
        lines = [
            f"OSTs: {', '.join(survey.labels)}",
            f"{values['size_mb']} MB per OST, threads {values['thr_lo']}-{values['thr_hi']}",
        ]
        audit(
            author,
            Act.SURVEY,
            ObjectKind.PAIR,
            pair.name,
            Proposal(job.title, lines, warnings=[f"run anyway: {w}" for w in warnings]),
            job=job,
            details={"survey": survey.pk, "scope": scope},
        )
        enqueue(job)
    return survey


def new_survey(
    pair: ServerPair,
    scope: str,
    by_server: dict[str, list[Target]],
    values: dict,
    user,
    warnings: list[str],
    acceptance: bool = False,
) -> Survey:
    return Survey.objects.create(
        pair=pair,
        scope=scope,
        targets={host: [t.label for t in targets] for host, targets in by_server.items()},
        acceptance=acceptance,
        warnings=warnings,
        created_by=user,
        **values,
    )


# --- running ----------------------------------------------------------------------------------


def run_phase(survey: Survey, phase: str, say: Callable[[str], None], write) -> PlaybookResult:
    """Run ``survey.yml`` in ``phase`` (check, run, targets) on the survey's servers."""
    mountpoints = dict(
        Target.objects.filter(
            label__in=survey.labels, filesystem=survey.pair.filesystem
        ).values_list("label", "mount_point")
    )
    variables = {
        "ostara_survey_phase": phase,
        "ostara_survey": {
            **survey.parameters,
            "servers": {
                host: [{"label": label, "mountpoint": mountpoints[label]} for label in labels]
                for host, labels in survey.targets.items()
            },
        },
    }
    say(f"survey.yml ({phase}) on {', '.join(survey.servers)}")
    return run_playbook(
        "survey.yml",
        ansible_inventory([survey.pair], settings.VIRTUAL_RACK),
        variables,
        work_dir=settings.ANSIBLE_WORK_DIR,
        on_output=write,
    )


def check(survey: Survey, say, write) -> None:
    result = run_phase(survey, "check", say, write)
    say(result.summary())
    if not result.succeeded:
        raise StepFailed(
            f"{result.summary()}: an OST is not mounted where the portal thinks (see the output)"
        )
    say(f"{len(survey.labels)} OSTs are set up on {', '.join(survey.servers)}")


def _run_or_fail(survey: Survey, phase: str, say, write) -> PlaybookResult:
    result = run_phase(survey, phase, say, write)
    say(result.summary())
    if not result.succeeded:
        raise StepFailed(result.summary())
    return result


def _keep_output(survey: Survey, key: str, value: dict[str, str]) -> None:
    """What the script printed in one phase, saved with the survey before it is judged."""
    survey.output = {**survey.output, key: value}
    Survey.objects.filter(pk=survey.pk).update(output=survey.output)


def measure(survey: Survey, say, write) -> None:
    """The load curve of every server's OSTs together."""
    facts = _run_or_fail(survey, "run", say, write).facts
    _keep_output(
        survey,
        "servers",
        {host: facts.get(host, {}).get("survey_output", "") for host in survey.servers},
    )


def measure_targets(survey: Survey, say, write) -> None:
    """Each OST alone at the highest thread count."""
    if not survey.per_target:
        say("each OST alone: not asked for")
        return
    facts = _run_or_fail(survey, "targets", say, write).facts
    alone: dict[str, str] = {}
    for host in survey.servers:
        alone.update(split_by_target(facts.get(host, {}).get("survey_target_output", "")))
    _keep_output(survey, "targets", alone)


def split_by_target(text: str) -> dict[str, str]:
    """The per-OST outputs of the targets phase, split on their ``==> LABEL <==`` headers."""
    outputs: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        header = _TARGET_HEADER.match(line.strip())
        if header:
            current = outputs.setdefault(header["label"], [])
        elif current is not None:
            current.append(line)
    return {label: "\n".join(lines) + "\n" for label, lines in outputs.items()}


# --- judging ----------------------------------------------------------------------------------


def _parse(where: str, text: str) -> list[Result]:
    try:
        return parse_lines(text.splitlines())
    except SurveyParseError as error:
        raise StepFailed(f"the survey output of {where} cannot be read: {error}") from None


@transaction.atomic
def conclude(survey: Survey) -> Survey:
    """Parse what the servers printed, judge it against the plan, store every line."""
    outputs = survey.output or {}
    per_server = {
        host: _parse(host, outputs.get("servers", {}).get(host, "")) for host in survey.servers
    }
    per_target = {
        label: _parse(label, text) for label, text in (outputs.get("targets") or {}).items()
    }
    if survey.per_target:  # an OST the targets phase printed nothing for is a reason too
        for label in survey.labels:
            per_target.setdefault(label, [])
    try:
        plan = pair_plan(survey.pair)
    except RowsDisagree as error:
        raise StepFailed(f"no plan to judge the survey against: {error}") from None
    verdict = judge_survey(plan, per_server, per_target, survey.tolerance)
    host_of = {label: host for host, labels in survey.targets.items() for label in labels}
    rows: list[SurveyResult] = []
    for host, results in per_server.items():
        rows += _rows(survey, results, server=host)
    rows += _rows(survey, combine(per_server), server="")
    for label, results in per_target.items():
        rows += _rows(survey, results, server=host_of.get(label, ""), target=label)
    survey.results.all().delete()
    SurveyResult.objects.bulk_create(rows)
    survey.verdict = Verdict.PASS if verdict.passed else Verdict.FAIL
    survey.reasons = verdict.reasons + (
        [] if verdict.passed else hardware_behind(survey, verdict, host_of)
    )
    survey.expected_mb_s = verdict.total.expected_mb_s
    survey.measured_mb_s = verdict.total.measured_mb_s
    survey.finished = timezone.now()
    survey.save(update_fields=["verdict", "reasons", "expected_mb_s", "measured_mb_s", "finished"])
    return survey


# An array's reasons that say nothing of its hardware (no sensor yet, a job acting on it).
_NOT_HARDWARE = ("its state is unknown", "not in service", "moving (job", "being built (job")


def hardware_behind(survey: Survey, verdict: SurveyVerdict, host_of: dict[str, str]) -> list[str]:
    """What explains a failing survey: the arrays that hold the slow OSTs (the inventory's
    volume groups), with what the health engine found wrong with them (a failed controller, a
    failed drawer, a degraded group), one sentence per array. The slow OSTs are those slow
    alone; else those of the slow servers; else all surveyed."""
    slow = sorted(label for label, reasons in verdict.targets.items() if reasons)
    adjective, whose = "slow ", ""
    if not slow:
        hosts = sorted(host for host, judged in verdict.servers.items() if not judged.passed)
        slow = sorted(label for label, host in host_of.items() if host in hosts or not hosts)
        adjective, whose = "", f" of {' and '.join(hosts)}" if hosts else ""
    on_array: dict[StorageArray, list[str]] = {}
    for target in Target.objects.filter(
        filesystem=survey.pair.filesystem, label__in=slow
    ).select_related("volume_group__array"):
        on_array.setdefault(target.volume_group.array, []).append(target.label)
    found = {
        row.key: row
        for row in HealthStatus.objects.filter(key__in=[object_key(a) for a in on_array])
    }
    sentences = []
    for array, labels in sorted(on_array.items(), key=lambda item: item[0].name):
        health = found.get(object_key(array))
        if health is None or health.status in (Status.GREEN, Status.GREY):
            continue
        problems = [r for r in health.reasons if not r.startswith(_NOT_HARDWARE)]
        if not problems:
            continue
        labels.sort()
        shown = ", ".join(labels[:3]) + (f" and {len(labels) - 3} more" if len(labels) > 3 else "")
        many = len(labels) > 1
        sentences.append(
            f"The {adjective}OST{'s' if many else ''} {shown}{whose} {'are' if many else 'is'} "
            f"on array {array.name}, where " + "; ".join(problems)
        )
    return sentences


def _rows(survey: Survey, results: list[Result], *, server: str, target: str = "") -> list:
    rows = []
    for result in results:
        for test, figures in result.tests.items():
            rows.append(
                SurveyResult(
                    survey=survey,
                    server=server,
                    target=target,
                    line=result.line,
                    ost=result.ost,
                    sz_kib=result.sz_kib,
                    rsz_kib=result.rsz_kib,
                    obj=result.obj,
                    thr=result.thr,
                    test=test,
                    mb_s=figures["mb_s"],
                    min_mb_s=figures.get("min"),
                    max_mb_s=figures.get("max"),
                    flag=figures.get("flag", ""),
                )
            )
    return rows


def mark_unfinished(survey: Survey, message: str) -> None:
    """A survey whose job stopped before a verdict: say so, keep what it printed."""
    Survey.objects.filter(pk=survey.pk, verdict=Verdict.PENDING).update(
        verdict=Verdict.ERROR, reasons=[message], finished=timezone.now()
    )


def outcome(survey: Survey) -> str:
    """One sentence for the job page: accepted at X (expected Y), or what fell short."""
    what = f"SSU {survey.pair.name}" if survey.scope == Scope.SSU else f"survey #{survey.pk}"
    judged = [survey.measured_mb_s[t] for t in ("write", "read") if t in survey.measured_mb_s]
    measured = min(judged, default=None)
    figures = (
        # obdfilter-survey's "MB/s" are MiB/s (sizes in MB of 1024 KiB).
        f"{format_rate(measured * MiB)} (expected {format_rate(survey.expected_mb_s * MiB)})"
        if measured is not None and survey.expected_mb_s
        else "no figure"
    )
    if survey.verdict == Verdict.PASS:
        verb = "accepted" if survey.scope == Scope.SSU else "passed"
        return f"{what} {verb} at {figures}"
    return f"{what} failed at {figures}: " + "; ".join(survey.reasons)


def job_survey(job: Job) -> Survey:
    try:
        return Survey.objects.select_related("pair__filesystem").get(pk=job.params["survey"])
    except (KeyError, Survey.DoesNotExist):
        raise StepFailed("this job has no survey (it was deleted)") from None
