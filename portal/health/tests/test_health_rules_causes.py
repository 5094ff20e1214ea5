"""The rules that name a fault's cause for the alerts (issue 30): every fencing level watched,
a repaired server ready for failback, the redundant parts lost and the failed parts of an
array as structured flags, and the objects a job acts on shown as moving or being built
instead of an alarm."""

from __future__ import annotations

import pytest

from portal.health import rules
from portal.health.rules import GREEN, GREY, ORANGE, RED
from portal.health.tests.test_health_rules import make_rack, nodes, server, target, unit
from portal.health.tests.test_health_rules_paths import healthy_paths


def fenced_by_pdu_too(rack):
    """Both servers' PDU outlets polled by the partner, answering."""
    for host, partner, outlet in (
        ("oss01", "oss02", "pdu1 outlet 3"),
        ("oss02", "oss01", "pdu2 outlet 3"),
    ):
        facts = server(rack, host)
        facts.pdu, facts.pdu_answered, facts.pdu_polled_by = outlet, True, partner
    return rack


def test_both_fencing_levels_answering_is_green_with_the_levels_in_the_summary():
    found = nodes(fenced_by_pdu_too(healthy_paths(make_rack())))
    oss01 = found[("server", "oss01")]
    assert (oss01.status, oss01.reasons) == (GREEN, [])
    assert oss01.summary["fencing_levels"] == {"bmc": True, "pdu": True}
    assert "redundancy" not in oss01.summary


def test_a_pdu_that_does_not_answer_turns_its_server_orange_naming_the_pdu_and_outlet():
    rack = fenced_by_pdu_too(healthy_paths(make_rack()))
    server(rack, "oss01").pdu_answered = False
    found = nodes(rack)
    oss01 = found[("server", "oss01")]
    reason = (
        "fencing by PDU unavailable: PDU pdu1 outlet 3 does not answer oss02's fence_apc_snmp "
        "status; only its BMC can fence it"
    )
    assert (oss01.status, oss01.reasons) == (ORANGE, [reason])
    assert oss01.summary["fencing_levels"] == {"bmc": True, "pdu": False}
    assert oss01.summary["redundancy"] == [reason]
    assert found[("server", "oss02")].status == GREEN
    assert found[("ssu", "ssu01")].status == ORANGE


def test_a_lost_bmc_with_the_pdu_polled_says_fencing_by_bmc_unavailable():
    rack = fenced_by_pdu_too(healthy_paths(make_rack()))
    server(rack, "oss02").power_answered = False
    oss02 = nodes(rack)[("server", "oss02")]
    reason = (
        "fencing by BMC unavailable: its BMC does not answer oss01 over the management "
        "network; only the PDU can fence it"
    )
    assert (oss02.status, oss02.reasons) == (ORANGE, [reason])
    assert oss02.summary["fencing_levels"] == {"bmc": False, "pdu": True}
    assert oss02.summary["redundancy"] == [reason]


def test_private_switch_down_with_both_levels_polled_neither_server_can_be_fenced_red():
    rack = fenced_by_pdu_too(healthy_paths(make_rack()))
    for host in ("oss01", "oss02"):
        facts = server(rack, host)
        facts.heartbeat_up = facts.partner_heard = facts.power_answered = False
        facts.pdu_answered = False
        facts.power_on = None
    found = nodes(rack)
    for host, partner, pdu in (("oss01", "oss02", "pdu1"), ("oss02", "oss01", "pdu2")):
        node = found[("server", host)]
        cannot = (
            f"cannot be fenced: its BMC does not answer {partner} over the management network, "
            f"and PDU {pdu} outlet 3 does not answer {partner}'s fence_apc_snmp status; a fault "
            "of it would leave the pair stuck"
        )
        assert node.status == RED
        assert node.reasons == [
            f"its heartbeat (corosync ring) to {partner} is down: the pair cannot agree",
            cannot,
        ]
        assert node.summary["fencing_levels"] == {"bmc": False, "pdu": False}
        assert node.summary["redundancy"] == node.reasons
    # The pair cannot fail over: red, with the servers' causes, not "no server working".
    pair = found[("pair", "ssu01")]
    assert pair.status == RED
    assert not any("no server of the pair is working" in r for r in pair.reasons)
    assert any(r.startswith("oss01: cannot be fenced") for r in pair.reasons)
    # Its targets still run where they should.
    assert found[("target", "scratch-OST0000")].status == GREEN


def test_redundancy_flags_name_a_partial_sas_path_and_a_lost_heartbeat_ring():
    rack = healthy_paths(make_rack())
    oss01 = server(rack, "oss01")
    oss01.sas_paths = {"ssu01-a/1": False, "ssu01-a/2": True}
    oss01.heartbeat_up = False  # one of two knet links: oss02 is still heard on the other
    node = nodes(rack)[("server", "oss01")]
    assert node.summary["redundancy"] == [
        "one of its corosync links to oss02 is down (a heartbeat cable or the private switch): "
        "the cluster runs on the other link alone",
        "1 of its 2 SAS paths to ssu01-a is down (multipath): multipath carries on over the other",
    ]
    # Every path lost is not a lost redundant part but the server's service: no flag.
    oss01.heartbeat_up = True
    oss01.sas_paths = {"ssu01-a/1": False, "ssu01-a/2": False}
    assert "redundancy" not in nodes(rack)[("server", "oss01")].summary


def test_a_failed_drawer_and_a_controller_are_the_arrays_failed_parts():
    rack = make_rack(osts=4)
    array = unit(rack).arrays[0]
    array.controllers["B"] = "offline"
    for i, group in enumerate(array.volume_groups[:2]):
        group.lost_drives = [
            rules.DriveFacts(f"ssu01-a-e1 drawer 3 slot {i + 1}", "Missing", f"1,3,{i + 1}")
        ]
    array.lost_spares = [rules.DriveFacts("ssu01-a-e0 drawer 1 slot 12", "failed", "0,1,12")]
    found = nodes(rack)
    node = found[("array", "ssu01-a")]
    assert node.status == ORANGE
    assert node.summary["failed_parts"] == ["controller B", "drawer 3 of ssu01-a-e1"]
    assert node.summary["redundancy"] == [
        "controller B is offline: controller A serves every volume",
        "drawer 3 of ssu01-a-e1 has failed: its 2 drives (slots 1-2) are missing; volume groups "
        "ssu01-a-vg00, ssu01-a-vg01 are degraded until the drawer is back",
        "hot spare ssu01-a-e0 drawer 1 slot 12 has failed",
    ]
    ost = found[("target", "scratch-OST0000")]
    assert ost.summary["redundancy"] == [
        "volume group ssu01-a-vg00 is degraded: drawer 3 of ssu01-a-e1 has failed, slot 1 missing"
    ]
    assert "redundancy" not in found[("target", "scratch-OST0002")].summary
    # One missing drive is a drive pulled, not a drawer lost.
    array.volume_groups[1].lost_drives = []
    assert nodes(rack)[("array", "ssu01-a")].summary["failed_parts"] == ["controller B"]


def marked(rack, mark: rules.Mark, *keys: str):
    for key in keys:
        rack.marks[key] = mark
    return rack


def keyed(rack):
    """Keys on the SSU's objects, as the inventory gives them."""
    ssu = unit(rack)
    ssu.pair.key = "serverpair:2"
    for number, facts in enumerate(ssu.pair.servers, start=3):
        facts.key = f"server:{number}"
    ssu.arrays[0].key = "storagearray:1"
    for number, facts in enumerate(ssu.targets, start=10):
        facts.key = f"target:{number}"
    return rack


def test_a_failback_job_shows_its_servers_and_targets_moving_never_red():
    rack = keyed(make_rack())
    # Mid-failback: oss01's targets are unmounted (on no server) for a moment.
    for t in unit(rack).targets[::2]:
        t.served_by = None
    unmarked = nodes(rack)
    assert unmarked[("target", "scratch-OST0000")].status == RED
    mark = rules.Mark(7, "Fail back oss01")
    marked(rack, mark, "server:3", "server:4", "target:10", "target:12")
    found = nodes(rack)
    ost = found[("target", "scratch-OST0000")]
    assert ost.status == ORANGE
    assert ost.reasons[0] == "moving (job 7): Fail back oss01"
    assert "not mounted on any server" in ost.reasons[1]
    assert ost.summary["moving"] == {"job": 7, "title": "Fail back oss01"}
    assert found[("server", "oss01")].summary["moving"]["job"] == 7
    assert found[("target", "scratch-OST0001")].status == GREEN  # not one it moves
    assert found[("ssu", "ssu01")].status == ORANGE
    assert found[("filesystem", "scratch")].status == ORANGE


def test_a_pair_being_built_is_grey_whatever_its_sensors_say_yet():
    rack = keyed(make_rack())
    oss01 = server(rack, "oss01")
    oss01.last_seen = None  # its sensor is not started yet (the job's verify step)
    for t in unit(rack).targets:
        t.served_by = None
    assert nodes(rack)[("server", "oss01")].status == RED
    marked(rack, rules.Mark(3, "Provision ssu01 of scratch", builds=True), "serverpair:2")
    found = nodes(rack)
    for key in (("server", "oss01"), ("server", "oss02"), ("array", "ssu01-a")):
        assert found[key].status == GREY
        assert found[key].reasons[0] == "being built (job 3): Provision ssu01 of scratch"
        assert found[key].summary["building"] == {"job": 3, "title": "Provision ssu01 of scratch"}
    assert found[("target", "scratch-OST0003")].status == GREY
    assert found[("ssu", "ssu01")].status == GREY
    assert found[("filesystem", "scratch")].status == GREEN  # the MDS pair serves


@pytest.mark.parametrize("fault", ["lnet", "sas", "cluster", "power"])
def test_a_server_not_fit_to_take_its_targets_back_stays_red(fault):
    rack = healthy_paths(make_rack())
    for t in unit(rack).targets[::2]:
        t.served_by = "oss02"
    oss01 = server(rack, "oss01")
    if fault == "lnet":
        oss01.lnet_up = False
    elif fault == "sas":
        oss01.sas_paths = {"ssu01-a/1": False, "ssu01-a/2": True}
    elif fault == "cluster":
        oss01.cluster_running = False
    else:
        oss01.power_on = False
    node = nodes(rack)[("server", "oss01")]
    assert node.status == RED
    assert "ready_for_failback" not in node.summary
    assert node.summary["failed_over"] is True
    assert target(rack, "scratch-OST0000").served_by == "oss02"
