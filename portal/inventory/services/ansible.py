"""The ansible inventory of server pairs, from their rows."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from portal.inventory.models import (
    ServerPair,
)


def ansible_inventory(pairs: list[ServerPair], virtual_rack: Path | None = None) -> dict:
    """The ansible inventory of these pairs, in ansible's JSON form.

    On the virtual rack each server is a local host whose commands come first on PATH from its
    own ``bin/`` and whose files live under its root directory; on real servers the same
    playbooks run over SSH with ``ostara_root`` empty. Nothing else differs.
    """
    hostvars: dict[str, dict] = {}
    groups: dict[str, dict] = {"mds": {"hosts": {}}, "oss": {"hosts": {}}}
    for pair in pairs:
        servers = list(pair.servers.order_by("hostname"))
        # Pair groups get a prefix: an MDS pair is often named like its first server.
        groups[f"pair_{pair.name}"] = {"hosts": {server.hostname: {} for server in servers}}
        for server in servers:
            partner_server = next(s for s in servers if s.pk != server.pk)
            partner = partner_server.hostname
            host = {
                "ostara_pair": pair.name,
                "ostara_pair_group": f"pair_{pair.name}",
                "ostara_role": pair.kind,
                "ostara_fsname": pair.filesystem.name,
                "ostara_partner": partner,
                "ostara_nids": server.lnet_nids,
                # The sensor polls its partner's chassis power (sensors.redundancy).
                "ostara_partner_nids": partner_server.lnet_nids,
                "ostara_partner_bmc": partner_server.bmc_address,
                "ostara_partner_bmc_user": partner_server.bmc_username,
                # Corosync's links (corosync.yml writes them into corosync.conf); "" when
                # the server has none and Corosync runs one link on its host name.
                "ostara_mgmt_address": server.mgmt_address,
                "ostara_heartbeat_address": server.heartbeat_address,
            }
            if virtual_rack is not None:
                root = virtual_rack / "hosts" / server.hostname
                host.update(
                    {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "ostara_root": str(root),
                        "ostara_env": {"PATH": f"{root / 'bin'}{os.pathsep}{os.environ['PATH']}"},
                    }
                )
            else:
                host.update(
                    {
                        "ansible_host": server.hostname,
                        "ansible_user": "root",
                        "ostara_root": "",
                        "ostara_env": {},
                    }
                )
            hostvars[server.hostname] = host
            groups[pair.kind]["hosts"][server.hostname] = {}
    return {"all": {"hosts": hostvars, "children": groups}}
