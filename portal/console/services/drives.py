"""A failed drive's replacement on an E-series-style array, through its own command (SMcli):
identify it (``start drive [t,d,s] locate``), the operator confirms the new drive is in, start
the reconstruction (``start drive [t,d,s] reconstruct``) or follow the array's own copy-back from
the hot spare that stood in, and watch ``show volumeGroup`` until the group is optimal.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from portal.console.choices import (
    KIND_DRIVE_LOCATE,
    KIND_DRIVE_REPLACE,
    Act,
    ObjectKind,
    ReplacementState,
)
from portal.console.models import DriveReplacement
from portal.console.services import (
    Author,
    ConfirmationNeeded,
    ConsoleError,
    Proposal,
    Say,
    audit,
    run_on_pair,
)
from portal.inventory.choices import DriveState
from portal.inventory.models import Drive, StorageArray, Target
from portal.inventory.services import record_observations
from portal.jobs.choices import JobState, Mark
from portal.jobs.models import Job
from portal.jobs.registry import StepFailed
from portal.jobs.services import create_job, enqueue, marks_for

ADDRESS_RE = re.compile(r"^([0-9]{1,2}),([0-9]{1,2}),([0-9]{1,3})$")
_STATUS_RE = re.compile(r"^\s*Status:\s*(\S+)", re.MULTILINE)
_GROUP_RE = re.compile(r"^\s*Associated volume group:\s*(\S+)", re.MULTILINE)
_LOCATE_RE = re.compile(r"^\s*Locate:\s*(\S+)", re.MULTILINE)
_OPERATION_RE = re.compile(r"^\s*Operation:\s*(\w+)\s*\((\d+)% complete\)", re.MULTILINE)
_GROUP_NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,48}$")


def drive_at(array: StorageArray, address: str) -> Drive | None:
    match = ADDRESS_RE.fullmatch(address or "")
    if not match:
        return None
    tray, drawer, slot = (int(x) for x in match.groups())
    return (
        Drive.objects.select_related("enclosure__array__pair", "volume_group")
        .filter(enclosure__array=array, enclosure__position=tray, drawer=drawer, slot=slot)
        .first()
    )


def address_of(drive: Drive) -> str:
    return f"{drive.enclosure.position},{drive.drawer},{drive.slot}"


def open_replacement(drive: Drive) -> DriveReplacement | None:
    return DriveReplacement.objects.filter(drive=drive, finished__isnull=True).first()


def latest_replacement(drive: Drive) -> DriveReplacement | None:
    return DriveReplacement.objects.filter(drive=drive).select_related("job").first()


def _user(author: Author):
    return author.user if getattr(author.user, "is_authenticated", False) else None


def job_under_way(replacement: DriveReplacement | None) -> str | None:
    """The replacement's job still pending or running: one step at a time."""
    job = replacement.job if replacement else None
    if job is not None and job.state in (JobState.PENDING, JobState.RUNNING):
        return f"job #{job.pk} ({job.title}) is still {job.state}: wait for it"
    return None


def offers(drive: Drive, replacement: DriveReplacement | None) -> dict[str, bool]:
    """The steps an operator may take now (the page's buttons)."""
    idle = job_under_way(replacement) is None
    state = replacement.state if replacement else None
    return {
        "locate": idle
        and (
            # None yet, or the last one ended (stopped, or done before this drive failed again)
            (
                state in (None, ReplacementState.FAILED, ReplacementState.DONE)
                and drive.state == DriveState.FAILED
            )
            or state in (ReplacementState.IDENTIFYING, ReplacementState.LOCATING)
        ),
        "replaced": idle and state == ReplacementState.LOCATING,
    }


def start_locate(drive: Drive, author: Author, *, confirmed: bool) -> Job:
    """Switch the drive's locate LED on: the first step of its replacement (again, if the
    technician cannot find it)."""
    address = address_of(drive)
    array = drive.enclosure.array
    replacement = open_replacement(drive)
    if drive.state != DriveState.FAILED and replacement is None:
        raise ConsoleError(
            "drive",
            f"drive {address} of {array.name} is {drive.get_state_display().lower()}, "
            "not failed: there is nothing to replace",
        )
    if replacement and replacement.state not in (
        ReplacementState.IDENTIFYING,
        ReplacementState.LOCATING,
    ):
        raise ConsoleError("drive", f"drive {address} is being reconstructed already")
    running = job_under_way(replacement)
    if running:
        raise ConsoleError("drive", running)
    proposal = Proposal(
        f"Blink the locate LED of drive {address} in {array.name}",
        [f"{drive.enclosure.name}, drawer {drive.drawer}, slot {drive.slot}"],
        commands=[f'SMcli -n {array.name} -c "start drive [{address}] locate;"'],
    )
    if not confirmed:
        raise ConfirmationNeeded(proposal)
    with transaction.atomic():
        if replacement is None:
            replacement = DriveReplacement.objects.create(
                drive=drive,
                volume_group=drive.volume_group.name if drive.volume_group else "",
                created_by=_user(author),
            )
        # Not on the pair: a drive's job must not hold up a failover for the hours of a
        # reconstruction (one act at a time per pair is for the cluster's acts).
        job = create_job(
            KIND_DRIVE_LOCATE,
            proposal.title,
            params={"replacement": replacement.pk},
            user=_user(author),
        )
        DriveReplacement.objects.filter(pk=replacement.pk).update(job=job)
        audit(
            author, Act.DRIVE_LOCATE, ObjectKind.DRIVE, f"{array.name} {address}", proposal, job=job
        )
        enqueue(job)
    return job


def start_replacement(drive: Drive, author: Author, *, confirmed: bool) -> Job:
    """The operator says the new drive is in: reconstruct onto it and watch until optimal."""
    address = address_of(drive)
    array = drive.enclosure.array
    replacement = open_replacement(drive)
    if replacement is None or replacement.state != ReplacementState.LOCATING:
        raise ConsoleError("drive", f"identify drive {address} first (its locate LED)")
    running = job_under_way(replacement)
    if running:
        raise ConsoleError("drive", running)
    group = replacement.volume_group or "its volume group"
    proposal = Proposal(
        f"Replace drive {address} in {array.name}",
        [
            f"the new drive in {drive.enclosure.name}, drawer {drive.drawer}, slot {drive.slot} "
            f"is reconstructed into {group} (or takes its data back from the hot spare)",
            "the job ends when the volume group is optimal",
        ],
        commands=[f'SMcli -n {array.name} -c "start drive [{address}] reconstruct;"'],
    )
    if not confirmed:
        raise ConfirmationNeeded(proposal)
    with transaction.atomic():
        # The array and the target on the group rebuild: degraded until it is optimal.
        on_group = Target.objects.filter(volume_group_id=drive.volume_group_id)
        job = create_job(
            KIND_DRIVE_REPLACE,
            proposal.title,
            params={"replacement": replacement.pk},
            user=_user(author),
            marks=marks_for(Mark.MOVES, array, *on_group),
        )
        DriveReplacement.objects.filter(pk=replacement.pk).update(job=job, message="")
        audit(
            author,
            Act.DRIVE_REPLACE,
            ObjectKind.DRIVE,
            f"{array.name} {address}",
            proposal,
            job=job,
        )
        enqueue(job)
    return job


# --- in the job -----------------------------------------------------------------------------


def job_replacement(job: Job) -> DriveReplacement:
    return DriveReplacement.objects.select_related("drive__enclosure__array__pair").get(
        pk=job.params["replacement"]
    )


def ask_array(replacement: DriveReplacement, script: str, say: Say, write) -> str:
    array = replacement.drive.enclosure.array
    if array.name.startswith("-"):  # SMcli -n NAME: never a name that reads as an option
        raise StepFailed(f"array {array.name!r}: a name starting with '-' is not passed to SMcli")
    result, host = run_on_pair(
        array.pair,
        "drive.yml",
        {"ostara_drive": {"array": array.name, "script": script}},
        key="ostara_drive",
        say=say,
        write=write,
    )
    if not result.succeeded:
        raise StepFailed(f"the array did not do it: {result.summary()} (see the output)")
    return result.facts.get(host, {}).get("array_output", "")


def _update(replacement: DriveReplacement, **fields) -> None:
    DriveReplacement.objects.filter(pk=replacement.pk).update(**fields)
    for name, value in fields.items():
        setattr(replacement, name, value)


def stopped(replacement: DriveReplacement, message: str) -> None:
    """A step failed. Before the reconstruction starts (the LED not lit, the new drive not seen
    yet, the array not answering) the replacement stays open: the operator tries that step
    again once it is mended. After, it ends (stopped); a drive still failed starts anew."""
    if replacement.state in (ReplacementState.IDENTIFYING, ReplacementState.LOCATING):
        _update(replacement, message=message)
    elif replacement.state != ReplacementState.DONE:
        _update(
            replacement, state=ReplacementState.FAILED, message=message, finished=timezone.now()
        )


def locate(replacement: DriveReplacement, say: Say, write) -> str:
    address = replacement.address
    answer = ask_array(
        replacement, f"start drive [{address}] locate; show drive [{address}];", say, write
    )
    found = _LOCATE_RE.search(answer)
    if not found or found.group(1).lower() != "on":
        raise StepFailed(f"the array does not show the locate LED of {address} on")
    _update(replacement, state=ReplacementState.LOCATING, message="")
    array = replacement.drive.enclosure.array
    return f"the locate LED of drive {address} in {array.name} is blinking"


def check(replacement: DriveReplacement, say: Say, write) -> str:
    address = replacement.address
    answer = ask_array(replacement, f"show drive [{address}];", say, write)
    status = _STATUS_RE.search(answer)
    word = status.group(1).lower() if status else "unknown"
    if word in ("failed", "missing", "unknown"):
        raise StepFailed(
            f"the array still reports drive {address} as {word}: put the new drive in "
            f"{replacement.drive.enclosure.name}, drawer {replacement.drive.drawer}, slot "
            f"{replacement.drive.slot} first, then confirm again"
        )
    group = _GROUP_RE.search(answer)
    if group and _GROUP_NAME_RE.match(group.group(1)):
        _update(replacement, volume_group=group.group(1))
    say(f"the array sees a {word} drive at {address}")
    return ""


def _group_state(replacement: DriveReplacement, say, write) -> tuple[str, str | None, int]:
    name = replacement.volume_group
    if not _GROUP_NAME_RE.fullmatch(name or ""):
        raise StepFailed(f"drive {replacement.address} belongs to no volume group the array names")
    answer = ask_array(replacement, f'show volumeGroup ["{name}"];', say, write)
    status = _STATUS_RE.search(answer)
    operation = _OPERATION_RE.search(answer)
    return (
        status.group(1).lower() if status else "unknown",
        operation.group(1).lower() if operation else None,
        int(operation.group(2)) if operation else 100,
    )


def reconstruct(replacement: DriveReplacement, say: Say, write) -> str:
    address = replacement.address
    answer = ask_array(replacement, f"show drive [{address}];", say, write)
    status = _STATUS_RE.search(answer)
    word = status.group(1).lower() if status else "unknown"
    _state, operation, progress = _group_state(replacement, say, write)
    if operation == "copyback":
        say("the array copies the data back from the hot spare by itself")
        _update(replacement, state=ReplacementState.COPYBACK, progress=progress)
    elif operation == "reconstruction":
        say("a reconstruction is running already")
        _update(replacement, state=ReplacementState.RECONSTRUCTING, progress=progress)
    elif word == "replaced":
        ask_array(replacement, f"start drive [{address}] reconstruct;", say, write)
        _update(replacement, state=ReplacementState.RECONSTRUCTING, progress=0)
    else:
        say(f"the drive is {word} and nothing runs: the group may be optimal already")
        _update(replacement, state=ReplacementState.RECONSTRUCTING, progress=100)
    array = replacement.drive.enclosure.array
    record_observations(drive_states={(array.name, address): "rebuilding"})
    return ""


def watch(
    replacement: DriveReplacement, say: Say, write, progress: Callable[[int], None] | None = None
) -> str:
    """Follow the array until the volume group is optimal; the drive's page shows the array's
    percentage, and ``progress`` hears it too (the job's own progress follows it)."""
    started = time.monotonic()
    deadline = started + settings.OSTARA_DRIVE_REBUILD_HOURS * 3600
    last = -1
    array = replacement.drive.enclosure.array
    while True:
        state, operation, percent = _group_state(replacement, say, write)
        if operation:
            phase = (
                ReplacementState.COPYBACK
                if operation == "copyback"
                else ReplacementState.RECONSTRUCTING
            )
            _update(replacement, state=phase, progress=percent)
            if percent != last:
                say(f"{replacement.volume_group}: {operation} {percent}% complete")
                if progress:
                    progress(percent)
                last = percent
        elif state == "optimal":
            break
        else:
            raise StepFailed(
                f"{replacement.volume_group} is {state} and nothing is reconstructing it"
            )
        if Job.objects.filter(pk=replacement.job_id, cancel_requested=True).exists():
            raise StepFailed("cancelled while the array reconstructs (it carries on by itself)")
        if time.monotonic() > deadline:
            raise StepFailed(f"{replacement.volume_group} is not optimal after the time allowed")
        time.sleep(settings.OSTARA_DRIVE_POLL_SECONDS)
    ask_array(replacement, "stop drive locate;", say, write)
    record_observations(
        drive_states={(array.name, replacement.address): "optimal"},
        group_states={(array.name, replacement.volume_group): "optimal"},
    )
    minutes = (time.monotonic() - started) / 60
    message = f"{replacement.volume_group} is optimal again ({minutes:.1f} min of reconstruction)"
    _update(
        replacement,
        state=ReplacementState.DONE,
        progress=100,
        finished=timezone.now(),
        message=message,
    )
    return f"drive {replacement.address} of {array.name} replaced: {message}"
