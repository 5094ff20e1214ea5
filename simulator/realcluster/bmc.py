"""The BMC of a real-cluster virtual server: OpenIPMI's `ipmi_sim`, answering IPMI 2.0 (RMCP+)
on the server's `bmc` address in its own namespace.

Its chassis power is the server: power on runs `boot` (`node.py`), power off kills it (SIGTERM,
then SIGKILL after `kill_wait`), so `fence_ipmilan` and `ipmitool chassis power` act on the
server as on a real one. The BMC's user is the one the fence devices use (`ostara-fence`), with
a password the rack generates once per server (`hosts/<host>/cluster/bmc-password`, mode 0600):
the administrator gives it to the wizard as a real BMC's. Cipher suite 3 (the CIB's `cipher=3`):
ipmi_sim does not answer the cipher-suite probe ipmitool makes without one.
"""

from __future__ import annotations

import os
import re
import secrets
import signal
import subprocess
from pathlib import Path

from simulator.state import RackError

from . import network, node

USER = "ostara-fence"
PORT = 623


def password(rack_root: Path, host: str) -> str:
    path = node.host_dir(rack_root, host) / node.CLUSTER_DIR / "bmc-password"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_hex(8))  # IPMI 1.5 passwords: at most 16 characters
    return path.read_text().strip()


# What ipmi_sim's lan.conf can hold and IPMI 2.0 takes: at most 20 characters, no quote.
PASSWORD = re.compile(r"[A-Za-z0-9._+=/@%^-]{1,20}")


def set_password(rack_root: Path, host: str, text: str) -> None:
    """The password the BMC's administrator chose (the demo gives the wizard the same one);
    kept where `password()` reads it, mode 0600. The BMC takes it when it next starts."""
    if not PASSWORD.fullmatch(text):
        raise RackError(
            "--bmc-password-file: a BMC password is 1 to 20 letters, digits or ._+=/@%^- "
            "(IPMI 2.0; ipmi_sim's configuration has no quoting)"
        )
    path = node.host_dir(rack_root, host) / node.CLUSTER_DIR / "bmc-password"
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def _quoted(text: str) -> str:
    # lan.conf has no escapes: a path with a quote or a space cannot be said in it.
    if any(character in text for character in "\"' \t\n\\"):
        raise RackError(f"a real-cluster rack's path must have no spaces or quotes: {text!r}")
    return f'"{text}"'


def lan_conf(rack_root: Path, host: str, address: str) -> str:
    boot = " ".join(
        [
            "/usr/bin/env",
            f"PYTHONPATH={node.python_env()['PYTHONPATH'].split(':')[0]}",
            *node.python_command("boot", "--rack", str(Path(rack_root).resolve()), "--host", host),
        ]
    )
    return "\n".join(
        [
            f"# The BMC of {host} (simulator/realcluster/bmc.py).",
            f'name "{host}-bmc"',
            "set_working_mc 0x20",
            "  startlan 1",
            f"    addr {address} {PORT}",
            "    priv_limit admin",
            "    allowed_auths_callback none md2 md5 straight",
            "    allowed_auths_user none md2 md5 straight",
            "    allowed_auths_operator none md2 md5 straight",
            "    allowed_auths_admin none md2 md5 straight",
            "    guid " + network.prefix_for(rack_root).encode().hex().ljust(32, "0")[:32],
            "  endlan",
            # The system interface: ipmi_sim only manages a start command behind one.
            "  serial 15 127.0.0.1 9002 codec VM",
            f'  startcmd "{boot}"',
            "  startnow true",
            "  poweroff_wait 0",
            "  kill_wait 5",
            f'  user 2 true "{USER}" "{password(rack_root, host)}" admin 10 none md2 md5 straight',
            "",
        ]
    )


EMU = """mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02
sel_enable 0x20 1000 0x0a
mc_enable 0x20
"""


def pid_of(rack_root: Path, host: str) -> int | None:
    return node.live_pid(node.host_dir(rack_root, host) / node.CLUSTER_DIR / "bmc.pid", b"ipmi_sim")


def start(rack_root: Path, host: str, address: str) -> None:
    """Start the BMC (and so, with `startnow`, the server) unless it runs."""
    if pid_of(rack_root, host):
        return
    rack_root = Path(rack_root).resolve()
    for part in (str(rack_root), str(node.REPO_ROOT)):
        _quoted(part)
    directory = node.host_dir(rack_root, host) / node.CLUSTER_DIR / "bmc"
    (directory / "state").mkdir(parents=True, exist_ok=True)
    (directory / "lan.conf").write_text(lan_conf(rack_root, host, address))
    (directory / "ipmisim.emu").write_text(EMU)
    os.chmod(directory / "lan.conf", 0o600)
    namespace = network.ensure_bmc(network.prefix_for(rack_root), host, address)
    log = open(directory / "ipmi_sim.log", "ab")
    process = subprocess.Popen(
        ["ip", "netns", "exec", namespace, "ipmi_sim", "-n", "-c", str(directory / "lan.conf"),
         "-f", str(directory / "ipmisim.emu"), "-s", str(directory / "state")],
        stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
        env=node.python_env(),
    )  # fmt: skip
    (directory.parent / "bmc.pid").write_text(str(process.pid))


def stop(rack_root: Path, host: str) -> None:
    """Stop the BMC and the server it powers (the server's processes die with it)."""
    pid = pid_of(rack_root, host)
    if pid:
        os.kill(pid, signal.SIGKILL)
    # `boot` powers the server off as ipmi_sim's power off would (it kills the namespace and
    # writes the server off in the rack); PID 1 itself in case boot is gone already.
    for running, signum in ((node.boot_pid, signal.SIGTERM), (node.init_pid, signal.SIGKILL)):
        if found := running(rack_root, host):
            os.kill(found, signum)


def _ipmitool(namespace: str, rack_root: Path, host: str, address: str, *command: str):
    return subprocess.run(
        ["ip", "netns", "exec", namespace, "ipmitool", "-I", "lanplus", "-C", "3",
         "-H", address, "-U", USER, "-P", password(rack_root, host), *command],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def ipmitool(
    rack_root: Path, host: str, address: str, *command: str
) -> subprocess.CompletedProcess:  # noqa: E501
    """ipmitool against the server's BMC from the management network (the switch namespace)."""
    namespace = f"{network.prefix_for(rack_root)}-sw"
    return _ipmitool(namespace, rack_root, host, address, *command)


def local_ipmitool(
    rack_root: Path, host: str, address: str, *command: str
) -> subprocess.CompletedProcess:
    """ipmitool from inside the BMC's own namespace: its power button, the PDU's restored
    power, an operator at its console. Works with its cable pulled."""
    namespace = f"{network.prefix_for(rack_root)}-{host}-bmc"
    return _ipmitool(namespace, rack_root, host, address, *command)
