"""How the arrays' REST API is reached: recorded once in the rack, per array, under
`arrays.<name>.management` in rack.json (provisioning and the tests read it there):

    {"system_id": "1", "wwn": "...", "user": "monitor",
     "password_file": "santricity/<array>.password",
     "controllers": {
         "A": {"address": "127.0.0.1", "port": N, "certificate": "santricity/<array>-a.crt",
               "sha256": "<hex of the DER certificate>"},
         "B": {...}}}

Each array has its own monitor password (0600 file), as each real array's monitor account is
set on its own. Each controller has its own self-signed certificate and key, as an E-series
controller does (EC P-256, made with the `cryptography` package, a requirement of the project),
naming 127.0.0.1 and the controller; its SHA-256 fingerprint is what provisioning pins for
that controller. Each controller gets its own port on the loopback, chosen free once and kept,
so two racks (the demo and the tests) never collide. A record of an older rack (one
certificate and password for every controller) is made again the first time the rack serves.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import os
import secrets
import socket
from pathlib import Path

from simulator.santricity import refs
from simulator.state import write_atomic

DIRECTORY = "santricity"
USER = "monitor"
ADDRESS = "127.0.0.1"
CONTROLLERS = ("A", "B")


def password_file(array: str) -> str:
    """The array's password file, relative to the rack."""
    return f"{DIRECTORY}/{array}.password"


def password(root: Path, array: str) -> str:
    """The array's monitor password, made on first use (readable by the rack's owner only)."""
    path = Path(root) / password_file(array)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(18) + "\n")
    return path.read_text().strip()


def fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def _make_certificate(root: Path, array: str, controller: str) -> Path:
    """A new certificate and key for one controller; the certificate's path."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory = Path(root) / DIRECTORY
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, f"{array}-{controller.lower()}"),
            x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Ostara virtual rack"),
        ]
    )
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.IPAddress(ipaddress.ip_address(ADDRESS)),
                    x509.DNSName(f"{array}-{controller.lower()}"),
                    x509.DNSName("localhost"),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path = certificate_path(root, array, controller)
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(key_path(root, array, controller), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key_pem)
    write_atomic(cert_path, certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path


def certificate_der(path: Path) -> bytes:
    import ssl

    return ssl.PEM_cert_to_DER_cert(Path(path).read_text())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((ADDRESS, 0))
        return probe.getsockname()[1]


def complete(root: Path, name: str, management: dict | None) -> bool:
    """Whether an array's record is of this rack's kind and its files are all there."""
    if not management or not (Path(root) / password_file(name)).exists():
        return False
    controllers = management.get("controllers", {})
    return all(
        "sha256" in controllers.get(c, {})
        and certificate_path(root, name, c).exists()
        and key_path(root, name, c).exists()
        for c in CONTROLLERS
    )


def ensure(root: Path, state: dict) -> bool:
    """Give every array its management record (certificates, password, ports) if it has none
    yet, or one of an older rack. Returns whether anything was added (the caller saves the
    rack)."""
    changed = False
    for name, array in state["arrays"].items():
        management = array.get("management")
        if complete(root, name, management):
            continue
        password(root, name)
        ports = (management or {}).get("controllers", {})
        controllers = {}
        for c in CONTROLLERS:
            cert_path = _make_certificate(root, name, c)
            controllers[c] = {
                "address": ADDRESS,
                "port": ports.get(c, {}).get("port") or free_port(),
                "certificate": f"{DIRECTORY}/{cert_path.name}",
                "sha256": fingerprint(certificate_der(cert_path)),
            }
        array["management"] = {
            "system_id": "1",
            "wwn": refs.wwn(name),
            "user": USER,
            "password_file": password_file(name),
            "controllers": controllers,
        }
        changed = True
    return changed


def key_path(root: Path, array: str, controller: str) -> Path:
    return Path(root) / DIRECTORY / f"{array}-{controller.lower()}.key"


def certificate_path(root: Path, array: str, controller: str) -> Path:
    return Path(root) / DIRECTORY / f"{array}-{controller.lower()}.crt"
