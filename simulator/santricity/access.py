"""How the arrays' REST API is reached: recorded once in the rack, per array, under
`arrays.<name>.management` in rack.json (provisioning and the tests read it there):

    {"system_id": "1", "wwn": "...", "user": "monitor",
     "password_file": "santricity/monitor.password",
     "certificate": "santricity/<array>.crt", "sha256": "<hex of the DER certificate>",
     "controllers": {"A": {"address": "127.0.0.1", "port": N}, "B": {...}}}

The monitor account's password is made once per rack (0600 file); each array gets a
self-signed certificate (EC P-256, made with the `cryptography` package, a requirement of the
project) naming 127.0.0.1 and its controllers, kept with its key in the rack's santricity/
directory; its SHA-256 fingerprint is what provisioning pins. Each controller gets its own port
on the loopback, chosen free once and kept, so two racks (the demo and the tests) never collide.
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
PASSWORD_FILE = f"{DIRECTORY}/monitor.password"
USER = "monitor"
ADDRESS = "127.0.0.1"


def password(root: Path) -> str:
    """The monitor account's password, made on first use (readable by the rack's owner only)."""
    path = Path(root) / PASSWORD_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(18) + "\n")
    return path.read_text().strip()


def fingerprint(der: bytes) -> str:
    return hashlib.sha256(der).hexdigest()


def _make_certificate(root: Path, array: str) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    directory = Path(root) / DIRECTORY
    directory.mkdir(parents=True, exist_ok=True)
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name(
        [
            x509.NameAttribute(NameOID.COMMON_NAME, array),
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
                    x509.DNSName(f"{array}-a"),
                    x509.DNSName(f"{array}-b"),
                    x509.DNSName("localhost"),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path = directory / f"{array}.crt"
    key_path = directory / f"{array}.key"
    key_pem = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(key_pem)
    write_atomic(cert_path, certificate.public_bytes(serialization.Encoding.PEM))
    return cert_path, key_path


def certificate_der(path: Path) -> bytes:
    import ssl

    return ssl.PEM_cert_to_DER_cert(Path(path).read_text())


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((ADDRESS, 0))
        return probe.getsockname()[1]


def ensure(root: Path, state: dict) -> bool:
    """Give every array its management record (certificate, password, ports) if it has none
    yet. Returns whether anything was added (the caller saves the rack)."""
    changed = False
    password(root)
    for name, array in state["arrays"].items():
        management = array.get("management")
        cert = Path(root) / DIRECTORY / f"{name}.crt"
        if management and cert.exists() and (Path(root) / DIRECTORY / f"{name}.key").exists():
            continue
        cert_path, _key = _make_certificate(root, name)
        array["management"] = {
            "system_id": "1",
            "wwn": refs.wwn(name),
            "user": USER,
            "password_file": PASSWORD_FILE,
            "certificate": f"{DIRECTORY}/{cert_path.name}",
            "sha256": fingerprint(certificate_der(cert_path)),
            "controllers": {c: {"address": ADDRESS, "port": free_port()} for c in ("A", "B")},
        }
        changed = True
    return changed


def key_path(root: Path, array: str) -> Path:
    return Path(root) / DIRECTORY / f"{array}.key"


def certificate_path(root: Path, array: str) -> Path:
    return Path(root) / DIRECTORY / f"{array}.crt"
