"""The arrays' Major Event Log on the objects' pages: an event that names a drive shows on the
array's page and the drive's, one that names a volume group on the page of its target; events
about other objects stay off a page. Points of the array collector in the real test InfluxDB."""

from __future__ import annotations

import time

import pytest

from portal.health.tests.array_metrics import failed_drive_events, write_event

pytestmark = [pytest.mark.services, pytest.mark.django_db]


@pytest.fixture
def events(rack_inventory, metrics_db):
    """A drive of ssu01-a-vg03 failed 5 minutes ago, its group degraded; a drive of
    ssu01-b failed too; controller B of ssu01-a came back."""
    drive, address = failed_drive_events(300)
    write_event(
        array="ssu01-a",
        component="controller",
        ident="B",
        sequence=43,
        at=time.time() - 100,
        priority="informational",
        event_type="0x5006",
        description="Controller B optimal",
    )
    return drive, address


def test_the_array_page_lists_its_events_newest_first_with_time_and_priority(events, client, world):
    drive, address = events
    client.force_login(world["viewer"])
    page = client.get("/console/arrays/ssu01-a/").content.decode()
    section = page.split('id="array-events"')[1]
    assert "Recent array events" in page
    assert section.index("Controller B optimal") < section.index("degraded")
    assert section.index("degraded") < section.index("Drive failed")
    assert '<span class="badge critical">critical</span>' in section
    assert '<span class="badge informational">informational</span>' in section
    assert f"drive tray {drive.enclosure.position}, drawer {drive.drawer}, slot {drive.slot}" in (
        section
    )
    assert "drawer 1, slot 1" not in section  # ssu01-b's drive
    assert " UTC</td>" in section


def test_the_drive_page_shows_the_events_about_that_drive_only(events, client, world):
    drive, address = events
    client.force_login(world["viewer"])
    page = client.get(f"/console/arrays/ssu01-a/drives/{address}/").content.decode()
    section = page.split('id="array-events"')[1]
    assert "Drive failed: tray" in section
    assert "Controller B optimal" not in section and "degraded" not in section


def test_the_target_page_shows_its_volume_groups_events_and_its_drives(events, client, world):
    client.force_login(world["viewer"])
    page = client.get("/health/targets/scratch-OST0003/").content.decode()
    section = page.split('id="array-events"')[1]
    assert "Volume group ssu01-a-vg03 degraded" in section
    assert "Drive failed: tray" in section
    assert "Controller B optimal" not in section
    other = client.get("/health/targets/scratch-OST0001/").content.decode()
    assert "No event of the array's log names volume group ssu01-a-vg01" in other
