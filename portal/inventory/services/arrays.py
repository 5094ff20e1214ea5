"""The arrays' REST collector on the management server (issue 33): where each array is reached,
its controllers' pinned certificates, and the collector's configuration.

The collector is the sensor program with only its ``santricity`` collector, run on this
management server (one process for every array of the inventory). Its configuration names each
array's two controllers, the certificate pinned for each (or the site's CA file) and the
array's monitor account; each array's monitor password goes to a 0600 file of its own beside
it (``<array>.password``), never into the configuration or a variable.

Pinning happens at provisioning (the ``sensor`` step), per controller, as each E-series
controller has its own self-signed certificate: the certificate a controller serves is read
(SHA-256 of its DER form) and kept as that controller's pin when it has none; when one is kept
and the controller now serves another, the step fails naming the controller and both
certificates: a replaced certificate is pinned again only when an administrator clears that
controller's pin, never silently.
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
from provisioning.names import split_controller_address, unit_name_problem

CONFIG_FILE = "collector.conf"
CONNECT_SECONDS = 10


class ArrayAccessError(Exception):
    """An array cannot be watched as configured; the message says which and what to do."""


@dataclass(frozen=True)
class CollectorFiles:
    config: str  # the configuration's text (no secret in it)
    passwords: dict[str, str]  # array -> its monitor password file's content


def password_secret(array: str) -> str:
    """The secret file (runner) that the collector's play copies to the array's password file
    (collector.yml names it the same way)."""
    return f"santricity-monitor-password-{array}"


def password_file(directory: Path, array: str) -> Path:
    return directory / f"{array}.password"


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
    monitor account come from its ``rack.json`` management record, where the rack has one, and
    each controller's certificate is pinned from it when that controller has no pin (an older
    rack's record, with one certificate for the array, pins it to both). The only place the
    appliance reads the rack's record. Returns the arrays changed."""
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
        before = (array.management_a, array.management_b, array.monitor_user, array.pins)
        array.management_a = f"{a['address']}:{a['port']}"
        array.management_b = f"{b['address']}:{b['port']}"
        array.monitor_user = record["user"]
        if not settings.OSTARA_ARRAY_CA_FILE:
            for controller, pinned in array.pins.items():
                served = record["controllers"][controller].get("sha256") or record.get("sha256")
                if not pinned and served:
                    array.pin(controller, served.lower())
        after = (array.management_a, array.management_b, array.monitor_user, array.pins)
        if before != after or array.monitor_password != password:
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
    """Pin each controller's certificate if it has none; refuse one that changed.

    Raises ``ArrayAccessError`` for a controller serving another certificate than its own pin
    (the array, the controller, its address and both fingerprints named), or an array with
    nothing pinned whose controllers both do not answer. A controller that does not answer is
    said and left as it is: pinned, the collector reports it and checks its certificate on every
    connection; not pinned yet, the collector does not ask it until a later sensor step pins it.
    """
    if settings.OSTARA_ARRAY_CA_FILE:
        say(f"arrays' certificates verified against {settings.OSTARA_ARRAY_CA_FILE}; none pinned")
        return
    for array in arrays:
        changed: list[str] = []
        for (controller, pinned), address in zip(
            array.pins.items(), array.controller_addresses, strict=True
        ):
            where = f"array {array.name}: controller {controller} ({address})"
            try:
                served = served_fingerprint(address)
            except (OSError, ssl.SSLError) as error:
                later = "" if pinned else "; its certificate is pinned when it answers"
                say(f"{where}: {error}{later}")
                continue
            if not pinned:
                array.pin(controller, served)
                changed.append(f"certificate_{controller.lower()}_sha256")
                say(f"{where}: pinned certificate {served}")
            elif served != pinned:
                raise ArrayAccessError(
                    f"{where} serves the certificate {served}, not its pinned {pinned}. If "
                    f"controller {controller} or its certificate was replaced on purpose, clear "
                    f"controller {controller}'s certificate of {array.name} (Storage arrays in "
                    "the admin) and run the sensor step again; otherwise find out who answers "
                    "at that address."
                )
            else:
                say(f"{where}: certificate as pinned ({pinned})")
        if changed:
            array.save(update_fields=changed)
        elif not any(array.pins.values()):
            raise ArrayAccessError(
                f"array {array.name}: neither controller answered, so their certificates cannot "
                "be pinned; check the controllers' management addresses and network, then run "
                "the sensor step again"
            )


def collector_files(arrays: list[StorageArray], directory: Path) -> CollectorFiles:
    """The collector's configuration for ``arrays`` and each array's password file content.

    Each array has its own monitor account (``user`` and ``password_file`` in its section);
    an array without a password is refused, naming it.
    """
    ca_file = settings.OSTARA_ARRAY_CA_FILE
    passwords: dict[str, str] = {}
    for array in arrays:
        # The name becomes a file and a secret's name: checked again, never trusted.
        if problem := unit_name_problem(array.name):
            raise ArrayAccessError(f"array {array.name!r}: {problem}")
        if not array.monitor_password:
            raise ArrayAccessError(
                f"array {array.name}: the monitor account's password is missing; set it in "
                "the admin (Storage arrays) and run the sensor step again"
            )
        passwords[array.name] = array.monitor_password + "\n"
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
        f"interval = {settings.OSTARA_ARRAY_INTERVAL}",
    ]
    for array in arrays:
        lines += ["", f"[santricity.{array.name}]"]
        lines.append(f"controllers = {' '.join(array.controller_addresses)}")
        if ca_file:
            lines.append(f"ca_file = {ca_file}")
        else:
            # In the order of the controllers; `-`: not pinned yet, not asked.
            lines.append(f"fingerprints = {' '.join(p or '-' for p in array.pins.values())}")
        lines.append(f"user = {array.monitor_user}")
        lines.append(f"password_file = {password_file(directory, array.name)}")
    return CollectorFiles(config="\n".join(lines) + "\n", passwords=passwords)
