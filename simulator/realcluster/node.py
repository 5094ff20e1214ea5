"""A virtual server whose cluster is real: its power, its boot and its services.

Power is the BMC's (`bmc.py`): ipmi_sim runs `boot` on power on and kills it on power off.
`boot` marks the server up in the rack, then starts `init` as PID 1 of new PID, mount, UTS and
IPC namespaces inside the server's network namespace; when ipmi_sim (or the PDU) kills it, the
kernel kills every process of that PID namespace at once, as a crash or a fence does, and `boot`
marks the server off (its targets stop with it).

`init` gives the server its own view of the files Corosync and Pacemaker keep (bind mounts of
the host's directory of the rack, `hosts/<host>/...`) and overlays over `/etc`, `/usr/sbin`,
`/usr/libexec` and the OCF agents, so that what it adds (the Lustre agents, the virtual PDU's
fence agent, `/etc/ostara`) stays inside the namespace and the machine's own files are never
written. Then it starts the services `systemctl enable` enabled (`shims.py`), and reaps.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from simulator import operations, procfs
from simulator.rack import REPO_ROOT, Rack

from . import agents, network

# Where a real-cluster server keeps its bookkeeping, under hosts/<host>/.
CLUSTER_DIR = "cluster"
UNITS = {
    "corosync.service": ["corosync", "-f"],
    "pacemaker.service": ["pacemakerd"],
}
WANTS = "etc/systemd/system/multi-user.target.wants"
# Directories the server keeps as its own (host side -> inside the namespace).
BINDS = (
    "etc/corosync",
    "etc/ostara",
    "usr/libexec/ostara",
    "var/lib/pacemaker",
    "var/lib/corosync",
    "var/log",
)
OVERLAYS = ("/etc", "/usr/sbin", "/usr/libexec", "/usr/lib/ocf/resource.d")


def host_dir(rack_root: Path, host: str) -> Path:
    return procfs.host_root(Path(rack_root), host)


def live_pid(path: Path, marker: bytes) -> int | None:
    """The pid a file names, if that process still runs and its command line has `marker`
    (a stale file may name someone else's process now)."""
    try:
        pid = int(path.read_text())
        if marker in Path(f"/proc/{pid}/cmdline").read_bytes():
            return pid
    except (OSError, ValueError):
        pass
    return None


def _marker(verb: str, rack_root: Path, host: str) -> bytes:
    # The command line of this rack's `boot` or `init` of this host, never another's process.
    return f"{verb}\0--rack\0{Path(rack_root).resolve()}\0--host\0{host}\0".encode()


def init_pid(rack_root: Path, host: str) -> int | None:
    """The host-side pid of the server's PID 1, if it runs (powered on, not crashed)."""
    path = host_dir(rack_root, host) / CLUSTER_DIR / "init.pid"
    return live_pid(path, _marker("init", rack_root, host))


def boot_pid(rack_root: Path, host: str) -> int | None:
    """The pid of the server's `boot`: while it runs the server is powered on."""
    path = host_dir(rack_root, host) / CLUSTER_DIR / "boot.pid"
    return live_pid(path, _marker("boot", rack_root, host))


def mark_crashed(state: dict, host: str) -> None:
    """In the rack: the server's processes are gone, its power is on (a kernel panic)."""
    server = state["servers"][host]
    for label in list(server["mounts"]):
        operations.release_target(state, state["targets"][label])
    server["state"] = "crashed"


def enabled_units(root: Path) -> list[str]:
    wants = root / WANTS
    return [unit for unit in UNITS if (wants / unit).is_symlink() or (wants / unit).exists()]


def python_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "simulator.realcluster", *args]


def python_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(REPO_ROOT) + (":" + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


# -- boot: run by the BMC's power on, outside the server's namespaces -----------------------


def boot(rack_root: Path, host: str) -> int:
    rack_root = Path(rack_root).resolve()
    root = host_dir(rack_root, host)
    bookkeeping = root / CLUSTER_DIR
    bookkeeping.mkdir(parents=True, exist_ok=True)
    prefix = network.prefix_for(rack_root)
    # A reboot (a fence's off then on) may start this boot before the last one has finished
    # powering off: wait for it. One that outlasts the wait writes nothing once this one owns
    # the server (write_off).
    _wait_for_previous_boot(bookkeeping)
    (bookkeeping / "boot.pid").write_text(str(os.getpid()))
    write_on(rack_root, host)
    command = [
        "nsenter", f"--net=/run/netns/{prefix}-{host}",
        "unshare", "--pid", "--fork", "--kill-child=SIGKILL", "--mount", "--uts", "--ipc",
        "--mount-proc", *python_command("init", "--rack", str(rack_root), "--host", host),
    ]  # fmt: skip
    log = open(bookkeeping / "boot.log", "ab")
    child = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                             env=python_env())  # fmt: skip
    stopping = False

    def _power_off(_signum, _frame):
        nonlocal stopping
        stopping = True
        child.kill()  # unshare dies, and --kill-child SIGKILLs the whole PID namespace

    signal.signal(signal.SIGTERM, _power_off)
    signal.signal(signal.SIGINT, _power_off)
    _record_init_pid(bookkeeping, child.pid)
    child.wait()
    if not stopping:
        # PID 1 died by itself (a kernel panic): the server is dead but its power stays on
        # until its BMC (a fence, an operator) or the PDU turns it off.
        with Rack.open(rack_root) as rack:
            if _owner(bookkeeping) == os.getpid() and rack.state["servers"][host]["state"] == "up":
                mark_crashed(rack.state, host)
                rack.render([host])
        parent = os.getppid()
        while not stopping and os.getppid() == parent:  # the BMC itself may be stopped
            time.sleep(0.2)
    _wait_for_init_to_end(rack_root, host)
    write_off(rack_root, host)
    return 0


def write_on(rack_root: Path, host: str) -> None:
    """In the rack: the server is on and up, afresh. One whose last boot ended without writing
    it off (killed by its BMC first) has nothing mounted and no parameter set either."""
    with Rack.open(rack_root) as rack:
        operations.power_off(rack.state, host)
        operations.power_on(rack.state, host, rack.now)
        rack.render([host])


def write_off(rack_root: Path, host: str) -> bool:
    """In the rack: the server this boot ran is off, unless a newer boot owns it now. Asked
    under the rack's lock, which a newer boot takes to write it on after writing its pid: the
    "off" of the last boot never lands after the "on" of the next (it would hold the running
    server's sensor for good)."""
    bookkeeping = host_dir(rack_root, host) / CLUSTER_DIR
    with Rack.open(rack_root) as rack:
        if _owner(bookkeeping) != os.getpid():
            return False
        (bookkeeping / "init.pid").unlink(missing_ok=True)
        operations.power_off(rack.state, host)
        rack.render([host])
        (bookkeeping / "boot.pid").unlink(missing_ok=True)
    return True


def _owner(bookkeeping: Path) -> int | None:
    try:
        return int((bookkeeping / "boot.pid").read_text())
    except (OSError, ValueError):
        return None


def _wait_for_previous_boot(bookkeeping: Path) -> None:
    """Until the last boot has written the server off (a minute at most: a boot killed by its
    BMC writes nothing, and this one then starts from whatever it left)."""
    pid = _owner(bookkeeping)
    for _ in range(1200):
        try:
            if (
                pid is None
                or b"simulator.realcluster" not in Path(f"/proc/{pid}/cmdline").read_bytes()
            ):
                return
        except OSError:
            return
        time.sleep(0.05)


def _record_init_pid(bookkeeping: Path, unshare_pid: int) -> None:
    """unshare forks PID 1 of the new namespace: its host-side pid is what nsenter enters."""
    for _ in range(200):
        try:
            children = Path(f"/proc/{unshare_pid}/task/{unshare_pid}/children").read_text().split()
        except OSError:
            return
        if children:
            (bookkeeping / "init.pid").write_text(children[0])
            return
        time.sleep(0.05)


def _wait_for_init_to_end(rack_root: Path, host: str) -> None:
    """unshare's --kill-child kills PID 1 (and with it the whole PID namespace) as unshare
    dies; wait for that, so that "off" is never written while the server still runs."""
    for _ in range(100):
        if init_pid(rack_root, host) is None:
            return
        time.sleep(0.05)


# -- init: PID 1 of the server ---------------------------------------------------------------


def _run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True, timeout=60)


def _mount_views(rack_root: Path, host: str) -> None:
    root = host_dir(rack_root, host)
    _run("hostname", host)
    # The rack's memory trees (/dev/shm/ostara-rack-<hash>, made by `serve`, maybe later) stay
    # reachable under the server's private /dev/shm: the Lustre agent's mount must reach the
    # trees the sensors read. The host's /dev/shm is kept under /run, and the rack's name there
    # is a symlink to it.
    # The named network namespaces (/run/netns) stay too: the PDU agent reaches the BMCs'.
    keep_netns = Path(tempfile.mkdtemp(prefix="ostara-netns-"))
    _run("mount", "--rbind", "/run/netns", str(keep_netns))
    _run("mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", "/run")
    Path("/run/netns").mkdir()
    _run("mount", "--move", str(keep_netns), "/run/netns")
    keep_netns.rmdir()
    host_shm = Path("/run/ostara/host-shm")
    host_shm.mkdir(parents=True)
    _run("mount", "--bind", "/dev/shm", str(host_shm))
    _run("mount", "-t", "tmpfs", "-o", "mode=1777", "tmpfs", "/dev/shm")
    trees = f"ostara-rack-{hashlib.sha1(str(rack_root).encode()).hexdigest()[:12]}"
    os.symlink(host_shm / trees, f"/dev/shm/{trees}")
    # The real PDU agent's metadata, before the overlay puts the virtual agent in its place.
    metadata = subprocess.run(["/usr/sbin/fence_apc_snmp", "-o", "metadata"], capture_output=True,
                              timeout=60).stdout  # fmt: skip
    Path("/run/ostara").mkdir(parents=True, exist_ok=True)
    Path("/run/ostara/fence_apc_snmp.metadata").write_bytes(metadata)
    for number, path in enumerate(OVERLAYS):
        upper, work = (
            Path(f"/run/ostara/overlay/{number}/u"),
            Path(f"/run/ostara/overlay/{number}/w"),
        )  # noqa: E501
        upper.mkdir(parents=True)
        work.mkdir(parents=True)
        _run("mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={path},upperdir={upper},workdir={work}", path)  # fmt: skip
    for relative in BINDS:
        source = root / relative
        source.mkdir(parents=True, exist_ok=True)
        inside = Path("/") / relative
        inside.mkdir(parents=True, exist_ok=True)
        _run("mount", "--bind", str(source), str(inside))
    for path in ("/var/lib/pacemaker/cib", "/var/lib/pacemaker/pengine",
                 "/var/lib/pacemaker/blackbox", "/var/lib/pacemaker/cores", "/var/log/pacemaker",
                 "/var/log/cluster", "/run/crm"):  # fmt: skip
        Path(path).mkdir(parents=True, exist_ok=True)
    for path in ("/var/lib/pacemaker", "/var/log/pacemaker", "/run/crm"):
        _run("chown", "-R", "hacluster:haclient", path)
    agents.install(rack_root, host)


# pacemaker.service Requires= and After= corosync.service: started after it, stopped and
# restarted with it.
REQUIRED_BY = {"corosync.service": "pacemaker.service"}
REQUIRES = {after: before for before, after in REQUIRED_BY.items()}
FAILED = (
    "Job for {unit} failed because the control process exited with error code.\n"
    'See "systemctl status {unit}" and "journalctl -xeu {unit}" for details.'
)


# How long a start waits for Corosync to answer before it fails (systemd's job would).
ANSWER_SECONDS = 10.0


def start_unit(unit: str) -> bool:
    """Start a service in this server's namespaces (called inside them), what it requires
    first; False (as systemd's failed job) when corosync does not answer in time."""
    if unit in REQUIRES and not start_unit(REQUIRES[unit]):
        return False
    if unit_active(unit):
        return True
    command = UNITS[unit]
    log = open(f"/var/log/cluster/{command[0]}.out", "ab")
    subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                     start_new_session=True)  # fmt: skip
    if unit == "corosync.service":
        # pacemakerd gives up if Corosync does not answer yet; so does systemd's start job.
        deadline = time.monotonic() + ANSWER_SECONDS
        while True:
            done = subprocess.run(["corosync-cfgtool", "-s"], capture_output=True, timeout=10)
            if done.returncode == 0:
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)
    return True


def stop_unit(unit: str) -> None:
    if unit in REQUIRED_BY:
        stop_unit(REQUIRED_BY[unit])
    name = UNITS[unit][0]
    subprocess.run(["pkill", "-TERM", "-x", name], capture_output=True)
    for _ in range(600):
        if not unit_active(unit):
            return
        time.sleep(0.1)
    subprocess.run(["pkill", "-KILL", "-x", name], capture_output=True)


def unit_active(unit: str) -> bool:
    name = UNITS[unit][0]
    return subprocess.run(["pgrep", "-x", name], capture_output=True).returncode == 0


def init(rack_root: Path, host: str) -> int:
    rack_root = Path(rack_root).resolve()
    _mount_views(rack_root, host)
    for unit in enabled_units(host_dir(rack_root, host)):
        start_unit(unit)

    def _shutdown(_signum, _frame):
        for unit in reversed(list(UNITS)):
            stop_unit(unit)
        sys.exit(0)

    signal.signal(signal.SIGTERM, _shutdown)
    while True:  # PID 1 reaps every orphan of the server
        try:
            os.wait()
        except ChildProcessError:
            time.sleep(1)
