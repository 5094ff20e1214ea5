"""The rules on the redundant paths the servers' own tools report (corosync's heartbeat, LNet,
multipath's SAS paths) and on the chassis power a partner reads from a silent server's BMC."""

from __future__ import annotations

from portal.health.rules import GREEN, ORANGE, RED
from portal.health.tests.test_health_rules import NOW, make_rack, nodes, server, unit


def healthy_paths(rack):
    for host in ("oss01", "oss02"):
        facts = server(rack, host)
        facts.heartbeat_up = facts.partner_heard = facts.cluster_running = True
        facts.lnet_up = facts.lnet_partner_ping = True
        facts.power_answered, facts.power_on = True, True
        facts.power_polled_by = "oss02" if host == "oss01" else "oss01"
    return rack


def test_every_path_up_is_green():
    found = nodes(healthy_paths(make_rack()))
    assert found[("server", "oss01")].status == GREEN
    assert found[("server", "oss01")].reasons == []


def test_a_fenced_server_is_powered_off_and_its_partner_lost_the_heartbeat():
    rack = healthy_paths(make_rack())
    oss01 = server(rack, "oss01")
    oss01.last_seen = NOW - 120
    oss01.power_on = False
    server(rack, "oss02").partner_heard = False
    server(rack, "oss02").heartbeat_up = False
    for t in unit(rack).targets:
        t.served_by = "oss02"
    found = nodes(rack)
    reasons = found[("server", "oss01")].reasons
    assert found[("server", "oss01")].status == RED
    assert reasons[0].startswith(
        "powered off (fenced, or shut down): oss02 reaches its BMC, which reports the chassis off"
    )
    assert "oss02 has lost the heartbeat (corosync) to it" in reasons
    # The survivor's lost ring is its partner's absence, not its own fault.
    assert found[("server", "oss02")].status == GREEN


def test_a_silent_server_whose_bmc_says_on_is_hung_not_fenced():
    rack = healthy_paths(make_rack())
    server(rack, "oss01").last_seen = NOW - 120
    reason = nodes(rack)[("server", "oss01")].reasons[0]
    assert "while oss02 reaches its BMC, which reports the chassis on: hung or crashed" in reason


def test_private_switch_down_both_servers_orange_and_unfenceable():
    rack = healthy_paths(make_rack())
    for host in ("oss01", "oss02"):
        facts = server(rack, host)
        facts.heartbeat_up = facts.partner_heard = facts.power_answered = False
        facts.power_on = None
    found = nodes(rack)
    for host, partner in (("oss01", "oss02"), ("oss02", "oss01")):
        assert found[("server", host)].status == ORANGE
        assert found[("server", host)].reasons == [
            f"its heartbeat (corosync ring) to {partner} is down: the pair cannot agree",
            f"its BMC does not answer {partner} over the management network: with the "
            "heartbeat down too, it cannot be fenced",
        ]


def test_private_switch_down_with_two_corosync_links_both_orange_still_fenceable():
    """Two knet links (management and private networks): each server still hears its partner
    on link 0 and reaches its BMC, so the pair agrees and can fence, down to one link."""
    rack = healthy_paths(make_rack())
    for host in ("oss01", "oss02"):
        server(rack, host).heartbeat_up = False  # link 1 disconnected, partner_heard kept
    found = nodes(rack)
    for host, partner in (("oss01", "oss02"), ("oss02", "oss01")):
        assert found[("server", host)].status == ORANGE
        reason = (
            f"one of its corosync links to {partner} is down (a heartbeat cable or the private "
            "switch): the cluster runs on the other link alone"
        )
        assert found[("server", host)].reasons == [reason]
        assert found[("server", host)].summary["redundancy"] == [reason]  # the alert's flag
    assert found[("pair", "ssu01")].status == ORANGE


def test_lnet_down_names_lnetctl_and_the_partner_that_cannot_ping_it():
    rack = healthy_paths(make_rack())
    server(rack, "oss01").lnet_up = False
    server(rack, "oss02").lnet_partner_ping = False
    reasons = nodes(rack)[("server", "oss01")].reasons
    assert reasons == [
        "its LNet (public network) link is down (lnetctl net show); oss02 cannot lnetctl ping it"
    ]


def test_sas_paths_lost_are_named_by_array_and_kept_from_a_silent_servers_last_report():
    rack = healthy_paths(make_rack())
    oss01 = server(rack, "oss01")
    oss01.sas_paths = {"ssu01-a/1": False, "ssu01-a/2": True}
    found = nodes(rack)
    assert found[("server", "oss01")].status == ORANGE
    assert found[("server", "oss01")].reasons == [
        "1 of its 2 SAS paths to ssu01-a is down (multipath): multipath carries on over the other"
    ]
    oss01.sas_paths = {"ssu01-a/1": False, "ssu01-a/2": False}
    oss01.last_seen = NOW - 120
    oss01.power_on = False
    reasons = nodes(rack)[("server", "oss01")].reasons
    assert (
        "its last report: every SAS path to ssu01-a is down (multipath): its targets fail over "
        "after the multipath timeout"
    ) in reasons


def test_a_server_whose_bmc_says_off_is_powered_off_even_if_something_reports_for_it():
    rack = healthy_paths(make_rack())
    oss01 = server(rack, "oss01")
    oss01.power_on = False
    oss01.cluster_running = False  # its corosync does not answer: it is off
    oss01.bmc_last_seen = NOW - 300  # nor does the in-band BMC reading
    found = nodes(rack)
    assert found[("server", "oss01")].status == RED
    assert found[("server", "oss01")].reasons == [
        "powered off (fenced, or shut down): oss02 reaches its BMC, which reports the chassis off"
    ]
