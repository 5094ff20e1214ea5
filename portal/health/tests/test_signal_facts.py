"""The sensors' points of the redundant paths (sensors/redundancy.py) into a server's facts:
the newest report of each, multipath maps counted per array, the partner's poll of its BMC."""

from __future__ import annotations

from portal.health import rules
from portal.health.services.facts import signal_facts
from portal.health.services.metrics import Metrics


def facts(metrics: Metrics, host: str = "oss01") -> rules.ServerFacts:
    server = rules.ServerFacts(host)
    signal_facts(
        server, metrics, {"scratch-OST0000": "ssu01-a", "scratch-OST0002": "ssu01-a"}, 10.0
    )
    return server


def test_nothing_reported_leaves_every_fact_unknown():
    server = facts(Metrics())
    assert (server.heartbeat_up, server.lnet_up, server.power_on, server.sas_paths) == (
        None,
        None,
        None,
        {},
    )


def test_the_newest_reports_become_facts():
    metrics = Metrics(
        cluster={
            "oss01": {"running": 1, "rings_faulty": 1, "peers_total": 1, "peers_connected": 0}
        },
        lnet_state={"oss01": {"nets_up": 0, "nets_down": 1, "peers_pinged": 1, "peer_ping_ok": 0}},
        multipath_faults={
            "oss01": [
                {"device": "scratch-OST0000", "paths_total": 2, "paths_failed": 1},
                {"device": "scratch-OST0002", "paths_total": 2, "paths_failed": 2},
                {"device": "mpathz", "paths_total": 2, "paths_failed": 1},
            ]
        },
        power={"oss01": {"answered": 1, "power_on": 0, "polled_by": "oss02"}},
    )
    server = facts(metrics)
    assert server.cluster_running and server.heartbeat_up is False
    assert server.partner_heard is False
    assert server.lnet_up is False and server.lnet_partner_ping is False
    # The worst map of an array says how many of its paths are down.
    assert server.sas_paths == {
        "ssu01-a/1": False,
        "ssu01-a/2": False,
        "device mpathz/1": False,
        "device mpathz/2": True,
    }
    assert (server.power_answered, server.power_on, server.power_polled_by) == (
        True,
        False,
        "oss02",
    )


def test_lnet_not_configured_is_not_a_link_down():
    assert facts(Metrics(lnet_state={"oss01": {"nets_up": 0, "nets_down": 0}})).lnet_up is None


# oss02 polls its partner every 4 s (its `sensor` point says): silent after 10 s.
EVERY_4_S = {"oss02": {"partner_bmc": 4.0, "partner_pdu": 4.0}}


def test_one_missed_poll_is_not_a_dead_bmc_but_a_silence_is():
    answered = {"answered": 1, "power_on": 1, "polled_by": "oss02", "time": 100_000}
    missed = {"answered": 0, "polled_by": "oss02", "time": 105_000}
    server = facts(
        Metrics(power={"oss01": missed}, power_ok={"oss01": answered}, intervals=EVERY_4_S)
    )
    assert (server.power_answered, server.power_on) == (True, True)
    long_ago = dict(answered, time=80_000)  # 25 s before the missed poll, silence is 10 s
    server = facts(
        Metrics(power={"oss01": missed}, power_ok={"oss01": long_ago}, intervals=EVERY_4_S)
    )
    assert server.power_answered is False


def test_polls_once_a_minute_lose_the_bmc_only_after_two_missed_and_a_half():
    """By default (no interval in the poller's `sensor` point) the partner is polled once a
    minute: the poll after the last answer missed is one missed poll, not a BMC lost."""
    answered = {"answered": 1, "power_on": 1, "polled_by": "oss02", "time": 100_000}
    for missed_at, lost in ((160_000, False), (220_000, False), (251_000, True)):
        missed = {"answered": 0, "polled_by": "oss02", "time": missed_at}
        server = facts(Metrics(power={"oss01": missed}, power_ok={"oss01": answered}))
        assert server.power_answered is (not lost), missed_at
        pdu = facts(Metrics(pdu={"oss01": missed}, pdu_ok={"oss01": answered}))
        assert pdu.pdu_answered is (not lost), missed_at


def test_the_pdu_outlets_poll_is_the_second_fencing_level_missed_once_or_lost():
    answered = {"answered": 1, "power_on": 1, "polled_by": "oss02", "time": 100_000}
    missed = {"answered": 0, "polled_by": "oss02", "time": 105_000}
    server = facts(Metrics(pdu={"oss01": answered}, pdu_ok={"oss01": answered}))
    assert (server.pdu_answered, server.pdu_polled_by) == (True, "oss02")
    assert facts(Metrics(pdu={"oss01": missed}, pdu_ok={"oss01": answered})).pdu_answered
    long_ago = {"oss01": dict(answered, time=80_000)}
    lost = facts(Metrics(pdu={"oss01": missed}, pdu_ok=long_ago, intervals=EVERY_4_S))
    assert lost.pdu_answered is False
    assert facts(Metrics(pdu={"oss01": missed})).pdu_answered is False
    assert facts(Metrics()).pdu_answered is None  # not polled: not a level lost
