"""The rows of the failure matrix (DESIGN.md §2), and a hot CPU and a hot room, injected
one at a time with the simulator on one clustered virtual rack whose servers run the product's
sensor agent (its SSU cabled as the Pacemaker recipe says: Corosync link 0 on the management
network, link 1 on the private heartbeat network, the BMCs and PDUs on the management network;
simulator/IMITATION.md compares the rows with a real cluster's): each gives the matrix's
colours through GET /api/v1/health/, with reasons that name the cause as the servers' own
tools report it (corosync's heartbeat links, LNet, the multipath SAS paths, the BMC's chassis
power and temperatures, the PDU fence agent's status, drives, controllers), and each clears
back to green, after the operator's failback (the console's job)
where Pacemaker moved targets.

With the default alert rules (their durations shortened in proportion) and a real SMTP server
on loopback, evaluated as the periodic tasks do, each row mails one incident: one firing mail
when it happens, one resolved mail once it is cleared, nothing for the failback.

Each row that makes a server's kernel log Lustre or LNet lines has one of them in the kernel-log
API (`KERNEL_SAYS`).

`make test` walks the rows that no other test of it shows; `make long` walks them all."""

from __future__ import annotations

import re
import time
from collections import Counter

import pytest

from portal.alerts.choices import EventStatus, GroupStatus
from portal.alerts.models import Event, IncidentGroup, Rule
from portal.alerts.services.outbox import deliver_due
from portal.console.choices import Act
from portal.console.services import Author, Refused, cluster
from portal.health import tasks as health_tasks
from portal.health.tests.conftest import (
    SENSOR_INTERVAL,
    load_spec,
    virtual_rack_thresholds,
)
from portal.health.tests.test_health_on_virtual_rack import api_nodes, wait_for
from portal.health.tests.virtual_rack import VirtualRack
from portal.inventory.models import Server
from portal.jobs.choices import JobState
from portal.jobs.models import Job
from portal.jobs.worker import run_job

pytestmark = [pytest.mark.services, pytest.mark.django_db, pytest.mark.rack(seconds=260)]

OSS01_OSTS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]
# A server that lost every SAS path queues its I/O this long before its partner fences it:
# long enough for its sensor to report the lost paths first, as a real one would.
MULTIPATH_QUEUE = 2 * SENSOR_INTERVAL + 1


LINK_DOWN = "one of its corosync links to {partner} is down (a heartbeat cable or the private"


def two_link_specs() -> list[dict]:
    """The MDS pair and the reference SSU, the SSU's servers with their two Corosync links'
    addresses (link-local, as the demo rack's)."""
    ssu = load_spec("reference_ssu")
    for number, server in zip((11, 12), ssu["servers"], strict=True):
        server.update(mgmt_address=f"169.254.1.{number}", heartbeat_address=f"169.254.2.{number}")
    return [load_spec("mds_pair"), ssu]


@pytest.fixture
def virtual_rack(tmp_path):
    """The reference rack (conftest's), its SSU with two Corosync links."""
    rack = VirtualRack(tmp_path / "rack", two_link_specs(), interval=SENSOR_INTERVAL)
    rack.build()
    yield rack
    rack.stop()


def on_partner(labels: list[str]) -> dict:
    return {
        ("target", label): ("orange", "served by its failover server oss02") for label in labels
    }


# (failure, where, what the API must show, whether Pacemaker moved targets)
ROWS = [
    (
        "server-crash",
        {"server": "oss01"},
        {("server", "oss01"): ("red", "powered off (fenced"), **on_partner(OSS01_OSTS)},
        True,
    ),
    (
        # One of two knet links: still one cluster, nothing moves, nobody is fenced; both ends
        # of the link report it.
        "heartbeat-down",
        {"server": "oss01"},
        {
            ("server", "oss01"): ("orange", LINK_DOWN.format(partner="oss02")),
            ("server", "oss02"): ("orange", LINK_DOWN.format(partner="oss01")),
            ("target", "scratch-OST0000"): "green",
        },
        False,
    ),
    (
        "lnet-down",
        {"server": "oss01"},
        {
            ("server", "oss01"): ("red", "its LNet (public network) link is down"),
            **on_partner(OSS01_OSTS),
        },
        True,
    ),
    (
        # Both heartbeat links: one cluster over the management link, the BMCs and PDUs still
        # answer (they could fence), the pair down to one link.
        "private-switch-down",
        {"pair": "ssu01"},
        {
            ("server", "oss01"): ("orange", LINK_DOWN.format(partner="oss02")),
            ("server", "oss02"): ("orange", LINK_DOWN.format(partner="oss01")),
            ("ssu", "ssu01"): ("orange", "oss01: one of its corosync links to oss02 is down"),
            ("target", "scratch-OST0000"): "green",
        },
        False,
    ),
    ("bmc-down", {"server": "oss02"}, {("server", "oss02"): ("orange", "only the PDU")}, False),
    (
        "pdu-down",
        {"server": "oss01"},
        {
            ("server", "oss01"): (
                "orange",
                "fencing by PDU unavailable: PDU pdu1 outlet 3 does not answer oss02's "
                "fence_apc_snmp status",
            ),
            ("target", "scratch-OST0000"): "green",
        },
        False,
    ),
    (
        "sas-link-down",
        {"server": "oss01", "links": 1},
        {
            ("server", "oss01"): ("orange", "SAS paths to ssu01-a is down (multipath)"),
            ("target", "scratch-OST0000"): "green",
        },
        False,
    ),
    (
        "sas-link-down",
        {"server": "oss01", "links": 0},
        {
            ("server", "oss01"): ("red", "every SAS path to ssu01-a is down"),
            **on_partner(OSS01_OSTS),
        },
        True,
    ),
    (
        "drive-failed",
        {"array": "ssu01-a", "drive": "0,2,5"},
        {("target", "scratch-OST0002"): ("orange", "volume group ssu01-a-vg02 is degraded")},
        False,
    ),
    (
        "drive-failed",
        {"array": "ssu01-a", "volume_group": "ssu01-a-vg03", "count": 2},
        {("target", "scratch-OST0003"): ("red", "volume group ssu01-a-vg03 is critical")},
        False,
    ),
    (
        "drive-failed",
        {"array": "ssu01-a", "volume_group": "ssu01-a-vg04", "count": 3},
        {
            ("target", "scratch-OST0004"): ("red", "volume group ssu01-a-vg04 has failed"),
            ("filesystem", "scratch"): ("red", "scratch-OST0004 lost"),
        },
        # oss01's health_check says NOT HEALTHY with a lost target mounted: healthLUSTRE's
        # rule moves its targets away until the lost one is stopped; some stay on oss02.
        True,
    ),
    (
        "drawer-failed",
        {"array": "ssu01-b", "enclosure": 1, "drawer": 3},
        {
            # One reason naming the drawer, its missing drives folded under it, said once.
            ("array", "ssu01-b"): (
                "orange",
                "drawer 3 of ssu01-b-e1 has failed: its 12 drives (slots 1-12) are missing",
            ),
            ("ssu", "ssu01"): ("orange", "ssu01-b: drawer 3 of ssu01-b-e1 has failed"),
        },
        False,
    ),
    (
        "controller-failed",
        {"array": "ssu01-b", "controller": "B"},
        {("array", "ssu01-b"): ("orange", "controller B has failed"), ("ssu", "ssu01"): "orange"},
        False,
    ),
    # Not rows of the matrix, but what a BMC sees: a CPU whose cooler failed and a hot room,
    # each orange at the threshold of its kind of sensor (here the BMC's own).
    (
        "hot-cpu",
        {"server": "oss01", "celsius": 90},
        {
            ("server", "oss01"): (
                "orange",
                "CPU1 Temp at 90 °C (warning at 88 °C, the BMC's threshold)",
            ),
            ("target", "scratch-OST0000"): "green",
        },
        False,
    ),
    (
        "hot-inlet",
        {"server": "oss02", "celsius": 43},
        {
            ("server", "oss02"): (
                "orange",
                "Inlet Temp at 43 °C (warning at 42 °C, the BMC's threshold)",
            )
        },
        False,
    ),
]


# What each row makes a server's kernel say, as the kernel-log API gives it (its filter, a text
# of the line): the partner's recovery of the targets it took over, the LNet timeouts of a
# server whose link is down, the lost group's OST that can no longer create objects. The other
# rows log no Lustre or LNet line (a degraded or critical group: the array hides it; a lost SAS
# path, a failed controller or drawer: only the SCSI layer's and multipath's lines, which the
# sensor does not send; the heartbeat, the BMC, the PDU and the temperatures: nothing in the
# kernel's log).
RECOVERY = "scratch-OST0000: Will be in recovery for at least 2:30"
KERNEL_SAYS = {
    ("server-crash", None): ("target=scratch-OST0000&server=oss02", RECOVERY),
    ("lnet-down", None): ("server=oss01", "Timed out tx for "),
    ("sas-link-down", 0): ("target=scratch-OST0000&server=oss02", RECOVERY),
    ("drive-failed", 3): ("target=scratch-OST0004", "OST0004: unable to precreate: rc = -30"),
}


def kernel_says(kind: str, where: dict) -> tuple[str, str] | None:
    return KERNEL_SAYS.get((kind, where.get("links", where.get("count"))))


def kernel_lines(client, query: str, text: str) -> int:
    """How many lines the kernel-log API gives for ``query`` that hold ``text``."""
    answer = client.get(f"/api/v1/kernel-log/?{query}")
    assert answer.status_code == 200, answer.content
    return sum(text in line["message"] for line in answer.json()["lines"])


# What `make test` walks (each row costs about 45 s, the whole matrix 12 minutes): the rows no
# other test of it shows, the two-link and fencing-device rows, every SAS path lost (the
# partner fences after the multipath queue, an escalation, a failback), a hot room. The crash,
# the drives, the drawer, the controller, the BMC and LNet are walked by the health, dashboard,
# alert and console tests on the rack; `make long` walks every row here, each with its mail.
# The row with a failback first: the interrupt test (deploy/tests) waits for its playbook.
OTHERS_DO_NOT_SHOW = sorted(
    (
        row
        for row in ROWS
        if row[0] in ("heartbeat-down", "private-switch-down", "pdu-down", "hot-inlet")
        or (row[0] == "sas-link-down" and row[1]["links"] == 0)
    ),
    key=lambda row: not row[3],
)


# The default rules' durations, scaled down as the sensor interval is (a minute becomes two
# sensor intervals), and the incident groups' waits with them.
SHORTEST = 2 * SENSOR_INTERVAL
SUBJECT = re.compile(r"^\[Ostara (?P<severity>\w+)\] (?P<group>[^:]+): (?P<headline>.*?) – ")


def alert_round() -> None:
    """What beat runs every interval: colours, the alert round on them, the outbox."""
    health_tasks.evaluate()
    deliver_due()


def watch(client, expected: dict, seconds: float) -> dict:
    """Run rounds, alerts and mail too, until the health API shows every expected colour."""
    return wait_for(client, expected, seconds, evaluate=alert_round)


def mails(smtp, since: int) -> Counter:
    """(incident, kind) of each mail the SMTP server took since the ``since``-th one."""
    found = Counter()
    for message in smtp.mailbox.messages[since:]:
        match = SUBJECT.match(" ".join(str(message["Subject"]).split()))
        assert match, message["Subject"]
        headline = match["headline"]
        kind = (
            "resolved"
            if headline.endswith("resolved")
            else "reminder"
            if headline.endswith("still firing")
            else "update"
            if headline.endswith("new")
            else "firing"
        )
        found[(match["group"], kind)] += 1
    return found


def until(condition, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, f"after {seconds:.0f} s: {what}"
        alert_round()
        time.sleep(0.5)


def quiet() -> bool:
    """No alert waits for its duration and no incident for its first mail."""
    return (
        not Event.objects.filter(status=EventStatus.PENDING).exists()
        and not IncidentGroup.objects.filter(status=GroupStatus.PENDING).exists()
    )


def away(virtual_rack) -> dict[str, str | None]:
    """The targets not on their primary server, and where they are."""
    where = virtual_rack.placement()
    return {
        target["label"]: where.get(target["label"])
        for plan in virtual_rack.plans
        for target in plan["targets"]
        if target["kind"] != "MGT" and where.get(target["label"]) != target["primary"]
    }


def fail_back(virtual_rack, operator: Author, seconds: float) -> None:
    """The operator's failback through the console, once Pacemaker sees oss01 online again
    (refused until then), until every target is home: a target still away after a job is
    failed back again, as an operator would."""
    oss01 = Server.objects.get(hostname="oss01")
    deadline = time.monotonic() + seconds
    while away(virtual_rack):
        alert_round()
        try:
            job = cluster.start(Act.FAILBACK, oss01, operator, confirmed=True)
        except Refused as refused:
            assert time.monotonic() < deadline, (refused.reasons, away(virtual_rack))
            time.sleep(1)
            continue
        run_job(job.pk)
        done = Job.objects.get(pk=job.pk)
        assert done.state == JobState.SUCCEEDED, (
            done.error,
            [(step.name, step.log, step.output[-2000:]) for step in done.steps.all()],
        )


@pytest.mark.parametrize(
    "rows",
    [
        pytest.param(OTHERS_DO_NOT_SHOW, id="rows-no-other-test-walks"),
        pytest.param(ROWS, id="every-row", marks=pytest.mark.long),
    ],
)
def test_the_failure_matrix_on_a_virtual_rack(
    rows, virtual_rack, metrics_db, client, world, tmp_path, smtp, settings
):
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    settings.VIRTUAL_RACK = virtual_rack.root
    settings.ANSIBLE_WORK_DIR = tmp_path / "ansible"
    settings.OSTARA_ALERT_GROUP_WAIT = SENSOR_INTERVAL
    settings.OSTARA_ALERT_GROUP_INTERVAL = 6 * SENSOR_INTERVAL
    for rule in Rule.objects.filter(enabled=True):
        rule.for_seconds = min(rule.for_seconds, SHORTEST)
        rule.clear_seconds = min(rule.clear_seconds, SHORTEST)
        rule.save()
    operator = Author(world["operator"])
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(
        settings.INFLUXDB_URL, metrics_db, tmp_path / "spool", multipath_queue=MULTIPATH_QUEUE
    )
    # Generous waits: on a 2-core machine the rack's sensors run eight commands a round each,
    # and a busy moment delays a round (a passing run does not wait them out).
    within = 3 * SENSOR_INTERVAL + 5
    # The inventory is saved as in service, not built by a job: colours only until the
    # sensors have reported, as a built rack's would have.
    wait_for(client, {("filesystem", "scratch"): "green"}, 60)
    until(quiet, 60, "alerts still pending on a green rack")
    assert smtp.mailbox.subjects() == []  # a green rack mails nothing

    seconds, told = {}, {}
    for kind, where, expected, moved in rows:
        started, before = time.monotonic(), len(smtp.mailbox.messages)
        row = f"{kind} {where}"
        said = kernel_says(kind, where)
        said_before = kernel_lines(client, *said) if said else 0
        virtual_rack.inject(kind, **where)
        watch(client, expected, 10 * SENSOR_INTERVAL + MULTIPATH_QUEUE + 5)
        # Its incident has told what it is: the first mail is out, nothing waits to fire.
        until(lambda n=before: len(smtp.mailbox.messages) > n and quiet(), 60, f"{row}: no mail")
        if said:  # what the kernel said of it, read by the sensor and searchable
            until(
                lambda s=said, n=said_before: kernel_lines(client, *s) > n,
                3 * SENSOR_INTERVAL,
                f"{row}: no kernel line with {said[1]!r} for {said[0]}",
            )
        virtual_rack.clear_all()
        if moved:
            fail_back(virtual_rack, operator, 3 * within)
        nodes = watch(client, {("filesystem", "scratch"): "green"}, 3 * within)
        assert {n["status"] for n in nodes.values()} == {"green"}, row
        opened = {group for group, mail in mails(smtp, before) if mail == "firing"}
        until(
            lambda n=before, o=opened: all(mails(smtp, n)[(g, "resolved")] for g in o),
            6 * SHORTEST,
            f"{row}: an incident not resolved by mail",
        )
        told[row] = dict(mails(smtp, before))
        seconds[row] = round(time.monotonic() - started, 1)
        print(row, seconds[row], "s:", smtp.mailbox.subjects()[before:], flush=True)
        # Its incident (ssu01's) told once when it happens and once when it ends, nothing else;
        # any other incident of the row (a filesystem's own red for a lost OST) the same way.
        assert ("ssu01", "firing") in told[row], (row, told[row])
        # A fault that escalates by design after a delay may tell its escalation once, when its
        # first mail went out before it (the machine's pace decides which comes first): every
        # SAS path lost (the partner fences after the multipath queue), a failed volume group
        # (healthLUSTRE's rule stops the lost target: "not mounted on any server").
        escalates = (kind == "sas-link-down" and where.get("links") == 0) or (
            kind == "drive-failed" and where.get("count", 0) > 2
        )
        escalations = 1 if escalates else 0
        for (group, mail), count in told[row].items():
            if mail == "update":
                assert group == "ssu01" and count <= escalations, (row, told[row])
                continue
            assert mail in ("firing", "resolved") and count == 1, (row, told[row])
            assert (group, "firing") in told[row] and (group, "resolved") in told[row], row
    print("seconds per row:", seconds)
    print("mails per row:", told)
    assert len(api_nodes(client)) > 30
