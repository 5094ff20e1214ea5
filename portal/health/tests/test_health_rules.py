"""The health rules on plain facts: each row of the failure matrix gives the colours and reasons
that the dashboard shows (DESIGN.md §2 and §7)."""

from __future__ import annotations

import pytest

from portal.health import rules
from portal.health.rules import GREEN, GREY, ORANGE, RED

NOW = 1_700_000_000.0


def make_rack(osts: int = 4, thresholds: rules.Thresholds | None = None) -> rules.RackFacts:
    """One filesystem: an MDS pair with an MGS and an MDT, and one SSU of two OSS with one array
    and ``osts`` OSTs, even ones on oss01, odd ones on oss02, all healthy and half full."""
    mds = [rules.ServerFacts(h, "mds", last_seen=NOW - 5) for h in ("mds01", "mds02")]
    mdt_group = rules.VolumeGroupFacts("mds01-a-vg00", state="optimal", redundancy=1)
    mds_unit = rules.UnitFacts(
        kind="pair",
        name="mds01",
        pair=rules.PairFacts("mds01", "mds", mds),
        arrays=[
            rules.ArrayFacts(
                "mds01-a",
                last_seen=NOW - 5,
                controllers={"A": "optimal", "B": "optimal"},
                volume_groups=[mdt_group],
            )
        ],
        targets=[
            rules.TargetFacts("scratch-MGS", "MGT", "mds01", "mds02", True, "mds01", mdt_group),
            rules.TargetFacts("scratch-MDT0000", "MDT", "mds01", "mds02", True, "mds01", mdt_group),
        ],
    )
    oss = [
        rules.ServerFacts(
            h,
            "oss",
            last_seen=NOW - 5,
            cpu_idle_percent=70,
            memory_available_percent=60,
            bmc_last_seen=NOW - 5,
            bmc_readings=[
                rules.BmcReading("CPU1 Temp", "temperature", 45, True),
                rules.BmcReading("FAN1", "fan", 4200, True),
            ],
        )
        for h in ("oss01", "oss02")
    ]
    groups = [
        rules.VolumeGroupFacts(f"ssu01-a-vg{i:02d}", state="optimal", redundancy=2)
        for i in range(osts)
    ]
    targets = [
        rules.TargetFacts(
            label=f"scratch-OST{i:04x}",
            kind="OST",
            primary="oss01" if i % 2 == 0 else "oss02",
            failover="oss02" if i % 2 == 0 else "oss01",
            served_by="oss01" if i % 2 == 0 else "oss02",
            volume_group=groups[i],
            kbytes_total=1000,
            kbytes_free=500,
            kbytes_avail=500,
        )
        for i in range(osts)
    ]
    ssu = rules.UnitFacts(
        kind="ssu",
        name="ssu01",
        pair=rules.PairFacts("ssu01", "oss", oss),
        arrays=[
            rules.ArrayFacts(
                "ssu01-a",
                last_seen=NOW - 5,
                controllers={"A": "optimal", "B": "optimal"},
                volume_groups=groups,
            )
        ],
        targets=targets,
    )
    return rules.RackFacts(
        now=NOW,
        thresholds=thresholds or rules.Thresholds(),
        filesystems=[rules.FilesystemFacts("scratch", [mds_unit, ssu])],
    )


def nodes(rack: rules.RackFacts) -> dict[tuple[str, str], rules.Node]:
    (tree,) = rules.evaluate(rack)
    return {(node.kind, node.name): node for node, _ in tree.walk()}


def unit(rack: rules.RackFacts, name: str = "ssu01") -> rules.UnitFacts:
    return next(u for u in rack.filesystems[0].units if u.name == name)


def server(rack: rules.RackFacts, hostname: str) -> rules.ServerFacts:
    return next(
        s for u in rack.filesystems[0].units for s in u.pair.servers if s.hostname == hostname
    )


def target(rack: rules.RackFacts, label: str) -> rules.TargetFacts:
    return next(t for u in rack.filesystems[0].units for t in u.targets if t.label == label)


def test_a_rack_as_designed_is_green_everywhere_with_no_reasons():
    found = nodes(make_rack())
    assert {node.status for node in found.values()} == {GREEN}
    assert all(node.reasons == [] for node in found.values())
    assert ("ssu", "ssu01") in found and ("pair", "mds01") in found
    assert found[("target", "scratch-OST0001")].summary["server"] == "oss02"
    assert found[("filesystem", "scratch")].summary["fill_percent"] == 50.0


def test_the_tree_puts_servers_under_their_pair_and_targets_and_arrays_under_the_ssu():
    (tree,) = rules.evaluate(make_rack())
    assert tree.kind == "filesystem"
    assert [(c.kind, c.name) for c in tree.children] == [("pair", "mds01"), ("ssu", "ssu01")]
    ssu = tree.children[1]
    assert [c.kind for c in ssu.children] == ["pair", "array"] + ["target"] * 4
    assert [c.name for c in ssu.children[0].children] == ["oss01", "oss02"]
    as_json = tree.as_dict()
    assert set(as_json) == {"kind", "name", "status", "reasons", "summary", "children"}


def test_one_failed_drive_makes_the_ost_orange_naming_the_drive_and_the_volume_group():
    rack = make_rack()
    group = target(rack, "scratch-OST0002").volume_group
    group.state = "degraded"
    group.lost_drives = [rules.DriveFacts("ssu01-a-e0 drawer 3 slot 5", "failed")]
    found = nodes(rack)
    ost = found[("target", "scratch-OST0002")]
    assert ost.status == ORANGE
    assert ost.reasons == [
        "volume group ssu01-a-vg02 is degraded: drive ssu01-a-e0 drawer 3 slot 5 failed"
    ]
    assert found[("ssu", "ssu01")].status == ORANGE
    assert found[("filesystem", "scratch")].status == ORANGE
    assert found[("target", "scratch-OST0000")].status == GREEN
    assert found[("server", "oss01")].status == GREEN


def test_two_failed_drives_in_one_group_leave_no_redundancy_and_the_ost_is_red():
    rack = make_rack()
    group = target(rack, "scratch-OST0001").volume_group
    group.lost_drives = [
        rules.DriveFacts("ssu01-a-e0 drawer 1 slot 3", "failed"),
        rules.DriveFacts("ssu01-a-e0 drawer 2 slot 3", "failed"),
    ]
    ost = nodes(rack)[("target", "scratch-OST0001")]
    assert ost.status == RED
    assert "no redundancy left" in ost.reasons[0]
    assert "drawer 1 slot 3" in ost.reasons[0] and "drawer 2 slot 3" in ost.reasons[0]


def test_three_failed_drives_lose_the_ost_and_turn_the_filesystem_red():
    rack = make_rack()
    group = target(rack, "scratch-OST0003").volume_group
    group.state = "failed"
    group.lost_drives = [
        rules.DriveFacts(f"ssu01-a-e1 drawer {d} slot 7", "failed") for d in (1, 2, 3)
    ]
    found = nodes(rack)
    assert found[("target", "scratch-OST0003")].status == RED
    assert "has failed" in found[("target", "scratch-OST0003")].reasons[0]
    fs = found[("filesystem", "scratch")]
    assert fs.status == RED
    assert any("scratch-OST0003 lost" in reason for reason in fs.reasons)


def test_the_array_reporting_a_degraded_group_counts_even_before_drives_are_named():
    rack = make_rack()
    target(rack, "scratch-OST0000").volume_group.state = "degraded"
    ost = nodes(rack)[("target", "scratch-OST0000")]
    assert ost.status == ORANGE
    assert "ssu01-a-vg00 is degraded" in ost.reasons[0]


def test_a_whole_drawer_lost_degrades_every_group_of_the_enclosure_but_all_stay_online():
    rack = make_rack()
    for i, t in enumerate(unit(rack).targets):
        # A RAID-6 8+2 group has two drives in each drawer: a drawer takes two of each group.
        t.volume_group.lost_drives = [
            rules.DriveFacts(f"ssu01-a-e0 drawer 4 slot {2 * i + 1}", "missing"),
            rules.DriveFacts(f"ssu01-a-e0 drawer 4 slot {2 * i + 2}", "missing"),
        ]
    found = nodes(rack)
    assert {found[("target", t.label)].status for t in unit(rack).targets} == {ORANGE}
    assert found[("filesystem", "scratch")].status == ORANGE


def test_an_oss_crash_makes_the_server_red_its_osts_orange_on_the_partner_and_the_ssu_orange():
    rack = make_rack()
    server(rack, "oss01").last_seen = NOW - 95
    for t in unit(rack).targets:
        t.served_by = "oss02"
    found = nodes(rack)
    oss01 = found[("server", "oss01")]
    assert oss01.status == RED
    assert "its sensor has sent nothing for 95 s" in oss01.reasons[0]
    assert found[("server", "oss02")].status == GREEN
    for label in ("scratch-OST0000", "scratch-OST0002"):
        ost = found[("target", label)]
        assert ost.status == ORANGE
        assert ost.reasons == ["served by its failover server oss02, not its primary oss01"]
    assert found[("target", "scratch-OST0001")].status == GREEN
    assert found[("pair", "ssu01")].status == ORANGE
    assert found[("ssu", "ssu01")].status == ORANGE
    assert found[("filesystem", "scratch")].status == ORANGE
    assert any("oss02 carries the pair" in reason for reason in found[("pair", "ssu01")].reasons)


def test_the_alerts_flags_a_target_on_its_partner_and_a_silent_server():
    rack = make_rack()
    server(rack, "oss01").last_seen = NOW - 95
    target(rack, "scratch-OST0000").served_by = "oss02"
    found = nodes(rack)
    assert found[("target", "scratch-OST0000")].summary.get("on_partner") is True
    assert "on_partner" not in found[("target", "scratch-OST0002")].summary  # on oss01 still
    assert "on_partner" not in found[("target", "scratch-OST0001")].summary  # its primary
    assert found[("server", "oss01")].summary.get("silent") is True
    assert "silent" not in found[("server", "oss02")].summary


def test_a_target_mounted_nowhere_is_red():
    rack = make_rack()
    target(rack, "scratch-OST0001").served_by = None
    found = nodes(rack)
    assert found[("target", "scratch-OST0001")].status == RED
    assert found[("target", "scratch-OST0001")].reasons == ["not mounted on any server"]
    assert found[("ssu", "ssu01")].status == RED
    assert found[("filesystem", "scratch")].status == RED


def test_both_servers_of_a_pair_silent_make_the_pair_and_its_targets_red():
    rack = make_rack()
    for hostname in ("oss01", "oss02"):
        server(rack, hostname).last_seen = None
    for t in unit(rack).targets:
        t.served_by = None
    found = nodes(rack)
    assert found[("pair", "ssu01")].status == RED
    assert "no server of the pair is working" in found[("pair", "ssu01")].reasons
    assert found[("target", "scratch-OST0000")].reasons == [
        "not mounted on any server (no report from oss01, oss02)"
    ]


def test_a_public_lnet_link_down_moves_targets_and_shows_the_server_not_green():
    rack = make_rack()
    oss01 = server(rack, "oss01")
    oss01.lnet_up = False
    for t in unit(rack).targets:
        t.served_by = "oss02"
    found = nodes(rack)
    assert found[("server", "oss01")].status in (ORANGE, RED)
    assert any("LNet" in reason for reason in found[("server", "oss01")].reasons)
    assert any("run on oss02" in reason for reason in found[("server", "oss01")].reasons)
    assert found[("target", "scratch-OST0000")].status == ORANGE


def test_a_dead_bmc_leaves_only_the_pdu_to_fence_and_the_server_is_orange():
    rack = make_rack()
    server(rack, "oss02").bmc_last_seen = NOW - 300
    found = nodes(rack)
    assert found[("server", "oss02")].status == ORANGE
    assert "only the PDU can fence it" in found[("server", "oss02")].reasons[0]


def test_one_sas_path_down_is_orange_and_all_paths_to_an_array_down_is_red():
    rack = make_rack()
    server(rack, "oss01").sas_paths = {"ssu01-a/A": False, "ssu01-a/B": True}
    assert nodes(rack)[("server", "oss01")].status == ORANGE
    server(rack, "oss01").sas_paths = {"ssu01-a/A": False, "ssu01-a/B": False}
    assert nodes(rack)[("server", "oss01")].status == RED


def test_a_failed_raid_controller_makes_the_array_orange_and_both_failed_make_it_red():
    rack = make_rack()
    array = unit(rack).arrays[0]
    array.controllers["B"] = "failed"
    found = nodes(rack)
    assert found[("array", "ssu01-a")].status == ORANGE
    assert found[("array", "ssu01-a")].reasons == [
        "controller B has failed: controller A serves every volume"
    ]
    array.controllers["A"] = "failed"
    assert nodes(rack)[("array", "ssu01-a")].status == RED


def test_a_controller_silent_on_its_management_address_is_named_and_a_failed_one_is_not():
    rack = make_rack()
    array = unit(rack).arrays[0]
    array.unanswered, array.answered = ["A"], ["B"]
    found = nodes(rack)[("array", "ssu01-a")]
    assert found.status == ORANGE
    assert found.reasons == [
        "controller A does not answer on its management address: the array is watched through "
        "controller B alone (check the controller's management port and its network)"
    ]
    # A controller the array itself reports failed is said once, as failed.
    array.controllers["A"] = "failed"
    assert nodes(rack)[("array", "ssu01-a")].reasons == [
        "controller A has failed: controller B serves every volume"
    ]
    array.controllers["A"] = "optimal"
    array.unanswered, array.answered = [], ["A", "B"]
    assert nodes(rack)[("array", "ssu01-a")].status == GREEN
    # A controller that answered but refused is not sent to its network: what it refused.
    array.refused, array.answered = {"A": "account"}, ["B"]
    found = nodes(rack)[("array", "ssu01-a")]
    assert found.status == ORANGE
    assert found.reasons == [
        "controller A refused the monitor account: check its user and password (Inventory → "
        "Storage arrays in the admin)"
    ]
    array.refused = {"A": "certificate"}
    assert "certificate other than the one pinned" in nodes(rack)[("array", "ssu01-a")].reasons[0]


@pytest.mark.parametrize(
    ("fill", "status"), [(79.9, GREEN), (80.0, ORANGE), (94.9, ORANGE), (95.0, RED)]
)
def test_ost_capacity_is_orange_from_80_and_red_from_95_percent(fill, status):
    rack = make_rack()
    ost = target(rack, "scratch-OST0000")
    ost.kbytes_total, ost.kbytes_free, ost.kbytes_avail = (
        10000,
        10000 - fill * 100,
        10000 - fill * 100,
    )
    assert nodes(rack)[("target", "scratch-OST0000")].status == status


def test_changed_capacity_thresholds_change_the_colour():
    limits = rules.Thresholds(capacity_warning_percent=40, capacity_critical_percent=45)
    found = nodes(make_rack(thresholds=limits))
    assert found[("target", "scratch-OST0000")].status == RED
    assert found[("target", "scratch-OST0000")].reasons == ["50.0 % full (critical at 45 %)"]


@pytest.mark.parametrize(("celsius", "status"), [(84, GREEN), (85, ORANGE), (95, RED)])
def test_cpu_temperatures_are_orange_from_85_and_red_from_95_celsius(celsius, status):
    rack = make_rack()
    server(rack, "oss01").bmc_readings[0].value = celsius
    node = nodes(rack)[("server", "oss01")]
    assert node.status == status
    if status != GREEN:
        level, limit = ("warning", 85) if status == ORANGE else ("critical", 95)
        assert node.reasons[0] == (
            f"CPU1 Temp at {celsius} °C ({level} at {limit} °C, the CPU threshold)"
        )


@pytest.mark.parametrize(
    ("sensor", "kind"),
    [
        ("CPU1 Temp", "cpu"),
        ("Processor 2 Temp", "cpu"),
        ("Inlet Temp", "inlet"),
        ("System Board Inlet Temp", "inlet"),
        ("Ambient", "inlet"),
        ("Exhaust Temp", "exhaust"),
        ("DIMM A1 Temp", "dimm"),
        ("PS1 Temperature", "psu"),
        ("PCH Temp", "other"),
    ],
)
def test_temperature_sensors_are_classified_by_their_bmc_names(sensor, kind):
    assert rules.temperature_kind(sensor) == kind


def test_an_inlet_is_hot_far_below_a_cpu_and_a_bmc_threshold_comes_first():
    rack = make_rack()
    readings = server(rack, "oss01").bmc_readings
    readings.append(rules.BmcReading("Inlet Temp", "temperature", 41, True))
    node = nodes(rack)[("server", "oss01")]
    assert node.status == ORANGE
    assert node.reasons == ["Inlet Temp at 41 °C (warning at 40 °C, the inlet air threshold)"]
    readings[-1].upper_nc, readings[-1].upper_cr = 42.0, 47.0
    assert nodes(rack)[("server", "oss01")].status == GREEN
    readings[0].value, readings[0].upper_nc, readings[0].upper_cr = 90, 88.0, 93.0
    assert nodes(rack)[("server", "oss01")].reasons == [
        "CPU1 Temp at 90 °C (warning at 88 °C, the BMC's threshold)"
    ]


def test_a_busy_cpu_and_short_memory_are_warnings_then_critical():
    rack = make_rack()
    server(rack, "oss01").cpu_idle_percent = 5
    assert nodes(rack)[("server", "oss01")].status == ORANGE
    server(rack, "oss01").cpu_idle_percent = 1
    assert nodes(rack)[("server", "oss01")].status == RED
    server(rack, "oss01").cpu_idle_percent = 50
    server(rack, "oss01").memory_available_percent = 2
    assert "of memory available" in nodes(rack)[("server", "oss01")].reasons[0]


def test_a_failed_fan_is_orange_and_lustre_unhealthy_is_red():
    rack = make_rack()
    server(rack, "oss02").bmc_readings[1].ok = False
    assert nodes(rack)[("server", "oss02")].status == ORANGE
    server(rack, "oss02").lustre_healthy = False
    assert nodes(rack)[("server", "oss02")].status == RED


def test_an_uneven_ost_fill_beyond_17_points_makes_the_filesystem_orange():
    rack = make_rack()
    target(rack, "scratch-OST0003").kbytes_free = 250
    target(rack, "scratch-OST0003").kbytes_avail = 250
    found = nodes(rack)
    fs = found[("filesystem", "scratch")]
    assert fs.status == ORANGE
    assert fs.reasons[0] == (
        "OST fill differs by 25.0 points (scratch-OST0003 75.0 %, scratch-OST0000 50.0 %; "
        "warning at 17 points): Lustre stops allocating round-robin"
    )
    assert found[("ssu", "ssu01")].status == GREEN


def test_planned_targets_and_silent_servers_of_a_new_ssu_are_grey_and_do_not_colour_parents():
    rack = make_rack()
    new = unit(rack)
    for s in new.pair.servers:
        s.last_seen = None
    for t in new.targets:
        t.in_service, t.served_by = False, None
    for a in new.arrays:
        a.last_seen = None
    found = nodes(rack)
    assert found[("ssu", "ssu01")].status == GREY
    assert found[("server", "oss01")].status == GREY
    assert found[("target", "scratch-OST0000")].status == GREY
    assert found[("filesystem", "scratch")].status == GREEN


def test_a_parent_repeats_its_childrens_reasons_with_their_names_and_counts_the_rest():
    rack = make_rack(osts=12)
    for t in unit(rack).targets:
        t.volume_group.state = "degraded"
    ssu = nodes(rack)[("ssu", "ssu01")]
    # The target says it; the array's same sentence is not repeated.
    assert ssu.reasons[0] == (
        "scratch-OST0000: volume group ssu01-a-vg00 is degraded (the array names no lost drive)"
    )
    assert not any(reason.startswith("ssu01-a: ") for reason in ssu.reasons)
    assert ssu.reasons[-1] == "and 4 more"
    assert len(ssu.reasons) == rules.PARENT_REASONS + 1


def test_a_fenced_server_back_up_and_healthy_is_orange_ready_for_failback():
    rack = make_rack()
    for t in unit(rack).targets:
        t.served_by = "oss02"
    found = nodes(rack)
    assert found[("server", "oss01")].status == ORANGE
    assert found[("server", "oss01")].reasons == [
        "ready for failback: both of its targets run on oss02; fail back when you are ready"
    ]
    assert found[("server", "oss01")].summary["ready_for_failback"] is True
    assert found[("server", "oss01")].summary["failed_over"] is True
    assert "failed_over" not in found[("server", "oss02")].summary
    assert found[("ssu", "ssu01")].status == ORANGE
    # Not healthy yet (Lustre's health_check fails): red, it is the cause, not a decision.
    server(rack, "oss01").lustre_healthy = False
    found = nodes(rack)
    assert found[("server", "oss01")].status == RED
    assert (
        "both of its targets run on oss02: it was fenced or lost its service; "
        "fail back once the cause is fixed"
    ) in found[("server", "oss01")].reasons
    assert "ready_for_failback" not in found[("server", "oss01")].summary
    assert found[("server", "oss01")].summary["failed_over"] is True
    server(rack, "oss01").lustre_healthy = None
    # The operator fails one target back: the server works again, with less margin.
    target(rack, "scratch-OST0000").served_by = "oss01"
    found = nodes(rack)
    assert found[("server", "oss01")].status == ORANGE
    assert found[("server", "oss01")].reasons[0].startswith("1 of its 2 targets run on oss02")


def test_a_server_in_maintenance_is_orange_with_its_window_not_red():
    rack = make_rack()
    for t in unit(rack).targets:
        t.served_by = "oss02"
    server(rack, "oss01").maintenance = "until 2026-11-23 16:00: BIOS update"
    found = nodes(rack)
    assert found[("server", "oss01")].status == ORANGE
    assert found[("server", "oss01")].reasons == [
        "in maintenance until 2026-11-23 16:00: BIOS update; 2 of its 2 targets run on its partner"
    ]
    # Still not where it belongs, but moved on purpose: no "on its failover server" alert.
    moved = found[("target", "scratch-OST0000")]
    assert moved.status == ORANGE and not moved.summary.get("on_partner")
    assert moved.reasons == [
        "served by its failover server oss02 while its primary oss01 is in maintenance"
    ]
