"""The BMC's sensors (`bmc`): temperatures, fans, power supplies, through `ipmitool sensor`
(or `ipmitool sdr`).

`ipmitool sensor` prints `name | reading | unit | status | lnr | lcr | lnc | unc | ucr | unr`:
the reading and the BMC's own thresholds (`na` where it has none); the upper non-critical and
upper critical ones are kept as `upper_nc` and `upper_cr`, which the health rules prefer to
their defaults. `ipmitool sdr` (= `sdr list`) prints `name | reading | status`; `sdr elist`
prints `name | id | status | entity | reading`. All three are read. The reading carries its unit
(`45 degrees C`, `4200 RPM`, `12.19 Volts`, `220 Watts`) or is a discrete state (`0x01`);
status is `ok`, `nc`/`cr`/`nr` (non-critical, critical, non-recoverable) or `ns` (no reading:
an empty slot or a disabled sensor, which is left out rather than reported as a fault).
"""

from __future__ import annotations

import re
import shlex
import subprocess

from sensors import schema
from sensors.rounds import Round

_NUMBER_RE = re.compile(r"^(-?\d+(?:\.\d+)?)\s*(.*)$")
_POWER_NAME_RE = re.compile(r"\b(ps\d*|psu\d*|power supply|pwr|ps_status)\b", re.IGNORECASE)
_FAN_NAME_RE = re.compile(r"fan", re.IGNORECASE)


def sensor_type(name: str, unit: str) -> str:
    unit = unit.lower()
    if unit.startswith("degrees"):
        return "temperature"
    if unit == "rpm" or (unit == "percent" and _FAN_NAME_RE.search(name)):
        return "fan"
    if unit == "watts" or _POWER_NAME_RE.search(name):
        return "power"
    if unit == "volts":
        return "voltage"
    if unit == "amps":
        return "current"
    if _FAN_NAME_RE.search(name):
        return "fan"
    return "other"


def parse_sdr(text: str) -> list[dict]:
    """One dict per sensor with a reading: name, type, value (float or None for a discrete
    sensor), ok (1/0), status."""
    sensors = []
    for row in text.splitlines():
        columns = [column.strip() for column in row.split("|")]
        limits: dict[str, float] = {}
        if len(columns) == 10:
            name, number, unit, status = columns[:4]
            reading = f"{number} {unit}" if number.lower() != "na" else "no reading"
            if number.lower() == "na":
                status = "ns"
            elif status.lower().startswith("0x"):
                status = "ok"  # a discrete sensor's state bits, not a threshold crossed
            for key, column in (("upper_nc", columns[7]), ("upper_cr", columns[8])):
                match = _NUMBER_RE.match(column)
                if match and not match.group(2):
                    limits[key] = float(match.group(1))
        elif len(columns) == 3:
            name, reading, status = columns
        elif len(columns) == 5:
            name, _, status, _, reading = columns
        else:
            if row.strip():
                raise ValueError(f"not an sdr line: {row!r}")
            continue
        status = status.lower()
        if not name or status == "ns":
            continue
        match = _NUMBER_RE.match(reading)
        value, unit = (float(match.group(1)), match.group(2)) if match else (None, "")
        if reading.lower().startswith("0x"):
            value, unit = None, ""
        sensors.append(
            {
                "name": name,
                "type": sensor_type(name, unit),
                "value": value,
                "ok": 1 if status == "ok" else 0,
                "status": status,
                **limits,
            }
        )
    return sensors


def run_command(command: str, timeout: float) -> str:
    result = subprocess.run(
        shlex.split(command),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip().splitlines()
        raise RuntimeError(f"exit {result.returncode}: {detail[-1] if detail else ''}")
    return result.stdout


def collect_bmc(rnd: Round, command: str, timeout: float = 20.0) -> None:
    """Run the configured `ipmitool ... sdr` command and write one point per sensor."""
    try:
        output = run_command(command, timeout)
        sensors = parse_sdr(output)
    except (OSError, subprocess.SubprocessError, RuntimeError, ValueError) as error:
        rnd.problem(f"bmc command {command!r}", error)
        return
    for sensor in sensors:
        fields: dict = {"ok": sensor["ok"]}
        if sensor["value"] is not None:
            fields["value"] = sensor["value"]
        for key in ("upper_nc", "upper_cr"):
            if key in sensor:
                fields[key] = sensor[key]
        rnd.add(
            schema.BMC.name, {schema.SENSOR: sensor["name"], schema.TYPE: sensor["type"]}, fields
        )
