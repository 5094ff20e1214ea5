"""The BMC collector (`ipmitool sdr` output, both the list and the elist layout) and the array
collector (behind the ArraySource interface), run through real commands on PATH."""

from __future__ import annotations

import json
import logging

from sensors.arrays import ArrayComponent, collect_arrays, components_from_smcli
from sensors.bmc import parse_sdr
from sensors.rounds import Round
from sensors.tests.lp import collect_root, one, parse_lines, points_of

TS = 1_700_000_000_000

SDR_LIST = """\
CPU1 Temp        | 45 degrees C      | ok
CPU2 Temp        | 91 degrees C      | cr
FAN1             | 4200 RPM          | ok
FAN2             | 0 RPM             | cr
PS1 Status       | 0x01              | ok
PS2 Status       | 0x0b              | cr
Pwr Consumption  | 238 Watts         | ok
12V              | 12.19 Volts       | ok
HDD Status       | Not Readable      | ns
"""
SDR_ELIST = """\
Inlet Temp       | 04h | ok  |  7.1 | 23 degrees C
Fan1             | 30h | ok  |  7.1 | 5880 RPM
PS1 Status       | 62h | ok  | 10.1 | Presence detected
PS2 Status       | 63h | cr  | 10.2 | Presence detected, Failure detected
"""


def fake_command(tmp_path, name: str, output: str, code: int = 0):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\ncat <<'EOF'\n{output}EOF\nexit {code}\n")
    path.chmod(0o755)
    return str(path)


def test_sdr_list_temperatures_fans_power_supplies(tmp_path):
    command = fake_command(tmp_path, "ipmitool", SDR_LIST)
    rnd, points = collect_root(tmp_path, TS, bmc_command=f"{command} -I open sdr")
    assert rnd.errors == 0
    cpu = one(points, "bmc", sensor="CPU1 Temp")
    assert cpu.tags["type"] == "temperature" and cpu.tags["server"] == "oss01"
    assert cpu.fields == {"ok": 1, "value": 45.0}
    assert one(points, "bmc", sensor="CPU2 Temp").fields == {"ok": 0, "value": 91.0}
    assert one(points, "bmc", sensor="FAN2").fields == {"ok": 0, "value": 0.0}
    assert one(points, "bmc", sensor="FAN1").tags["type"] == "fan"
    failed_psu = one(points, "bmc", sensor="PS2 Status")
    assert failed_psu.tags["type"] == "power" and failed_psu.fields == {"ok": 0}
    assert one(points, "bmc", sensor="Pwr Consumption").fields["value"] == 238.0
    assert one(points, "bmc", sensor="12V").tags["type"] == "voltage"
    assert points_of(points, "bmc", sensor="HDD Status") == []  # ns: no reading


def test_sdr_elist_layout():
    sensors = {s["name"]: s for s in parse_sdr(SDR_ELIST)}
    assert sensors["Inlet Temp"]["type"] == "temperature"
    assert sensors["Inlet Temp"]["value"] == 23.0
    assert sensors["Fan1"]["value"] == 5880.0
    assert sensors["PS2 Status"]["type"] == "power"
    assert sensors["PS2 Status"]["ok"] == 0 and sensors["PS2 Status"]["value"] is None


def test_a_failing_bmc_command_is_reported_and_the_rest_collected(tmp_path, caplog):
    command = fake_command(tmp_path, "ipmitool", "Error: Unable to establish IPMI v2 session\n", 1)
    with caplog.at_level(logging.WARNING, logger="sensors"):
        rnd, points = collect_root(tmp_path / "empty", TS, bmc_command=f"{command} sdr")
    assert rnd.errors == 1
    assert "Unable to establish IPMI v2 session" in caplog.text
    assert points_of(points, "bmc") == []


def test_a_missing_bmc_command_is_reported(tmp_path):
    rnd, _ = collect_root(tmp_path, TS, bmc_command="/nonexistent/ipmitool sdr")
    assert rnd.errors == 1


def test_array_command_json_to_points(tmp_path):
    state = {
        "arrays": [
            {
                "name": "ssu01-a",
                "drives": [
                    {"id": "99.1.1", "state": "optimal"},
                    {"id": "99.1.2", "state": "failed"},
                    {"id": "99.5.12", "state": "standby"},
                ],
                "volume_groups": [{"id": "ost0000", "state": "degraded"}],
                "controllers": [{"id": "A", "state": "optimal"}, {"id": "B", "state": "offline"}],
            }
        ]
    }
    command = fake_command(tmp_path, "array-state", json.dumps(state) + "\n")
    rnd, points = collect_root(tmp_path / "empty", TS, array_command=command)
    assert rnd.errors == 0
    failed = one(points, "array", array="ssu01-a", component="drive", id="99.1.2")
    assert failed.fields == {"state": "failed", "ok": 0}
    assert one(points, "array", id="99.5.12").fields["ok"] == 1  # a hot spare waiting is fine
    assert one(points, "array", component="volume_group").fields == {"state": "degraded", "ok": 0}
    assert one(points, "array", component="controller", id="B").fields["ok"] == 0
    assert one(points, "array", component="controller", id="A").tags["ssu"] == "ssu01"


def test_any_source_behind_the_interface(tmp_path):
    class RestArray:
        def components(self):
            return [ArrayComponent("e5560-7", "drive", "0.3", "Optimal", True)]

    rnd = Round(TS, {"server": "oss01"})
    collect_arrays(rnd, RestArray(), "rest")
    (point,) = parse_lines(rnd.lines)
    assert point.tags == {"server": "oss01", "array": "e5560-7", "component": "drive", "id": "0.3"}
    assert point.fields == {"state": "Optimal", "ok": 1}


def test_a_broken_array_tool_is_reported(tmp_path):
    command = fake_command(tmp_path, "array-state", "SMcli failed.\n")
    rnd, points = collect_root(tmp_path / "empty", TS, array_command=command)
    assert rnd.errors == 1
    assert points_of(points, "array") == []


# `ipmitool sensor`: the reading, its unit, its status and the BMC's six thresholds (the
# printed lines are longer than this file's limit).
SENSOR_LIST = """\
Inlet Temp       | 23.000     | degrees C  | ok    | na         | -7.000     | 3.000      | 42.000     | 47.000     | na
CPU1 Temp        | 89.000     | degrees C  | nc    | na         | na         | na         | 88.000     | 93.000     | na
Fan1             | 5880.000   | RPM        | ok    | na         | 600.000    | na         | na         | na         | na
PS1 Status       | 0x1        | discrete   | 0x0100| na         | na         | na         | na         | na         | na
DIMM B2 Temp     | na         | degrees C  | na    | na         | na         | na         | 85.000     | 95.000     | na
"""


def test_sensor_list_keeps_the_bmc_thresholds(tmp_path):
    command = fake_command(tmp_path, "ipmitool", SENSOR_LIST)
    rnd, points = collect_root(tmp_path, TS, bmc_command=f"{command} sensor")
    assert rnd.errors == 0
    inlet = one(points, "bmc", sensor="Inlet Temp")
    assert inlet.tags["type"] == "temperature"
    assert inlet.fields == {"ok": 1, "value": 23.0, "upper_nc": 42.0, "upper_cr": 47.0}
    assert one(points, "bmc", sensor="CPU1 Temp").fields == {
        "ok": 0,
        "value": 89.0,
        "upper_nc": 88.0,
        "upper_cr": 93.0,
    }
    assert one(points, "bmc", sensor="Fan1").fields == {"ok": 1, "value": 5880.0}
    assert one(points, "bmc", sensor="PS1 Status").fields == {"ok": 1}
    assert points_of(points, "bmc", sensor="DIMM B2 Temp") == []  # no reading


SMCLI_RECONSTRUCTING = """\
DRIVES------------------------------
   TRAY, DRAWER, SLOT  STATUS     CAPACITY        ROLE           VOLUME GROUP
   0, 1, 1             Replaced   4,000.000 GB    Assigned           ssu01-a-vg00
   0, 1, 2             Optimal    4,000.000 GB    Assigned           ssu01-a-vg00
VOLUME GROUP ssu01-a-vg00
   Status:              Degraded
   Operation:           Reconstruction (42% complete)
   RAID level:          6
   Failed drives:       0

VOLUME GROUP ssu01-a-vg01
   Status:              Optimal
   RAID level:          6

Controller in Tray 0, Slot A
   Status:              Online
"""


def test_smcli_says_which_group_reconstructs_and_how_far():
    found = {(c.component, c.id): c for c in components_from_smcli("ssu01-a", SMCLI_RECONSTRUCTING)}
    group = found[("volume_group", "ssu01-a-vg00")]
    assert (group.state, group.ok, group.operation, group.progress) == (
        "degraded",
        False,
        "reconstruction",
        42,
    )
    assert found[("volume_group", "ssu01-a-vg01")].operation == ""
    # The new drive holds no data yet: not ok, and said as the array says it.
    assert (found[("drive", "0,1,1")].state, found[("drive", "0,1,1")].ok) == ("replaced", False)
    assert found[("controller", "A")].state == "online"
    rnd = Round(TS, {"server": "oss01"})
    collect_arrays(rnd, type("Source", (), {"components": lambda self: list(found.values())})(), "")
    point = one(parse_lines(rnd.lines), "array", component="volume_group", id="ssu01-a-vg00")
    assert point.fields == {
        "state": "degraded",
        "ok": 0,
        "operation": "reconstruction",
        "progress": 42,
    }


def test_an_arrays_controllers_are_written_after_its_drives_and_groups():
    """The health engine takes an array's controller points as its round: a round sent in
    batches has its drives and groups in once its controllers have landed. Each controller
    counts its array's groups not ok, the only arrays whose groups the engine reads."""

    class RestArray:
        def components(self):
            return [
                ArrayComponent("ssu01-a", "controller", "A", "optimal", True),
                ArrayComponent("ssu01-a", "drive", "0.1.1", "failed", False),
                ArrayComponent("ssu01-a", "controller", "B", "optimal", True),
                ArrayComponent("ssu01-a", "volume_group", "vg00", "degraded", False),
                ArrayComponent("ssu01-b", "controller", "A", "optimal", True),
                ArrayComponent("ssu01-b", "drive", "0.1.1", "optimal", True),
            ]

    rnd = Round(TS, {"server": "oss01"})
    collect_arrays(rnd, RestArray(), "rest")
    order = [(p.tags["array"], p.tags["component"], p.tags["id"]) for p in parse_lines(rnd.lines)]
    assert order == [
        ("ssu01-a", "drive", "0.1.1"),
        ("ssu01-a", "volume_group", "vg00"),
        ("ssu01-b", "drive", "0.1.1"),
        ("ssu01-a", "controller", "A"),
        ("ssu01-a", "controller", "B"),
        ("ssu01-b", "controller", "A"),
    ]
    counted = {
        (p.tags["array"], p.tags["id"]): p.fields["groups_not_ok"]
        for p in parse_lines(rnd.lines)
        if p.tags["component"] == "controller"
    }
    assert counted == {("ssu01-a", "A"): 1, ("ssu01-a", "B"): 1, ("ssu01-b", "A"): 0}
    assert all("groups_not_ok" not in p.fields for p in parse_lines(rnd.lines)[:3])
