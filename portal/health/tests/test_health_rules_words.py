"""The reasons an administrator reads, said once, about the right subject and in plain words
(issue 31): a failed drawer named as the drawer, the private network of a pair named as the
cause, a reconstruction with its drive and percentage, a controller's state said once, the BMC's
silence measured from the first poll it missed, slots in number order, and an array's state
unknown only when no server's sensor reports it, or, for an array the array collector reads, the
collector named with where it runs and what to check."""

from __future__ import annotations

from portal.health import rules
from portal.health.rules import ORANGE, RED
from portal.health.rules.nodes import clock
from portal.health.tests.test_health_rules import NOW, make_rack, nodes, server, unit
from portal.health.tests.test_health_rules_paths import healthy_paths


def drawer_out(rack, drawer: int = 1, groups: int = 6):
    """Drawer ``drawer`` of ssu01-a-e0 lost: two drives of each of the first ``groups`` groups
    missing with it, as the array reports them (slots 1-12)."""
    for index, group in enumerate(unit(rack).arrays[0].volume_groups[:groups]):
        group.state = "degraded"
        group.lost_drives = [
            rules.DriveFacts(f"ssu01-a-e0 drawer {drawer} slot {slot}", "Missing", f"0,1,{slot}")
            for slot in (2 * index + 1, 2 * index + 2)
        ]
    return rack


def test_a_failed_drawer_is_one_reason_naming_the_drawer_with_its_drives_folded_under_it():
    found = nodes(drawer_out(make_rack(osts=12)))
    sentence = (
        "drawer 1 of ssu01-a-e0 has failed: its 12 drives (slots 1-12) are missing; volume "
        "groups ssu01-a-vg00, ssu01-a-vg01, ssu01-a-vg02, ssu01-a-vg03 and 2 more are degraded "
        "until the drawer is back"
    )
    assert found[("array", "ssu01-a")].reasons == [sentence]
    # The SSU says it once, by the array, not six times by the groups' missing drives.
    ssu = found[("ssu", "ssu01")]
    assert (ssu.status, ssu.reasons) == (ORANGE, [f"ssu01-a: {sentence}"])
    # Each OST's own page names the drawer behind its group.
    assert found[("target", "scratch-OST0003")].reasons == [
        "volume group ssu01-a-vg03 is degraded: drawer 1 of ssu01-a-e0 has failed, "
        "slots 7-8 missing"
    ]


def test_a_drive_failed_in_the_same_group_as_a_failed_drawer_is_still_said():
    rack = drawer_out(make_rack(osts=12), groups=2)
    group = unit(rack).arrays[0].volume_groups[6]
    group.state = "degraded"
    group.lost_drives = [rules.DriveFacts("ssu01-a-e1 drawer 4 slot 9", "failed", "1,4,9")]
    ssu = nodes(rack)[("ssu", "ssu01")]
    assert ssu.reasons == [
        "scratch-OST0006: volume group ssu01-a-vg06 is degraded: drive ssu01-a-e1 drawer 4 "
        "slot 9 failed",
        "ssu01-a: drawer 1 of ssu01-a-e0 has failed: its 4 drives (slots 1-4) are missing; "
        "volume groups ssu01-a-vg00, ssu01-a-vg01 are degraded until the drawer is back",
    ]


def test_lost_drives_are_said_in_slot_number_order():
    rack = make_rack()
    group = unit(rack).arrays[0].volume_groups[0]
    group.lost_drives = [
        rules.DriveFacts(f"ssu01-a-e0 drawer 1 slot {slot}", "Failed") for slot in (10, 9)
    ]
    assert nodes(rack)[("target", "scratch-OST0000")].reasons == [
        "volume group ssu01-a-vg00 is critical (drive ssu01-a-e0 drawer 1 slot 9 failed; "
        "drive ssu01-a-e0 drawer 1 slot 10 failed): no redundancy left"
    ]


def test_a_reconstruction_names_its_drive_and_how_far_it_is():
    rack = make_rack()
    group = unit(rack).arrays[0].volume_groups[0]
    group.state = "degraded"
    group.rebuilding_drives = [rules.DriveFacts("ssu01-a-e0 drawer 1 slot 3", "replaced")]
    reason = "volume group ssu01-a-vg00 is degraded: "
    # The new drive is in, nothing writes onto it yet.
    assert nodes(rack)[("target", "scratch-OST0000")].reasons == [
        reason + "drive ssu01-a-e0 drawer 1 slot 3 replaced, waiting for its reconstruction"
    ]
    group.operation, group.progress = "reconstruction", 42
    found = nodes(rack)
    assert found[("target", "scratch-OST0000")].reasons == [
        reason + "reconstructing onto drive ssu01-a-e0 drawer 1 slot 3, 42 % done"
    ]
    assert found[("target", "scratch-OST0000")].status == ORANGE
    # A reconstruction onto a hot spare says the failed drive and the operation.
    group.rebuilding_drives = []
    group.lost_drives = [rules.DriveFacts("ssu01-a-e0 drawer 1 slot 3", "failed")]
    assert nodes(rack)[("target", "scratch-OST0000")].reasons == [
        reason + "drive ssu01-a-e0 drawer 1 slot 3 failed; reconstructing, 42 % done"
    ]


def test_a_failed_controller_is_said_once():
    rack = make_rack()
    unit(rack).arrays[0].controllers["A"] = "failed"
    assert nodes(rack)[("array", "ssu01-a")].reasons == [
        "controller A has failed: controller B serves every volume"
    ]


def test_the_private_network_of_a_pair_is_named_as_the_cause():
    rack = healthy_paths(make_rack())
    for host, partner, outlet in (
        ("oss01", "oss02", "pdu1 outlet 3"),
        ("oss02", "oss01", "pdu2 outlet 3"),
    ):
        facts = server(rack, host)
        facts.heartbeat_up = facts.partner_heard = False
        facts.power_answered = False
        facts.pdu, facts.pdu_answered, facts.pdu_polled_by = outlet, False, partner
    found = nodes(rack)
    cause = (
        "its private network is down (the pair's switch for the heartbeat, the BMCs and the "
        "PDUs): the heartbeat (corosync ring) is down and neither server reaches the other's "
        "BMC or PDU, so neither can be fenced"
    )
    assert found[("pair", "ssu01")].status == RED
    assert found[("pair", "ssu01")].reasons[0] == cause
    assert found[("ssu", "ssu01")].reasons[0] == cause
    # One server's BMC alone is that server's fault, not the network's.
    for host in ("oss01", "oss02"):
        facts = server(rack, host)
        facts.heartbeat_up = facts.partner_heard = True
        facts.power_answered = facts.pdu_answered = host == "oss02"
    assert cause not in nodes(rack)[("ssu", "ssu01")].reasons


def test_the_bmc_silence_is_measured_from_the_first_poll_it_missed():
    rack = make_rack()
    oss01 = server(rack, "oss01")
    # Its last answer came 35 s ago, 7 s before the fault; the next poll, 25 s ago, missed.
    oss01.bmc_last_seen = NOW - 35
    oss01.sensor_interval = 10.0
    assert nodes(rack)[("server", "oss01")].reasons == [
        f"its BMC has not answered for 25 s (no answer to its polls since {clock(NOW - 25)}): "
        "only the PDU can fence it"
    ]
    # Without the sensor's interval it says when the last answer came, not a duration.
    oss01.sensor_interval = None
    assert nodes(rack)[("server", "oss01")].reasons == [
        f"its BMC has not answered since {clock(NOW - 35)} (its last answer): "
        "only the PDU can fence it"
    ]


def test_an_array_no_server_reports_is_unknown_and_one_reporting_server_is_enough():
    rack = make_rack()
    array = unit(rack).arrays[0]
    array.last_seen = None
    assert nodes(rack)[("array", "ssu01-a")].reasons == [
        "its state is unknown: no server's sensor reports it"
    ]
    # oss01 down: oss02's sensor still reads the array (the newest report of either counts).
    server(rack, "oss01").last_seen = NOW - 300
    array.last_seen = NOW - 5
    assert nodes(rack)[("array", "ssu01-a")].status == rules.GREEN


def collected(rack, collector_seen: float | None, **collector):
    """ssu01-a read by the array collector on mgmt01, its newest round ``collector_seen``."""
    unit(rack).arrays[0].collected = True
    rack.array_collector = rules.ArrayCollectorFacts(
        "mgmt01", last_seen=collector_seen, interval=60.0, **collector
    )
    return unit(rack).arrays[0]


def test_an_array_the_array_collector_reads_names_the_collector_and_what_to_check():
    rack = make_rack()
    array = collected(rack, collector_seen=NOW - 130)
    array.last_seen = NOW - 160
    array.interval = 60.0
    assert nodes(rack)[("array", "ssu01-a")].reasons == [
        "its state is unknown: the array collector on mgmt01 has not reported it for 2 min "
        "(ostara-arrays): check the ostara-arrays service there (systemctl status "
        "ostara-arrays; journalctl -u ostara-arrays) and its way to InfluxDB"
    ]
    # Nothing of it in the last hour.
    array.last_seen = None
    rack.array_collector.last_seen = None
    assert nodes(rack)[("array", "ssu01-a")].reasons == [
        "its state is unknown: the array collector on mgmt01 has never reported (ostara-arrays): "
        "check that the ostara-arrays service runs there and reaches InfluxDB"
    ]
    # The collector goes on, without this array: the array's configuration, not the service.
    rack.array_collector.last_seen = NOW - 10
    array.last_seen = NOW - 200
    reasons = nodes(rack)[("array", "ssu01-a")].reasons
    assert reasons[0].startswith(
        "its state is unknown: the array collector on mgmt01 has not reported this array for "
        "3 min, though its rounds go on (ostara-arrays): check the array's management addresses"
    ), reasons
    # The other array, read through SMcli by its servers, keeps the servers' wording.
    mds_array = rack.filesystems[0].units[0].arrays[0]
    mds_array.last_seen = None
    assert nodes(rack)[("array", "mds01-a")].reasons == [
        "its state is unknown: no server's sensor reports it"
    ]


def test_an_array_collector_behind_makes_the_arrays_it_reads_orange_and_says_why():
    rack = make_rack()
    collected(rack, collector_seen=NOW - 5, late=25.0, run_seconds=85.0)
    found = nodes(rack)
    assert found[("array", "ssu01-a")].status == ORANGE
    assert found[("array", "ssu01-a")].reasons == [
        "the array collector on mgmt01 is behind: its run of the arrays is 25 s overdue (its "
        "last run took 85 s) (ostara-arrays; check its log, journalctl -u ostara-arrays, and "
        "the arrays' answers)"
    ]
    # Arrays it does not read are not its concern; on time, the array is green again.
    assert found[("array", "mds01-a")].status == rules.GREEN
    rack.array_collector.late = 0.0
    assert nodes(rack)[("array", "ssu01-a")].status == rules.GREEN


def test_a_group_a_failed_drawer_took_beyond_its_redundancy_says_so_in_red():
    rack = drawer_out(make_rack(osts=12), groups=2)
    group = unit(rack).arrays[0].volume_groups[1]
    group.state = "failed"
    group.lost_drives.append(rules.DriveFacts("ssu01-a-e0 drawer 1 slot 5", "Missing", "0,1,5"))
    array = nodes(rack)[("array", "ssu01-a")]
    assert array.status == RED
    assert array.reasons == [
        "drawer 1 of ssu01-a-e0 has failed: its 5 drives (slots 1-5) are missing; volume group "
        "ssu01-a-vg00 is degraded until the drawer is back",
        "volume group ssu01-a-vg01 has failed (drawer 1 of ssu01-a-e0 has failed, slots 3-5 "
        "missing): the target on it is lost",
    ]
