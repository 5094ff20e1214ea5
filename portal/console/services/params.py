"""Lustre parameters across a filesystem's servers: read (``lctl get_param``), set until the
next restart on chosen servers (``lctl set_param``) or for good through the MGS
(``lctl set_param -P``), and put back as they were from the audit entry of a change.

A read asked for by a page or the API is a short job (``request_reading``): the request answers
at once with the reading under way, or with the last one while it is fresh; each user starts a
few a minute at most. A playbook on every server takes seconds, which a request must not wait.

Names are checked against the way Lustre writes them and values against shell syntax before
anything reaches a playbook; the playbook passes them as argv, never through a shell.
"""

from __future__ import annotations

import math
import re
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from portal.console.choices import (
    KIND_READ_PARAM,
    KIND_SET_PARAM,
    PARAM_NAME_RE,
    PARAM_VALUE_RE,
    SHELL_CHARACTERS,
    Act,
    ObjectKind,
)
from portal.console.models import AuditEntry, ParameterReading
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Proposal,
    Say,
    audit,
    not_an_option,
)
from portal.inventory.choices import TargetKind
from portal.inventory.models import Filesystem, Server, ServerPair, Target
from portal.inventory.services import ansible_inventory
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job, enqueue
from provisioning.runner import PlaybookResult, run_playbook

# `- { index: 3, event: set_param, device: general, param: osc.*.max_rpcs_in_flight, value: 16 }`
_LLOG_RE = re.compile(r"param:\s*(?P<param>[^,}\s]+)\s*,\s*value:\s*(?P<value>[^,}\s]*)")


def check_name(name: str) -> str:
    name = (name or "").strip()
    if not name:
        raise ConsoleError("name", "name the parameter, e.g. osc.*.max_rpcs_in_flight")
    not_an_option("name", name)
    if not PARAM_NAME_RE.fullmatch(name) or ".." in name:
        raise ConsoleError(
            "name",
            f"{name!r} is not a parameter name as lctl writes it: dot-separated parts of "
            "letters, digits, '_' and '-', with '*', '?' or '[...]' as wildcards "
            "(e.g. osc.*.max_rpcs_in_flight)",
        )
    return name


def check_value(value: str) -> str:
    value = (value or "").strip()
    if not value:
        raise ConsoleError("value", "give the new value")
    bad = sorted({c for c in value if c in SHELL_CHARACTERS})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        raise ConsoleError("value", f"{value!r} contains {shown}: no shell metacharacters")
    if not PARAM_VALUE_RE.fullmatch(value):
        raise ConsoleError("value", f"{value!r} is not a value lctl takes")
    return value


def servers_of(filesystem: Filesystem) -> list[Server]:
    return list(
        Server.objects.filter(pair__filesystem=filesystem)
        .select_related("pair")
        .order_by("pair__kind", "hostname")
    )


def mgs_server(filesystem: Filesystem) -> Server | None:
    """Where the MGS runs now (``set_param -P`` goes there)."""
    mgt = (
        Target.objects.filter(filesystem=filesystem, kind=TargetKind.MGT)
        .select_related("current_server", "primary_server")
        .first()
    )
    if mgt is None:
        return None
    return mgt.current_server or mgt.primary_server


def parse_get_param(text: str) -> dict[str, str]:
    """``name=value`` lines of lctl get_param; a multi-line value (``name=`` then lines) is
    kept with its lines joined by "; "."""
    found: dict[str, str] = {}
    current = None
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        if sep and name and " " not in name and not line.startswith(" "):
            current = name
            found[name] = value
        elif current is not None and line.strip():
            found[current] = "; ".join(p for p in (found[current], line.strip()) if p)
    return found


def _run(filesystem: Filesystem, hosts: list[str], variables: dict, say=None, write=None):
    pairs = list(ServerPair.objects.filter(filesystem=filesystem))
    variables["ostara_params"]["hosts"] = hosts
    if say:
        say(f"params.yml ({variables['ostara_params']['phase']}) on {', '.join(hosts)}")
    return run_playbook(
        "params.yml",
        ansible_inventory(pairs, settings.VIRTUAL_RACK),
        variables,
        work_dir=settings.ANSIBLE_WORK_DIR,
        on_output=write or (lambda _text: None),
    )


def read(
    filesystem: Filesystem, name: str, hosts: list[str] | None = None, say=None, write=None
) -> ParameterReading:
    """lctl get_param on the servers, now (the job's step, and a change's check): an unsaved
    reading, host → {full name: value}."""
    name = check_name(name)
    hosts = hosts or [server.hostname for server in servers_of(filesystem)]
    result = _run(filesystem, hosts, {"ostara_params": {"phase": "get", "name": name}}, say, write)
    reading = ParameterReading(filesystem=filesystem.name, name=name, values={}, errors={})
    for host in hosts:
        facts = result.facts.get(host)
        if facts is None:
            reading.errors[host] = (
                "did not answer"
                if host in result.unreachable or host in result.failed
                else "no answer"
            )
            continue
        found = parse_get_param(facts.get("param_output", ""))
        if found:
            reading.values[host] = found
        else:
            reading.errors[host] = (
                (facts.get("param_error") or "no such parameter").strip().splitlines()[-1]
            )
    return reading


class ReadsTooOften(ConsoleError):
    """The user started as many reads as a minute allows; ``retry_after`` seconds to wait."""

    def __init__(self, limit: int, retry_after: int) -> None:
        super().__init__(
            "name",
            f"{limit} parameter reads a minute at most: the last ones are shown while "
            f"fresh; ask again in {retry_after} s",
        )
        self.retry_after = retry_after


def request_reading(filesystem: Filesystem, name: str, author: Author) -> ParameterReading:
    """The parameter on every server of the filesystem: the latest reading while it is under
    way or fresh (``OSTARA_PARAM_READ_FRESH_SECONDS``), else a new one started as a job. A user
    starts ``OSTARA_PARAM_READS_PER_MINUTE`` at most (``ReadsTooOften``)."""
    name = check_name(name)
    latest = (
        ParameterReading.objects.filter(filesystem=filesystem.name, name=name)
        .select_related("job")
        .first()
    )
    if latest is not None and (
        not latest.finished or latest.age_seconds < settings.OSTARA_PARAM_READ_FRESH_SECONDS
    ):
        return latest
    user = author.user if getattr(author.user, "is_authenticated", False) else None
    if user is not None:
        _check_rate(user)
    hosts = [server.hostname for server in servers_of(filesystem)]
    if not hosts:
        raise ConsoleError("filesystem", f"{filesystem.name} has no servers to read it on")
    with transaction.atomic():
        # Not on the pairs: a read must not hold up a failover (one act at a time per pair).
        job = create_job(
            KIND_READ_PARAM,
            f"Read {name} on the servers of {filesystem.name}",
            params={"filesystem": filesystem.name, "name": name, "hosts": hosts},
            user=user,
        )
        reading = ParameterReading.objects.create(job=job, filesystem=filesystem.name, name=name)
        enqueue(job)
    return reading


def _check_rate(user) -> None:
    limit = settings.OSTARA_PARAM_READS_PER_MINUTE
    since = timezone.now() - timedelta(minutes=1)
    started = list(
        Job.objects.filter(kind=KIND_READ_PARAM, created_by=user, created__gte=since)
        .order_by("-created")
        .values_list("created", flat=True)[:limit]
    )
    if len(started) >= limit:
        wait = (started[-1] + timedelta(minutes=1) - timezone.now()).total_seconds()
        raise ReadsTooOften(limit, max(1, math.ceil(wait)))


def permanent_settings(filesystem: Filesystem, say=None, write=None) -> dict[str, str]:
    """The MGS's permanent settings (``llog_print params``): name → value."""
    mgs = mgs_server(filesystem)
    if mgs is None:
        return {}
    result = _run(filesystem, [mgs.hostname], {"ostara_params": {"phase": "llog"}}, say, write)
    text = result.facts.get(mgs.hostname, {}).get("param_log", "")
    return {m.group("param"): m.group("value") for m in _LLOG_RE.finditer(text)}


def _summary_lines(reading: ParameterReading, value: str | None, hosts: list[str]) -> list[str]:
    lines = []
    for host in hosts:
        found = reading.values.get(host, {})
        if not found:
            lines.append(f"{host}: {reading.errors.get(host, 'no such parameter')}")
            continue
        olds = sorted(set(found.values()))
        names = next(iter(found)) if len(found) == 1 else f"{len(found)} parameters"
        new = f" → {value}" if value is not None else ""
        lines.append(f"{host}: {names} {' / '.join(olds)}{new}")
    return lines


def start_set(
    filesystem: Filesystem,
    name: str,
    value: str,
    author: Author,
    *,
    hosts: list[str] | None = None,
    permanent: bool = False,
    confirmed: bool = False,
) -> Job:
    """Set a parameter on chosen servers (until they restart) or for good (``-P``)."""
    name, value = check_name(name), check_value(value)
    known = [server.hostname for server in servers_of(filesystem)]
    if permanent:
        mgs = mgs_server(filesystem)
        if mgs is None:
            raise ConsoleError("permanent", f"{filesystem.name} has no MGS to keep the setting")
        hosts = known
    else:
        if not hosts:
            raise ConsoleError("servers", "choose the servers, or set the parameter permanently")
        strangers = sorted(set(hosts) - set(known))
        if strangers:
            raise ConsoleError(
                "servers", f"{', '.join(strangers)}: not a server of {filesystem.name}"
            )
        hosts = [host for host in known if host in hosts]
    reading = read(filesystem, name, hosts)
    warnings = []
    if not permanent:
        warnings.append(
            "a target's own tunables start again from their defaults (and the MGS's -P "
            "settings) when it mounts, as on a failover: set -P to keep a value"
        )
    if not reading.matched:
        if not permanent:
            raise ConsoleError("name", f"{name} matches no parameter on {', '.join(hosts)}")
        warnings.append(f"{name} matches no parameter on the servers now (clients may have it)")
    previous = permanent_settings(filesystem).get(name) if permanent else None
    how = (
        "permanently (lctl set_param -P on the MGS)"
        if permanent
        else "until the server restarts or the target moves"
    )
    proposal = Proposal(
        f"Set {name}={value} {how}",
        _summary_lines(reading, value, hosts),
        warnings,
        commands=[f"lctl set_param {'-P ' if permanent else ''}{name}={value}"],
    )
    if not confirmed:
        raise ConfirmationNeeded(proposal)
    params = {
        "filesystem": filesystem.name,
        "name": name,
        "settings": {} if permanent else {host: [f"{name}={value}"] for host in hosts},
        "permanent": [f"{name}={value}"] if permanent else [],
        "forget": False,
        "mgs": mgs.hostname if permanent else None,
        "expect": {host: {"*": value} for host in reading.values},
    }
    details = {
        "filesystem": filesystem.name,
        "name": name,
        "value": value,
        "permanent": permanent,
        "hosts": hosts,
        "old": reading.values,
        "previous_permanent": previous,
    }
    return _start(filesystem, Act.SET_PARAM, proposal, params, details, author)


def start_revert(entry: AuditEntry, author: Author, *, confirmed: bool = False) -> Job:
    """Put back the values a change found, on the servers it changed; a permanent change's
    setting goes back to what the MGS had before (or goes)."""
    if not entry.revertible:
        raise ConsoleError("entry", f"audit entry #{entry.pk} is not a parameter change")
    details = entry.details
    filesystem = Filesystem.objects.filter(name=details.get("filesystem")).first()
    if filesystem is None:
        raise ConsoleError("entry", f"filesystem {details.get('filesystem')!r} is gone")
    old: dict[str, dict[str, str]] = details["old"]
    for found in old.values():  # an old value came from a server: check it again
        for param, value in found.items():
            check_name(param)
            check_value(value)
    name = details["name"]
    previous = details.get("previous_permanent")
    permanent = bool(details.get("permanent"))
    lines = [
        f"{host}: {param} {details['value']} → {value}"
        for host, found in sorted(old.items())
        for param, value in sorted(found.items())
    ]
    if permanent:
        lines.append(
            f"MGS: {name}={previous} again" if previous else f"MGS: the setting of {name} goes"
        )
    proposal = Proposal(f"Revert {name} to its values before #{entry.pk}", lines)
    if not confirmed:
        raise ConfirmationNeeded(proposal)
    mgs = mgs_server(filesystem)
    params = {
        "filesystem": filesystem.name,
        "name": name,
        "settings": {
            host: [f"{param}={value}" for param, value in sorted(found.items())]
            for host, found in old.items()
        },
        "permanent": [f"{name}={previous}"] if permanent and previous else [],
        "forget": permanent and not previous,
        "mgs": mgs.hostname if permanent and mgs else None,
        "expect": old,
    }
    details = {**details, "reverted": entry.pk}
    return _start(filesystem, Act.REVERT_PARAM, proposal, params, details, author, reverts=entry)


def _start(filesystem, act, proposal, params, details, author, reverts=None) -> Job:
    user = author.user if getattr(author.user, "is_authenticated", False) else None
    pairs = list(ServerPair.objects.filter(filesystem=filesystem))
    with transaction.atomic():
        job = create_job(KIND_SET_PARAM, proposal.title, params=params, pairs=pairs, user=user)
        audit(
            author,
            act,
            ObjectKind.PARAMETER,
            params["name"],
            proposal,
            job=job,
            details=details,
            reverts=reverts,
        )
        enqueue(job)
    return job


# --- in the job -----------------------------------------------------------------------------


def take_reading(job: Job, say: Say, write) -> str:
    """A read job's one step: lctl get_param on every server, kept for the page and the API."""
    params = job.params
    filesystem = Filesystem.objects.filter(name=params["filesystem"]).first()
    if filesystem is None:
        raise StepFailed(f"filesystem {params['filesystem']!r} is gone")
    reading = read(filesystem, params["name"], params["hosts"], say, write)
    ParameterReading.objects.filter(job=job).update(
        values=reading.values, errors=reading.errors, read=timezone.now()
    )
    if (
        not reading.values
        and reading.errors
        and all(error == "did not answer" for error in reading.errors.values())
    ):
        raise StepFailed(f"no server answered: {', '.join(sorted(reading.errors))}")
    found = f"{reading.matched} value{'s' if reading.matched != 1 else ''}"
    where = ", ".join(sorted(reading.values)) or "no server"
    missing = f"; {len(reading.errors)} without it" if reading.errors else ""
    return f"{reading.name}: {found} on {where}{missing}"


def apply(job: Job, say: Say, write) -> None:
    params = job.params
    filesystem = Filesystem.objects.get(name=params["filesystem"])
    results: list[PlaybookResult] = []
    if params["settings"]:
        variables = {"ostara_params": {"phase": "set", "settings": params["settings"]}}
        results.append(_run(filesystem, sorted(params["settings"]), variables, say, write))
    if params["mgs"] and (params["permanent"] or params["forget"]):
        phase = "permanent" if params["permanent"] else "forget"
        variables = {
            "ostara_params": {
                "phase": phase,
                "permanent": params["permanent"],
                "name": params["name"],
            }
        }
        results.append(_run(filesystem, [params["mgs"]], variables, say, write))
    for result in results:
        say(result.summary())
        if not result.succeeded:
            raise StepFailed(f"lctl refused: {result.summary()} (see the output)")


def verify(job: Job, say: Say, write) -> str:
    """Read the parameter back where it was set; every value must be the one expected."""
    params = job.params
    filesystem = Filesystem.objects.get(name=params["filesystem"])
    expect: dict[str, dict[str, str]] = params["expect"]
    if not expect:
        return f"{params['name']}: set on the MGS; no server has it now"
    reading = read(filesystem, params["name"], sorted(expect), say, write)
    wrong = []
    for host, wanted in sorted(expect.items()):
        found = reading.values.get(host, {})
        for param, value in sorted(found.items()):
            should = wanted.get(param, wanted.get("*"))
            if should is not None and value != should:
                wrong.append(f"{host}: {param}={value}, not {should}")
    if wrong:
        raise StepFailed(
            "; ".join(wrong[:8]) + (f" and {len(wrong) - 8} more" if len(wrong) > 8 else "")
        )
    values = sorted({v for found in reading.values.values() for v in found.values()})
    return (
        f"{params['name']} = {' / '.join(values)} on {', '.join(sorted(reading.values))} "
        f"({reading.matched} parameter{'s' if reading.matched != 1 else ''})"
    )
