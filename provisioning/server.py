"""One server of a pair: the same record from the spec to the Pacemaker configuration.

The planner reads it from a spec (``provisioning.planner.spec``), the HA builder from a plan
(``provisioning.ha.plan``); each checks the values once, where they come in, and hands this
record on. Its plan form (``as_plan``) is the plan JSON's server entry.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Server:
    hostname: str
    nids: tuple[str, ...]
    bmc: str
    # The switched PDU and the server's outlet on it, "pdu1:3": the second fence device.
    pdu_outlet: str
    # The interface carrying LNet, for the healthLNET check; None when the spec names none
    # (the HA builder then fills in its default for the LNet network type).
    lnet_interface: str | None = None
    # The addresses of the two Corosync (knet) links: link 0 on the management network,
    # link 1 on the private heartbeat network. None: Corosync uses the host name on one link.
    mgmt_address: str | None = None
    heartbeat_address: str | None = None

    @property
    def link_addresses(self) -> tuple[str, ...]:
        """The server's Corosync link addresses, link 0 first; its host name when none given."""
        given = tuple(a for a in (self.mgmt_address, self.heartbeat_address) if a)
        return given or (self.hostname,)

    @property
    def pdu(self) -> str:
        return self.pdu_outlet.rpartition(":")[0]

    @property
    def outlet(self) -> int:
        return int(self.pdu_outlet.rpartition(":")[2])

    def as_plan(self) -> dict[str, object]:
        server: dict[str, object] = {
            "hostname": self.hostname,
            "nids": list(self.nids),
            "bmc": self.bmc,
            "pdu_outlet": self.pdu_outlet,
        }
        if self.lnet_interface is not None:
            server["lnet_interface"] = self.lnet_interface
        for key in ("mgmt_address", "heartbeat_address"):
            if getattr(self, key) is not None:
                server[key] = getattr(self, key)
        return server
