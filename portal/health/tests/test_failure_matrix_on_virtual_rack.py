"""The rows of the failure matrix (DESIGN.md §2), and a hot CPU and a hot room, injected
one at a time with the simulator on one clustered virtual rack whose servers run the product's
sensor agent: each gives the matrix's colours through GET /api/v1/health/, with reasons that
name the cause as the servers' own tools report it (corosync's heartbeat, LNet, the multipath
SAS paths, the BMC's chassis power and temperatures, the PDU fence agent's status, drives,
controllers), and each clears back to green, after the operator's failback where Pacemaker
moved targets."""

from __future__ import annotations

import time

import pytest
from django.conf import settings

from portal.health.tests.conftest import SENSOR_INTERVAL, virtual_rack_thresholds
from portal.health.tests.test_health_on_virtual_rack import api_nodes, wait_for

pytestmark = [pytest.mark.services, pytest.mark.django_db]

OSS01_OSTS = [f"scratch-OST{i:04x}" for i in range(0, 24, 2)]
# A server that lost every SAS path queues its I/O this long before its partner fences it:
# long enough for its sensor to report the lost paths first, as a real one would.
MULTIPATH_QUEUE = 2 * SENSOR_INTERVAL + 1


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
        "heartbeat-down",
        {"server": "oss01"},
        {
            ("server", "oss01"): ("red", "oss02 has lost the heartbeat (corosync) to it"),
            **on_partner(OSS01_OSTS),
        },
        True,
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
        "private-switch-down",
        {"pair": "ssu01"},
        {
            # Neither its BMC nor its PDU answers the partner: neither server can be fenced.
            ("server", "oss01"): ("red", "cannot be fenced: its BMC does not answer oss02"),
            ("server", "oss02"): ("red", "and PDU pdu2 outlet 3 does not answer oss01's"),
            # The cause they share, named once for the pair.
            ("ssu", "ssu01"): ("red", "its private network is down (the pair's switch"),
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


def test_every_row_of_the_failure_matrix_on_a_virtual_rack(
    virtual_rack, metrics_db, client, world, tmp_path
):
    virtual_rack.save_inventory()
    virtual_rack_thresholds()
    client.login(username="viewer", password="pw-viewer-123!")
    virtual_rack.start(
        settings.INFLUXDB_URL, metrics_db, tmp_path / "spool", multipath_queue=MULTIPATH_QUEUE
    )
    # Generous waits: on a 2-core machine the rack's sensors run eight commands a round each,
    # and a busy moment delays a round (a passing run does not wait them out).
    within = 3 * SENSOR_INTERVAL + 5
    wait_for(client, {("filesystem", "scratch"): "green"}, 60)

    seconds = {}
    for kind, where, expected, moved in ROWS:
        started = time.monotonic()
        virtual_rack.inject(kind, **where)
        wait_for(client, expected, 10 * SENSOR_INTERVAL + MULTIPATH_QUEUE + 5)
        virtual_rack.clear_all()
        if moved:
            virtual_rack.fail_back()
        nodes = wait_for(client, {("filesystem", "scratch"): "green"}, 3 * within)
        assert {n["status"] for n in nodes.values()} == {"green"}, (kind, where)
        seconds[f"{kind} {where}"] = round(time.monotonic() - started, 1)
    print("seconds per row:", seconds)
    assert len(api_nodes(client)) > 30
