"""One incident, one mail: rounds of alert evaluation over the colours of a planned SSU (its real
inventory rows, coloured by hand as the health engine would), with the default group wait of
30 s, against a real SMTP server on loopback."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from portal.alerts import conditions, defaults
from portal.alerts.choices import DeliveryStatus, EventStatus, GroupStatus
from portal.alerts.models import Delivery, Event, GroupMail, IncidentGroup, Rule, Transition
from portal.alerts.services.incident_rounds import TargetPlaces, place
from portal.alerts.services.incidents import acknowledge_group, active_incidents
from portal.alerts.services.observation import HealthIndex
from portal.alerts.tests.test_alert_evaluation import (
    T0,
    health,
    kinds,
    round_at,
    rule,
    text_of,
)
from portal.inventory.models import SSU, StorageArray, Target
from portal.inventory.services import save_plans
from portal.inventory.tests.conftest import load_spec

pytestmark = pytest.mark.django_db

VG_REASON = "volume group {} is degraded: drive failed"


class Rack:
    """The health keys of ssu01 as the health engine names them, green."""

    def __init__(self) -> None:
        Rule.objects.all().delete()
        save_plans([load_spec("mds_pair"), load_spec("reference_ssu")])
        ssu = SSU.objects.get(name="ssu01")
        self.ssu = f"ssu:{ssu.pk}"
        self.pair = f"pair:{ssu.pair_id}"
        filesystem = f"filesystem:{ssu.filesystem_id}"
        health(filesystem, "filesystem", ssu.filesystem.name)
        health(self.ssu, "ssu", "ssu01", parent=filesystem)
        health(self.pair, "pair", ssu.pair.name, parent=self.ssu)
        self.servers = {s.hostname: s for s in ssu.pair.servers.all()}
        for server in self.servers.values():
            health(f"server:{server.pk}", "server", server.hostname, parent=self.pair)
        self.arrays = {a.name: a for a in StorageArray.objects.filter(pair=ssu.pair)}
        for array in self.arrays.values():
            health(f"storagearray:{array.pk}", "array", array.name, parent=self.ssu)
        self.targets = list(
            Target.objects.filter(primary_server__pair=ssu.pair).select_related("volume_group")
        )
        for target in self.targets:
            health(f"target:{target.pk}", "target", target.label, parent=self.ssu)

    def server(self, hostname: str, status: str = "green", **summary) -> None:
        server = self.servers[hostname]
        health(f"server:{server.pk}", "server", hostname, status, parent=self.pair, **summary)

    def array(self, name: str, status: str = "green", **summary) -> None:
        array = self.arrays[name]
        health(f"storagearray:{array.pk}", "array", name, status, parent=self.ssu, **summary)

    def target(self, target: Target, status: str = "green", **summary) -> None:
        health(f"target:{target.pk}", "target", target.label, status, parent=self.ssu, **summary)

    def carried_by(self, hostname: str) -> list[Target]:
        return [t for t in self.targets if t.primary_server_id == self.servers[hostname].pk]

    def on(self, array: str) -> list[Target]:
        return [t for t in self.targets if t.volume_group.array_id == self.arrays[array].pk]


@pytest.fixture
def rack(db, settings):
    settings.OSTARA_ALERT_GROUP_WAIT = 30
    settings.OSTARA_ALERT_GROUP_INTERVAL = 300
    return Rack()


def default_rules() -> None:
    defaults.install(Rule, "root@localhost")


def rounds(start: int, end: int) -> None:
    for t in range(start, end, 10):
        round_at(t)


def server_down(rack: Rack, hostname: str = "oss02") -> list[Target]:
    rack.server(hostname, "red", down=True, failed_over=True, reasons=[f"{hostname} is down"])
    partner = "oss01" if hostname == "oss02" else "oss02"
    moved = rack.carried_by(hostname)
    for target in moved:
        rack.target(target, "orange", on_partner=True, reasons=[f"runs on {partner}"])
    return moved


def server_back(rack: Rack, hostname: str = "oss02") -> None:
    rack.server(hostname)
    for target in rack.carried_by(hostname):
        rack.target(target)


def test_a_server_down_with_its_targets_on_partner_is_one_mail_listing_them_muted(rack, smtp):
    rule(name="Anything red", severity="critical", health_state="red", repeat_seconds=3600)
    rule(name="Target on its failover server", health_state="on_partner")
    moved = server_down(rack)
    assert len(moved) >= 6
    rounds(0, 600)
    (firing,) = smtp.mailbox.messages
    subject = smtp.mailbox.subjects()[0]
    assert subject == f"[Ostara CRITICAL] ssu01: {len(moved) + 1} alerts – oss02 is down"
    text = text_of(firing)
    for target in moved:
        assert "muted: oss02 is down (runs on oss01)" in text
        assert target.label in text
    server_back(rack)
    rounds(600, 700)
    assert kinds(smtp) == ["Firing", "Resolved"]
    resolved = smtp.mailbox.messages[1]
    assert smtp.mailbox.subjects()[1].startswith(
        f"[Ostara CRITICAL] ssu01: {len(moved) + 1} alerts resolved – "
    )
    assert "Lasted" in text_of(resolved) and "10 min 0 s" in text_of(resolved)
    for target in moved:  # each object's page, once
        assert text_of(resolved).count(f"{target.label}: http://") == 1
    assert Delivery.objects.count() == 2  # one address, two mails: nothing else was written
    (group,) = IncidentGroup.objects.all()
    assert group.status == GroupStatus.RESOLVED and group.events.count() == len(moved) + 1


def test_with_the_default_rules_the_first_mail_waits_for_the_targets_moving_to_the_partner(
    rack, smtp
):
    default_rules()
    moved = server_down(rack)
    rounds(0, 300)  # "on partner" fires after its minute: the server's mail waits for it
    assert kinds(smtp) == ["Firing"]
    assert smtp.mailbox.subjects() == [
        f"[Ostara CRITICAL] ssu01: {len(moved) + 1} alerts – oss02 is down"
    ]
    assert text_of(smtp.mailbox.messages[0]).count("muted: oss02 is down") == len(moved)
    assert [int((m.at - T0).total_seconds()) for m in GroupMail.objects.all()] == [60]
    server_back(rack)  # the server's alert clears before its targets': no mail of their own
    rounds(300, 400)
    assert kinds(smtp) == ["Firing", "Resolved"]
    text = text_of(smtp.mailbox.messages[1])
    assert all(target.label in text for target in moved)
    assert text.count("muted: oss02 is down") == len(moved)


def test_a_server_red_then_fenced_is_one_mail_and_its_silence_no_news(rack, smtp):
    """Every SAS path lost: the server is red and mailed; its partner then fences it and its
    sensor falls silent, its targets move. Nothing of that is a second mail."""
    default_rules()
    rack.server("oss02", "red", reasons=["every SAS path to ssu01-b is down"])
    rounds(0, 100)
    assert kinds(smtp) == ["Firing"]
    moved = server_down(rack)
    rack.server("oss02", "red", down=True, failed_over=True, silent=True, reasons=["fenced"])
    rounds(100, 700)
    assert kinds(smtp) == ["Firing"]
    assert len(IncidentGroup.objects.get().mails.get().members) == 1
    server_back(rack)
    rounds(700, 800)
    assert kinds(smtp) == ["Firing", "Resolved"]
    resolved = text_of(smtp.mailbox.messages[1])
    assert "Sensor silent" in resolved and "told already by its alert 'Anything red'" in resolved
    assert all(target.label in resolved for target in moved)


def test_a_server_orange_then_red_is_news(rack, smtp):
    """A lost redundant part (a warning) mailed; the same server then turns red: the critical
    alert goes out after the group interval, it is not muted by the warning."""
    default_rules()
    lost = ["fencing by PDU unavailable: PDU pdu1 outlet 3 does not answer"]
    rack.server("oss01", "orange", redundancy=lost, reasons=lost)
    rounds(0, 200)
    rack.server("oss01", "red", redundancy=lost, reasons=["cannot be fenced", *lost])
    rounds(200, 600)
    assert kinds(smtp) == ["Firing", "More alerts"]
    assert smtp.mailbox.subjects()[1].startswith("[Ostara CRITICAL] ssu01: 2 alerts, 1 new – ")


def test_alerts_that_join_later_go_out_together_after_the_group_interval(rack, smtp):
    rule()
    first, second, third = rack.targets[:3]
    rack.target(first, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(0, 100)
    rack.target(second, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(100, 200)
    rack.target(third, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(200, 400)
    assert kinds(smtp) == ["Firing", "More alerts"]
    assert smtp.mailbox.subjects()[1].startswith("[Ostara WARNING] ssu01: 3 alerts, 2 new – ")
    # the first mail 30 s after the first alert, the next 300 s after it
    assert [int((m.at - T0).total_seconds()) for m in GroupMail.objects.all()] == [30, 330]


def test_a_fault_shorter_than_the_group_wait_mails_nothing_not_even_its_resolution(rack, smtp):
    rule()
    target = rack.targets[0]
    rack.target(target, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(0, 20)
    rack.target(target)
    rounds(20, 200)
    assert smtp.mailbox.messages == []
    assert Event.objects.get().status == EventStatus.RESOLVED
    assert IncidentGroup.objects.get().status == GroupStatus.RESOLVED


def test_acknowledging_an_incident_acknowledges_its_members_and_stops_its_reminders(rack, smtp):
    rule(repeat_seconds=600)
    rule(name="VG hourly", repeat_seconds=3600)
    for target in rack.targets[:2]:
        rack.target(target, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(0, 700)
    assert kinds(smtp) == ["Firing", "Reminder"]  # at 630: the shorter repeat, per group
    (group,) = active_incidents()
    olga = get_user_model().objects.create(username="olga")
    assert acknowledge_group(group, olga, "drives ordered") == 4
    assert all(e.acknowledged_by == olga for e in group.events.all())
    rounds(700, 2000)
    assert kinds(smtp) == ["Firing", "Reminder"]
    with pytest.raises(ValueError, match="already acknowledged by olga"):
        acknowledge_group(group, olga)


def test_the_mail_lists_its_members_in_a_table_with_links_in_text_and_html(rack, smtp):
    rule(name="Anything red", severity="critical", health_state="red")
    target = rack.targets[0]
    rack.target(target, "red", reasons=["not mounted on any server"])
    rounds(0, 40)
    (message,) = smtp.mailbox.messages
    assert smtp.mailbox.subjects() == [
        f"[Ostara CRITICAL] ssu01: 1 alert – {target.label}: not mounted on any server"
    ]
    text = text_of(message)
    header = next(line for line in text.splitlines() if line.startswith("Object"))
    assert header.split() == ["Object", "Rule", "Since", "Value"]
    assert f"{target.label}: http://" in text  # its object page
    assert "/alerts/" in text.split("The incident")[-1]
    html = message.get_body(preferencelist=("html",)).get_content()
    assert "<th>Object</th><th>Rule</th><th>Since</th><th>Value</th>" in html
    assert f"{target.label}</a>" in html and "not mounted on any server" in html
    event = Event.objects.get(object_label=target.label)
    assert f'/alerts/events/{event.pk}/">Anything red</a>' in html  # the alert's own page


def test_an_object_a_job_moves_neither_fires_nor_resolves(rack, smtp):
    rule(name="Target on its failover server", health_state="on_partner")
    first, second = rack.carried_by("oss02")[:2]
    moving = {"job": 7, "title": "Fail over oss02"}
    rack.target(first, "orange", on_partner=True, moving=moving)
    rack.target(second, "orange", on_partner=True)
    rounds(0, 100)
    assert [e.object_label for e in Event.objects.all()] == [second.label]
    rack.target(second, "orange", on_partner=False, moving=moving)  # failback under way
    rounds(100, 300)
    assert Event.objects.get().status == EventStatus.FIRING  # not resolved by the move


def test_redundancy_loss_mails_once_per_incident_with_the_default_rules(rack, smtp):
    default_rules()
    rack.server(
        "oss01",
        "orange",
        redundancy=["fencing by PDU unavailable: PDU pdu1 outlet 3 does not answer"],
        reasons=["fencing by PDU unavailable: PDU pdu1 outlet 3 does not answer"],
    )
    rounds(0, 600)
    assert smtp.mailbox.subjects() == [
        "[Ostara WARNING] ssu01: 1 alert – oss01: fencing by PDU unavailable: PDU pdu1 outlet 3 "
        "does not answer"
    ]


def test_a_failed_drawer_is_one_mail_with_its_volume_groups_muted(rack, smtp):
    default_rules()
    parts = ["drawer 3 of enclosure 1"]
    rack.array(
        "ssu01-a",
        "orange",
        failed_parts=parts,
        redundancy=["drawer 3 of enclosure 1 failed"],
        reasons=["drawer 3 of enclosure 1 failed"],
    )
    osts = rack.on("ssu01-a")
    for target in osts:
        rack.target(target, "orange", volume_group="degraded", reasons=["vg degraded"])
    rounds(0, 600)
    assert kinds(smtp) == ["Firing"]
    assert smtp.mailbox.subjects()[0] == (
        f"[Ostara WARNING] ssu01: {len(osts) + 1} alerts – ssu01-a: drawer 3 of enclosure 1 failed"
    )
    text = text_of(smtp.mailbox.messages[0])
    assert text.count("muted: ssu01-a has failed parts: drawer 3 of enclosure 1") == len(osts)
    # An OST of that array lost later is news, not explained by the drawer: it is mailed.
    rack.target(osts[0], "red", volume_group="failed", reasons=["vg failed"])
    rounds(600, 1000)
    assert kinds(smtp) == ["Firing", "More alerts"]
    assert smtp.mailbox.subjects()[1].startswith("[Ostara CRITICAL] ssu01: ")


def test_a_rule_s_group_by_names_the_place_its_alerts_share(rack):
    health_index = HealthIndex.load()
    places = TargetPlaces.load()
    target = rack.on("ssu01-a")[0]
    array = f"storagearray:{rack.arrays['ssu01-a'].pk}"
    server = f"server:{rack.servers['oss01'].pk}"
    filesystem = health_index.ancestry(rack.ssu)[-1]

    def key(group_by: str, object_key: str) -> str:
        return place(group_by, object_key, health_index, places)

    assert key("auto", f"target:{target.pk}") == rack.ssu
    assert key("auto", server) == rack.ssu  # the SSU, not the server pair inside it
    assert key("array", f"target:{target.pk}") == array
    assert key("array", array) == array
    assert key("array", server) == rack.ssu  # no array: as auto
    assert key("filesystem", server) == filesystem
    assert key("auto", filesystem) == filesystem
    assert key("pair", filesystem) == ""  # never the whole filesystem: its own incident
    assert key("object", server) == ""


@pytest.mark.parametrize("delivered", [DeliveryStatus.SENT, DeliveryStatus.SILENCED])
def test_an_alert_that_fired_before_grouping_resolves_in_one_incident_mail(rack, smtp, delivered):
    """As an upgrade finds it: firing, in no incident group, its firing mailed on its own (a
    resolution follows, in one incident mail) or silenced then (no resolution either)."""
    vg = rule()
    target = rack.targets[0]
    rack.target(target, "orange", volume_group="degraded", reasons=["vg degraded"])
    round_at(0)
    Event.objects.update(group=None)
    IncidentGroup.objects.all().delete()
    Delivery.objects.all().delete()
    firing = Transition.objects.create(event=Event.objects.get(rule=vg), kind="firing")
    Delivery.objects.create(transition=firing, address="root@localhost", status=delivered)
    rack.target(target)
    rounds(10, 100)
    expected = f"[Ostara WARNING] ssu01: 1 alert resolved – {target.label}: vg degraded"
    assert smtp.mailbox.subjects() == ([expected] if delivered == DeliveryStatus.SENT else [])
    assert Event.objects.get(rule=vg).group.status == GroupStatus.RESOLVED


def test_job_marks_hold_health_conditions_and_a_lost_redundant_part_is_one():
    lost = {"redundancy": ["BMC of oss01 does not answer"]}
    assert conditions.health_holds("redundancy", "orange", lost)
    assert not conditions.health_holds("redundancy", "green", {"redundancy": []})
    moving = {"on_partner": True, "moving": {"job": 4, "title": "Fail back oss02"}}
    building = {"own_status": "red", "building": {"job": 2, "title": "Build ssu01"}}
    assert not conditions.health_holds("on_partner", "orange", moving)
    assert not conditions.health_holds("red", "red", building)
