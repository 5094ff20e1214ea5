"""The arrays' REST collector on the management server (issue 33): where each array is reached,
its pinned certificate, and the collector's configuration.

The collector is the sensor program with only its ``santricity`` collector, run on this
management server (one process for every array of the inventory). Its configuration names each
array's two controllers and the certificate pinned for it (or the site's CA file); the monitor
account's password goes to a 0600 file beside it, never into the configuration or a variable.

Pinning happens at provisioning (the ``sensor`` step): the certificate each controller serves is
read (SHA-256 of its DER form) and kept on the array's row when none is; when one is kept and a
controller now serves another, the step fails naming both: a replaced certificate is pinned
again only when an administrator clears the old one, never silently.
"""

from __future__ import annotations

import hashlib
import json
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from portal.inventory.models import StorageArray
from provisioning.names import split_controller_address

# The secret file (runner) that the collector's play copies to the password file.
PASSWORD_SECRET = "santricity-monitor-password"
CONFIG_FILE = "collector.conf"
PASSWORD_FILE = "monitor.password"
CONNECT_SECONDS = 10


class ArrayAccessError(Exception):
    """An array cannot be watched as configured; the message says which and what to do."""


@dataclass(frozen=True)
class CollectorFiles:
    config: str  # the configuration's text (no secret in it)
    password: str  # the monitor password file's content


def collector_dir() -> Path:
    """Where the collector's configuration, password file, spool (and on a virtual rack its
    pid file and log) live: the run directory's ``arrays/``, which the worker's user writes and
    the production install's ostara-arrays units read (deploy/production)."""
    if settings.OSTARA_ARRAYS_DIR:
        return Path(settings.OSTARA_ARRAYS_DIR)
    if settings.VIRTUAL_RACK is not None:
        return Path(settings.VIRTUAL_RACK) / "arrays-collector"
    return settings.RUN_DIR / "arrays"


def rest_arrays() -> list[StorageArray]:
    """Every array of the inventory read through its REST API (its addresses given)."""
    return list(StorageArray.objects.exclude(management_a="").order_by("name"))


def take_from_virtual_rack(rack: Path | None) -> list[str]:
    """On the virtual rack the rack is the hardware: each array's controller addresses and
    monitor account come from its ``rack.json`` management record, where the rack has one.
    The only place the appliance reads the rack's record. Returns the arrays changed."""
    if rack is None:
        return []
    try:
        state = json.loads((rack / "rack.json").read_text())
    except (OSError, ValueError):
        return []
    changed = []
    for array in StorageArray.objects.order_by("name"):
        record = (state.get("arrays", {}).get(array.name) or {}).get("management")
        if not record:
            continue
        a, b = (record["controllers"][c] for c in ("A", "B"))
        password = (rack / record["password_file"]).read_text().strip()
        before = (array.management_a, array.management_b, array.monitor_user)
        array.management_a = f"{a['address']}:{a['port']}"
        array.management_b = f"{b['address']}:{b['port']}"
        array.monitor_user = record["user"]
        if not array.certificate_sha256 and not settings.OSTARA_ARRAY_CA_FILE:
            array.certificate_sha256 = record["sha256"].lower()
        if before != (array.management_a, array.management_b, array.monitor_user) or (
            array.monitor_password != password
        ):
            array.set_monitor_password(password)
            array.full_clean()
            array.save()
            changed.append(array.name)
    return changed


def served_fingerprint(address: str, timeout: float = CONNECT_SECONDS) -> str:
    """SHA-256 (hex) of the certificate the controller at ``address`` serves. No credential is
    sent: only the TLS handshake."""
    host, port = split_controller_address(address)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    # The controllers' certificates are self-signed: read, not verified (that is the pin's job).
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with socket.create_connection((host, port), timeout=timeout) as raw:
        with context.wrap_socket(raw, server_hostname=host) as tls:
            return hashlib.sha256(tls.getpeercert(binary_form=True) or b"").hexdigest()


def pin_certificates(arrays: list[StorageArray], say: Callable[[str], None]) -> None:
    """Pin each array's certificate if none is pinned; refuse one that changed.

    Raises ``ArrayAccessError`` for an array serving another certificate than the pinned one
    (both fingerprints named), or one with nothing pinned whose controllers both do not answer.
    A pinned array that does not answer is said and left as it is: the collector will report
    it, and its certificate is checked again on every connection.
    """
    if settings.OSTARA_ARRAY_CA_FILE:
        say(f"arrays' certificates verified against {settings.OSTARA_ARRAY_CA_FILE}; none pinned")
        return
    for array in arrays:
        pinned = array.certificate_sha256.split()
        served: list[str] = []
        silent: list[str] = []
        for controller, address in zip("AB", array.controller_addresses, strict=True):
            try:
                fingerprint = served_fingerprint(address)
            except (OSError, ssl.SSLError) as error:
                silent.append(f"controller {controller} ({address}): {error}")
                continue
            if pinned and fingerprint not in pinned:
                raise ArrayAccessError(
                    f"array {array.name}: controller {controller} ({address}) serves the "
                    f"certificate {fingerprint}, not the pinned {' '.join(pinned)}. If the "
                    "controller or its certificate was replaced on purpose, clear the array's "
                    "pinned certificate (Storage arrays in the admin) and run the sensor step "
                    "again; otherwise find out who answers at that address."
                )
            if fingerprint not in served:
                served.append(fingerprint)
        for reason in silent:
            say(f"array {array.name}: {reason}")
        if pinned:
            say(f"array {array.name}: certificate as pinned ({' '.join(pinned)})")
            continue
        if not served:
            raise ArrayAccessError(
                f"array {array.name}: neither controller answered, so its certificate cannot be "
                "pinned; check the controllers' management addresses and network, then run the "
                "sensor step again"
            )
        array.certificate_sha256 = " ".join(served)
        array.save(update_fields=["certificate_sha256"])
        say(f"array {array.name}: pinned certificate {array.certificate_sha256}")


def collector_files(arrays: list[StorageArray], directory: Path) -> CollectorFiles:
    """The collector's configuration for ``arrays`` and its password file's content.

    One monitor account for all arrays (the collector logs in to every array as it): arrays
    given different ones are refused, naming them.
    """
    accounts = {(a.monitor_user, a.monitor_password) for a in arrays}
    if len(accounts) > 1:
        raise ArrayAccessError(
            "the arrays' monitor accounts differ ("
            + ", ".join(f"{a.name}: {a.monitor_user}" for a in arrays)
            + "); the array collector logs in to every array with one account: give them the "
            "same user and password"
        )
    (user, password), *_ = accounts or {("", "")}
    if arrays and not password:
        raise ArrayAccessError(f"array {arrays[0].name}: the monitor account's password is missing")
    ca_file = settings.OSTARA_ARRAY_CA_FILE
    lines = [
        "# Written by Ostara's provisioning (the sensor step); changes are overwritten.",
        "# The arrays' REST collector of this management server (sensors/README.md, Arrays).",
        "[sensor]",
        f"server = {settings.OSTARA_ARRAYS_SERVER}",
        # Its rounds come as often as it asks the arrays: it reads nothing else.
        f"interval = {settings.OSTARA_ARRAY_INTERVAL}",
        "collect = santricity",
        "",
        "[influxdb]",
        f"url = {settings.INFLUXDB_URL}",
        f"database = {settings.INFLUXDB_DATABASE}",
        "",
        "[spool]",
        f"dir = {directory / 'spool'}",
        "",
        "[santricity]",
        f"arrays = {' '.join(a.name for a in arrays)}",
        f"user = {user}",
        f"password_file = {directory / PASSWORD_FILE}",
        f"interval = {settings.OSTARA_ARRAY_INTERVAL}",
    ]
    for array in arrays:
        lines += ["", f"[santricity.{array.name}]"]
        lines.append(f"controllers = {' '.join(array.controller_addresses)}")
        lines.append(
            f"ca_file = {ca_file}" if ca_file else f"fingerprint = {array.certificate_sha256}"
        )
    return CollectorFiles(config="\n".join(lines) + "\n", password=password + "\n")
