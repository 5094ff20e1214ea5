"""The redundant paths a server pair relies on, as the server's own tools report them.

- `cluster` (tags `server`): the heartbeat, from `corosync-cfgtool -s`. Corosync 3 (knet)
  prints each link with every node's state from here (`localhost`, `connected`,
  `disconnected`); Corosync 2 (totem rrp) prints each ring's `status = ring N active with no
  faults` or a status naming it `FAULTY`. Fields: `running` (1; 0 when corosync does not
  answer), `rings_total`, `rings_faulty` (links on which a node is not connected, or faulty
  rings), `peers_total`, `peers_connected` (other nodes connected on at least one link;
  knet only).
- `multipath` (tags `server`, `device`): the SAS paths to the arrays, from `multipath -ll`.
  Each path line reads `H:C:T:L sdX MAJ:MIN <dm state> <checker state> <online state>`; a
  path counts as active when the device mapper has it `active` and the checker says `ready`
  or `ghost` (a standby path of an ALUA array). Fields: `paths_total`, `paths_active`,
  `paths_failed`; and one point per round without `device`, the server's summary: `maps`,
  `maps_degraded` (a path lost), `maps_failed` (no path left), so that a reader finds the
  servers with lost paths without scanning every map's series.
- `lnet` (tags `server`), next to the counters of `sensors.node`: LNet's own view, from
  `lnetctl net show` (`status: up`/`down` of each network interface but the loopback) and
  `lnetctl ping <NID>` of the partner's NIDs. Fields: `nets_up`, `nets_down`, `peers_pinged`,
  `peer_ping_ok`.
- `bmc_power` (tags `server` = the polled server, `polled_by`): the partner's chassis power,
  from `ipmitool -I lanplus -H <its BMC> ... chassis power status` over the management
  network, with the credentials the server already holds for fencing. A BMC keeps answering
  when its host has crashed or been fenced, so this says "powered off" where the host's own
  sensor is silent. Fields: `answered` (1/0), `power_on` (1/0, when answered).
- `pdu_power` (tags `server` = the polled server, `polled_by`): the second fencing level, the
  partner's outlet on its switched PDU, from the fence agent Pacemaker fences with
  (`fence_apc_snmp --ip=<PDU> --plug=<outlet> ... --action=status`), with the same user and
  password scripts as the CIB's device, on the same interval as the BMC. The agents of
  ClusterLabs' fence-agents print `Status: ON` (exit 0) or `Status: OFF` (exit 2) and exit 1
  when they cannot reach the device or read the plug ("Failed: Unable to obtain correct plug
  status or plug is not available", "Connection timed out"). Fields: `answered` (1/0),
  `power_on` (1/0, when answered): a level that does not answer cannot fence.
"""

from __future__ import annotations

import re
import shlex
import subprocess

from sensors import schema
from sensors.bmc import run_command
from sensors.rounds import Round

_PATH_RE = re.compile(
    r"(?P<hctl>\d+:\d+:\d+:\d+)\s+(?P<dev>\S+)\s+(?P<majmin>\d+:\d+)\s+"
    r"(?P<dm>\w+)\s+(?P<checker>\w+)\s+(?P<online>\w+)"
)
_MAP_RE = re.compile(r"^(?:[a-z]+:\s+)?(?P<name>\S+)(?:\s+\((?P<wwid>[^)]+)\))?\s+dm-\d+\b")
_KNET_NODE_RE = re.compile(r"^\s*nodeid:\s*(\d+):\s*(\S+)")
_RING_STATUS_RE = re.compile(r"^\s*status\s*=\s*(.*)$")
COMMAND_FAILURES = (OSError, subprocess.SubprocessError, RuntimeError, ValueError)


def parse_corosync_status(text: str) -> dict[str, int]:
    links: list[dict[int, str]] = []
    rings: list[str] = []
    for row in text.splitlines():
        stripped = row.strip()
        if stripped.startswith("LINK ID"):
            links.append({})
        elif stripped.startswith("RING ID"):
            rings.append("")
        elif links and (match := _KNET_NODE_RE.match(row)):
            links[-1][int(match.group(1))] = match.group(2).lower()
        elif rings and (match := _RING_STATUS_RE.match(row)):
            rings[-1] = match.group(1)
    if links:
        peers = {node for link in links for node, word in link.items() if word != "localhost"}
        connected = {node for link in links for node, word in link.items() if word == "connected"}
        faulty = sum(
            1 for link in links if any(w not in ("localhost", "connected") for w in link.values())
        )
        return {
            "running": 1,
            "rings_total": len(links),
            "rings_faulty": faulty,
            "peers_total": len(peers),
            "peers_connected": len(connected),
        }
    if rings:
        faulty = sum(1 for status in rings if "faulty" in status.lower() or not status)
        return {"running": 1, "rings_total": len(rings), "rings_faulty": faulty}
    raise ValueError("no LINK or RING in the corosync-cfgtool output")


def parse_multipath(text: str) -> dict[str, dict[str, int]]:
    """device -> paths_total, paths_active, paths_failed."""
    maps: dict[str, dict[str, int]] = {}
    current = None
    for row in text.splitlines():
        path = _PATH_RE.search(row)
        if path:
            if current is None:
                raise ValueError(f"a path before any map: {row!r}")
            ok = path.group("dm") == "active" and path.group("checker") in ("ready", "ghost")
            current["paths_total"] += 1
            current["paths_active" if ok else "paths_failed"] += 1
            continue
        found = _MAP_RE.match(row)
        if found and not row.startswith((" ", "|", "`", "size=")):
            current = maps.setdefault(
                found.group("name"), {"paths_total": 0, "paths_active": 0, "paths_failed": 0}
            )
    return maps


def parse_lnet_nets(text: str) -> dict[str, int]:
    """nets_up and nets_down of `lnetctl net show`, the loopback left out."""
    up = down = 0
    net = ""
    for row in text.splitlines():
        stripped = row.strip().lstrip("- ").strip()
        if stripped.startswith("net type:"):
            net = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("status:") and net != "lo":
            if stripped.split(":", 1)[1].strip() == "up":
                up += 1
            else:
                down += 1
    return {"nets_up": up, "nets_down": down}


def parse_power_status(text: str) -> int:
    match = re.search(r"Chassis Power is (on|off)", text)
    if not match:
        raise ValueError(f"not a chassis power status: {text.strip()!r}")
    return 1 if match.group(1) == "on" else 0


_FENCE_STATUS_RE = re.compile(r"^Status: (ON|OFF)\s*$", re.MULTILINE)
# The fence agents' exit codes for `--action=status` (fence-agents' fencing.py).
FENCE_STATUS_ON, FENCE_STATUS_OFF = 0, 2


def parse_fence_status(text: str) -> int:
    """1 (on) or 0 (off) from a fence agent's `Status: ON|OFF`."""
    match = _FENCE_STATUS_RE.search(text)
    if not match:
        raise ValueError(f"not a fence agent's status: {text.strip()!r}")
    return 1 if match.group(1) == "ON" else 0


def collect_cluster(rnd: Round, command: str, timeout: float) -> None:
    try:
        output = run_command(command, timeout)
    except RuntimeError:
        # Corosync does not answer: the cluster stack is not running here.
        rnd.add(schema.CLUSTER.name, {}, {"running": 0})
        return
    except COMMAND_FAILURES as error:
        rnd.problem(f"cluster command {command!r}", error)
        return
    try:
        rnd.add(schema.CLUSTER.name, {}, parse_corosync_status(output))
    except ValueError as error:
        rnd.problem(f"cluster command {command!r}", error)


def collect_multipath(rnd: Round, command: str, timeout: float) -> None:
    try:
        maps = parse_multipath(run_command(command, timeout))
    except COMMAND_FAILURES as error:
        rnd.problem(f"multipath command {command!r}", error)
        return
    for device, fields in sorted(maps.items()):
        rnd.add(schema.MULTIPATH.name, {schema.DEVICE: device}, fields)
    rnd.add(
        schema.MULTIPATH.name,
        {},
        {
            "maps": len(maps),
            "maps_degraded": sum(1 for m in maps.values() if m["paths_failed"]),
            "maps_failed": sum(1 for m in maps.values() if not m["paths_active"]),
        },
    )


def collect_lnet_state(rnd: Round, lnetctl: str, peers: tuple[str, ...], timeout: float) -> None:
    try:
        fields: dict = parse_lnet_nets(run_command(f"{lnetctl} net show", timeout))
    except COMMAND_FAILURES as error:
        rnd.problem(f"lnet command {lnetctl!r}", error)
        return
    answered = 0
    for nid in peers:
        try:
            run_command(f"{lnetctl} ping {shlex.quote(nid)}", timeout)
            answered += 1
        except RuntimeError:
            pass  # no answer: that is the reading
        except COMMAND_FAILURES as error:
            rnd.problem(f"lnet command {lnetctl!r}", error)
            return
    if peers:
        fields.update(peers_pinged=len(peers), peer_ping_ok=answered)
    rnd.add(schema.LNET.name, {}, fields)


def collect_partner_power(rnd: Round, host: str, command: str, timeout: float) -> None:
    tags = {schema.SERVER: host, schema.POLLED_BY: rnd.tags.get(schema.SERVER, "")}
    try:
        output = run_command(command, timeout)
    except (RuntimeError, subprocess.TimeoutExpired):
        rnd.add(schema.BMC_POWER.name, tags, {"answered": 0})  # no session: BMC or network down
        return
    except COMMAND_FAILURES as error:
        rnd.problem(f"partner BMC command for {host}", error)
        return
    try:
        rnd.add(
            schema.BMC_POWER.name, tags, {"answered": 1, "power_on": parse_power_status(output)}
        )
    except ValueError as error:
        rnd.problem(f"partner BMC command for {host}", error)


def collect_partner_pdu(rnd: Round, host: str, command: str, timeout: float) -> None:
    """The partner's PDU outlet through the fence agent's `status`: exit 0 on, 2 off, anything
    else (or no answer in time) the level cannot fence now."""
    tags = {schema.SERVER: host, schema.POLLED_BY: rnd.tags.get(schema.SERVER, "")}
    try:
        result = subprocess.run(
            shlex.split(command), capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        rnd.add(schema.PDU_POWER.name, tags, {"answered": 0})
        return
    except COMMAND_FAILURES as error:
        rnd.problem(f"partner PDU command for {host}", error)  # no agent: not a reading
        return
    if result.returncode not in (FENCE_STATUS_ON, FENCE_STATUS_OFF):
        rnd.add(schema.PDU_POWER.name, tags, {"answered": 0})
        return
    try:
        power_on = parse_fence_status(result.stdout)
    except ValueError as error:
        rnd.problem(f"partner PDU command for {host}", error)
        return
    rnd.add(schema.PDU_POWER.name, tags, {"answered": 1, "power_on": power_on})
