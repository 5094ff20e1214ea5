"""The rules of a server: its sensor's and its BMC's reports, its redundant paths (LNet, SAS,
multipath, the cluster) and its thresholds (CPU, memory, temperatures)."""

from __future__ import annotations

from portal.health.rules.facts import (
    ServerFacts,
    TargetFacts,
    Thresholds,
    UnitFacts,
    temperature_limits,
)
from portal.health.rules.nodes import (
    GREY,
    ORANGE,
    RED,
    Node,
    clock,
    duration,
    threshold_high,
    threshold_low,
)


def server_node(
    server: ServerFacts,
    unit: UnitFacts,
    servers: dict[str, ServerFacts],
    unit_in_service: bool,
    now: float,
    limits: Thresholds,
) -> Node:
    node = Node("server", server.hostname, summary={"role": server.role}, key=server.key)
    silent = _silent(server, now, limits)
    partners = [other for name, other in servers.items() if name != server.hostname]
    if server.last_seen is None:
        if not unit_in_service:
            node.status = GREY
            node.reasons.append("not in service yet: its sensor has not reported")
            return node
        node.raise_to(RED, _powered(server, "its sensor has never reported"))
    elif silent:
        node.raise_to(
            RED,
            _powered(
                server,
                f"its sensor has sent nothing for {duration(now - server.last_seen)} "
                f"(since {clock(server.last_seen)})",
            ),
        )
    if silent:
        node.summary["silent"] = True  # structured flags for the alerts
        node.summary["down"] = True
    elif server.power_answered and server.power_on is False:
        # The BMC says the chassis is off: whatever still reports in its name (a sensor run
        # from elsewhere, as on the virtual rack) reads nothing of a running server.
        silent = True
        node.summary["down"] = True
        node.raise_to(RED, f"powered off (fenced, or shut down): {_bmc_says(server, 'off')}")
    # The fencing levels as the partner's polls found them (None: not polled).
    node.summary["fencing_levels"] = {"bmc": server.power_answered, "pdu": server.pdu_answered}
    redundancy: list[str] = []  # the redundant parts it lost, in its reasons' words
    own = [t for t in unit.targets if t.primary == server.hostname and t.in_service]
    moved = [t for t in own if t.served_by and t.served_by != server.hostname]
    if moved:
        node.summary["failed_over"] = True  # the cause of its targets' "on partner"
    if server.maintenance:
        # Taken out on purpose: its targets on the partner are the plan, not a failure.
        away = f"; {len(moved)} of its {len(own)} targets run on its partner" if moved else ""
        node.raise_to(ORANGE, f"in maintenance {server.maintenance}{away}")
    elif moved:
        where = ", ".join(sorted({t.served_by for t in moved}))
        if len(moved) == len(own) and not silent and _healthy(server):
            # Repaired and waiting for the operator's decision: not an alarm any more.
            node.summary["ready_for_failback"] = True
            node.raise_to(
                ORANGE,
                f"ready for failback: {_all(own)} on {where}; fail back when you are ready",
            )
        elif len(moved) == len(own):
            # Every one of its targets left it: it crashed, was fenced, or lost its SAS or LNet
            # paths, and the pair has no spare server left until it is back.
            node.raise_to(
                RED,
                f"{_all(own)} on {where}: it was fenced or lost its "
                "service; fail back once the cause is fixed",
            )
        else:
            node.raise_to(
                ORANGE,
                f"{len(moved)} of its {len(own)} targets run on {where} "
                "(failed over; fail back when the cause is fixed)",
            )
    served = [t for t in unit.targets if t.served_by == server.hostname]
    node.summary["targets"] = len(served)
    if silent:
        # Its other readings are stale: only what its partner sees now, and the causes its
        # last report named (a server that lost its SAS paths or its heartbeat is fenced).
        for other in partners:
            if not _absent(other, now, limits) and other.partner_heard is False:
                node.reasons.append(f"{other.hostname} has lost the heartbeat (corosync) to it")
        for status, reason, _ in _paths(server, partners, served, now, limits, last=True):
            node.raise_to(status, f"its last report: {reason}")
        return node
    if server.lustre_healthy is False:
        node.raise_to(RED, "Lustre's health_check reports NOT HEALTHY")
    for status, reason, redundant in _paths(server, partners, served, now, limits):
        node.raise_to(status, reason)
        if redundant:
            redundancy.append(reason)
    stale_bmc = len(node.reasons)
    _bmc(node, server, now, limits)
    lost_bmc = [reason for reason in node.reasons[stale_bmc:] if "only the PDU" in reason]
    redundancy += lost_bmc
    redundancy += _fencing(node, server, bmc_said=bool(lost_bmc))
    if redundancy:
        node.summary["redundancy"] = redundancy
    if server.cpu_idle_percent is not None:
        node.summary["cpu_idle_percent"] = round(server.cpu_idle_percent, 1)
        threshold_low(
            node,
            server.cpu_idle_percent,
            limits.cpu_idle_warning_percent,
            limits.cpu_idle_critical_percent,
            lambda level, limit: (
                f"CPU {server.cpu_idle_percent:.1f} % idle ({level} below {limit:g} %)"
            ),
        )
    if server.memory_available_percent is not None:
        node.summary["memory_available_percent"] = round(server.memory_available_percent, 1)
        threshold_low(
            node,
            server.memory_available_percent,
            limits.memory_available_warning_percent,
            limits.memory_available_critical_percent,
            lambda level, limit: (
                f"{server.memory_available_percent:.1f} % of memory available "
                f"({level} below {limit:g} %)"
            ),
        )
    if node.status == RED:
        node.summary.pop("ready_for_failback", None)  # a fault of its own came up meanwhile
    return node


def _all(targets: list) -> str:
    """ "its only target runs", "both of its targets run", "all 12 of its targets run"."""
    if len(targets) == 1:
        return "its only target runs"
    return f"{'both' if len(targets) == 2 else f'all {len(targets)}'} of its targets run"


def _healthy(server: ServerFacts) -> bool:
    """Fit to take its targets back: powered on, LNet up, every SAS path, its cluster running
    with its heartbeat ring, and Lustre healthy, as its own tools report them (unknown counts
    as fit)."""
    return (
        server.power_on is not False
        and server.lnet_up is not False
        and all(server.sas_paths.values())
        and server.cluster_running is not False
        and server.heartbeat_up is not False
        and server.lustre_healthy is not False
    )


def _fencing(node: Node, server: ServerFacts, bmc_said: bool) -> list[str]:
    """The fencing levels (BMC, then PDU) its partner could not reach: one lost is orange,
    every one lost red (a fault of it would leave the pair stuck); returns the sentences."""
    levels = node.summary["fencing_levels"]
    bmc = f"its BMC does not answer {server.power_polled_by} over the management network"
    pdu = f"PDU {server.pdu} does not answer {server.pdu_polled_by}'s fence_apc_snmp status"
    if all(level is False for level in levels.values()):
        reason = f"cannot be fenced: {bmc}, and {pdu}; a fault of it would leave the pair stuck"
        node.raise_to(RED, reason)
        return [reason]
    lost = []
    if levels["bmc"] is False and not bmc_said:
        if levels["pdu"] is None:
            # The PDU is not polled: a heartbeat lost altogether says the private network is
            # down too (with two links, one still heard is the management network working).
            whole = (
                "with the heartbeat down too, it cannot be fenced"
                if server.heartbeat_up is False and not server.partner_heard
                else "only the PDU can fence it"
            )
            lost.append(f"{bmc}: {whole}")
        else:
            lost.append(f"fencing by BMC unavailable: {bmc}; only the PDU can fence it")
    if levels["pdu"] is False:
        lost.append(f"fencing by PDU unavailable: {pdu}; only its BMC can fence it")
    for reason in lost:
        node.raise_to(ORANGE, reason)
    return lost


def _silent(server: ServerFacts, now: float, limits: Thresholds) -> bool:
    return server.last_seen is None or now - server.last_seen > limits.sensor_silence_seconds


def _absent(server: ServerFacts, now: float, limits: Thresholds) -> bool:
    """Silent, or powered off as its BMC says: its partner's lost ring says nothing more."""
    return _silent(server, now, limits) or bool(server.power_answered and server.power_on is False)


def _powered(server: ServerFacts, silence: str) -> str:
    """A silent server's reason: what its BMC answered its partner, if it did."""
    if not server.power_answered or server.power_on is None:
        return f"{silence}: the server is down or not watched"
    if not server.power_on:
        return f"powered off (fenced, or shut down): {_bmc_says(server, 'off')}; {silence}"
    return f"{silence}, while {_bmc_says(server, 'on')}: hung or crashed, or its sensor stopped"


def _bmc_says(server: ServerFacts, power: str) -> str:
    """Who asked its BMC over the management network, and what the BMC answered."""
    return f"{server.power_polled_by} reaches its BMC, which reports the chassis {power}"


def _paths(
    server: ServerFacts,
    partners: list[ServerFacts],
    served: list[TargetFacts],
    now: float,
    limits: Thresholds,
    last: bool = False,
) -> list[tuple[str, str, bool]]:
    """(colour, reason, a redundant part lost) for each path the server's own tools report
    lost. ``last``: a silent or powered-off server's last report, in which corosync not
    answering says only that the server went down."""
    found = []
    if server.lnet_up is False:
        unreachable = [
            p.hostname
            for p in partners
            if not _silent(p, now, limits) and p.lnet_partner_ping is False
        ]
        reason = "its LNet (public network) link is down (lnetctl net show)"
        if unreachable:
            reason += f"; {', '.join(unreachable)} cannot lnetctl ping it"
        found.append((RED if served else ORANGE, reason, False))
    if server.cluster_running is False and not last:
        found.append(
            (ORANGE, "its cluster stack (corosync) does not answer: it cannot fail over", False)
        )
    elif server.heartbeat_up is False and all(not _absent(p, now, limits) for p in partners):
        # With the partner down the lost ring is the partner's absence, said on the partner.
        names = ", ".join(p.hostname for p in partners) or "its partner"
        if server.partner_heard:
            # Corosync knet with two links: the other one still carries the cluster (DESIGN
            # §2's recipe), so the pair agrees and can fence, with no link to spare.
            reason = (
                f"one of its corosync links to {names} is down (a heartbeat cable or the "
                "private switch): the cluster runs on the other link alone"
            )
        else:
            reason = f"its heartbeat (corosync ring) to {names} is down: the pair cannot agree"
        found.append((ORANGE, reason, True))
    found += _sas_paths(server)
    return found


def _sas_paths(server: ServerFacts) -> list[tuple[str, str, bool]]:
    by_array: dict[str, list[bool]] = {}
    for path, up in sorted(server.sas_paths.items()):
        by_array.setdefault(path.split("/")[0], []).append(up)
    found = []
    for array, paths in sorted(by_array.items()):
        down = paths.count(False)
        if not down:
            continue
        if down == len(paths):
            found.append(
                (
                    RED,
                    f"every SAS path to {array} is down (multipath): its targets fail over "
                    "after the multipath timeout",
                    False,
                )
            )
        else:
            found.append(
                (
                    ORANGE,
                    f"{down} of its {len(paths)} SAS paths to {array} "
                    f"{'is' if down == 1 else 'are'} down (multipath): "
                    "multipath carries on over the other",
                    True,
                )
            )
    return found


def _bmc(node: Node, server: ServerFacts, now: float, limits: Thresholds) -> None:
    if server.bmc_last_seen is not None and now - server.bmc_last_seen > limits.silent_after(
        server.bmc_interval
    ):
        node.raise_to(ORANGE, f"{_bmc_silence(server, now)}: only the PDU can fence it")
        return
    hottest = None
    for reading in server.bmc_readings:
        if reading.type == "temperature" and reading.value is not None:
            if hottest is None or reading.value > hottest.value:
                hottest = reading
            warning, critical, whose = temperature_limits(reading, limits)
            if reading.value >= warning:
                node.summary["hot"] = True  # a structured flag for the alerts
            threshold_high(
                node,
                reading.value,
                warning,
                critical,
                lambda level, limit, r=reading, whose=whose: (
                    f"{r.sensor} at {r.value:g} °C ({level} at {limit:g} °C, {whose})"
                ),
            )
        elif not reading.ok:
            node.raise_to(ORANGE, f"BMC sensor {reading.sensor} ({reading.type}) reports a fault")
    if hottest is not None:
        node.summary["temperature_c"] = hottest.value


def _bmc_silence(server: ServerFacts, now: float) -> str:
    """How long its BMC has not answered, from the first poll it missed (its last answer and
    one BMC interval later) when the interval is known: not from its last answer, which
    came up to an interval before the fault."""
    last = server.bmc_last_seen or now
    interval = server.bmc_interval or server.sensor_interval
    if interval and last + interval <= now:
        missed = last + interval
        return (
            f"its BMC has not answered for {duration(now - missed)} "
            f"(no answer to its polls since {clock(missed)})"
        )
    return f"its BMC has not answered since {clock(last)} (its last answer)"
