"""The agents Pacemaker runs on a real-cluster virtual server, written inside its namespaces.

- `ocf:lustre:Lustre`, `ocf:lustre:healthLNET` and `ocf:lustre:healthLUSTRE`: the CIB names
  them with the parameters of the real agents (lustre-release `lustre/scripts/Lustre`,
  `healthLNET`, `healthLUSTRE`), and they do what those do through the server's own commands:
  `mount -t lustre TARGET MOUNTPOINT`, `umount`, the mounts for monitor; `lctl ping` of the
  host list and `lctl get_param -n health_check`, published with `attrd_updater`. The commands
  are the virtual server's (its `bin/` first on PATH), so a target Pacemaker starts is mounted
  in the rack and the sensors see it.
- `fence_apc_snmp`: the switched PDU. The real agent speaks SNMP to a PDU that does not exist
  here; this one cuts or restores the outlet's power in the rack (`python -m
  simulator.realcluster pdu`), and fails as the real one does when the PDU does not answer.

They live in the overlays `node.py` mounts, so the machine's own /usr is never written.
"""

from __future__ import annotations

import os
import shlex
import sys
from pathlib import Path

from simulator import procfs
from simulator.rack import REPO_ROOT

OCF_DIR = Path("/usr/lib/ocf/resource.d/lustre")
METADATA = "/run/ostara/fence_apc_snmp.metadata"

_HEADER = """#!/bin/sh
# {name} of the Ostara virtual rack, on the virtual server {host} (simulator/realcluster/agents.py).
PATH={bin}:/usr/sbin:/usr/bin:/sbin:/bin
export PATH
OCF_SUCCESS=0; OCF_ERR_GENERIC=1; OCF_ERR_ARGS=2; OCF_ERR_UNIMPLEMENTED=3; OCF_ERR_CONFIGURED=6
OCF_NOT_RUNNING=7
"""

_LUSTRE = """
meta_data() {
cat <<'XML'
<?xml version="1.0"?>
<!DOCTYPE resource-agent SYSTEM "ra-api-1.dtd">
<resource-agent name="Lustre" version="1.0">
<version>1.0</version>
<longdesc lang="en">Starts a Lustre target (mount -t lustre) on this server.</longdesc>
<shortdesc lang="en">Lustre target</shortdesc>
<parameters>
<parameter name="target" unique="1" required="1"><longdesc lang="en">The target's block device.</longdesc><shortdesc lang="en">device</shortdesc><content type="string"/></parameter>
<parameter name="mountpoint" unique="1" required="1"><longdesc lang="en">Where it is mounted.</longdesc><shortdesc lang="en">mountpoint</shortdesc><content type="string"/></parameter>
<parameter name="mountoptions" required="0"><longdesc lang="en">mount -o options.</longdesc><shortdesc lang="en">options</shortdesc><content type="string"/></parameter>
</parameters>
<actions>
<action name="start" timeout="300s"/>
<action name="stop" timeout="300s"/>
<action name="monitor" depth="0" timeout="300s" interval="20s"/>
<action name="meta-data" timeout="5s"/>
<action name="validate-all" timeout="30s"/>
</actions>
</resource-agent>
XML
}

mounted() {
    mount -t lustre 2>/dev/null | grep -q "^$OCF_RESKEY_target on $OCF_RESKEY_mountpoint type lustre "
}

validate() {
    [ -n "$OCF_RESKEY_target" ] && [ -n "$OCF_RESKEY_mountpoint" ] || exit $OCF_ERR_CONFIGURED
}

case "$1" in
meta-data) meta_data; exit $OCF_SUCCESS ;;
validate-all) validate; exit $OCF_SUCCESS ;;
start)
    validate
    mounted && exit $OCF_SUCCESS
    mount -t lustre ${OCF_RESKEY_mountoptions:+-o "$OCF_RESKEY_mountoptions"} \\
        "$OCF_RESKEY_target" "$OCF_RESKEY_mountpoint" || exit $OCF_ERR_GENERIC
    mounted && exit $OCF_SUCCESS
    exit $OCF_ERR_GENERIC ;;
stop)
    validate
    mounted || exit $OCF_SUCCESS
    umount "$OCF_RESKEY_mountpoint" || exit $OCF_ERR_GENERIC
    exit $OCF_SUCCESS ;;
monitor|status)
    validate
    mounted && exit $OCF_SUCCESS
    exit $OCF_NOT_RUNNING ;;
*) exit $OCF_ERR_UNIMPLEMENTED ;;
esac
"""

# healthLNET and healthLUSTRE: a clone on each server that keeps a node attribute; the CIB's
# rules keep targets off a server whose attribute is 0 or missing.
_HEALTH = """
STATE=/run/ostara/{name}.started
meta_data() {{
cat <<'XML'
<?xml version="1.0"?>
<!DOCTYPE resource-agent SYSTEM "ra-api-1.dtd">
<resource-agent name="{name}" version="1.0">
<version>1.0</version>
<longdesc lang="en">{what}</longdesc>
<shortdesc lang="en">{name}</shortdesc>
<parameters>
<parameter name="name"><longdesc lang="en">The node attribute.</longdesc><shortdesc lang="en">attribute</shortdesc><content type="string" default="{attribute}"/></parameter>
<parameter name="multiplier"><longdesc lang="en">Score per answering peer.</longdesc><shortdesc lang="en">multiplier</shortdesc><content type="integer" default="1"/></parameter>
<parameter name="host_list"><longdesc lang="en">NIDs to ping.</longdesc><shortdesc lang="en">NIDs</shortdesc><content type="string"/></parameter>
<parameter name="device"><longdesc lang="en">The LNet interface.</longdesc><shortdesc lang="en">device</shortdesc><content type="string"/></parameter>
<parameter name="lctl"><longdesc lang="en">Use lctl ping.</longdesc><shortdesc lang="en">lctl</shortdesc><content type="boolean" default="true"/></parameter>
</parameters>
<actions>
<action name="start" timeout="60s"/>
<action name="stop" timeout="20s"/>
<action name="monitor" depth="0" timeout="60s" interval="10s"/>
<action name="meta-data" timeout="5s"/>
<action name="validate-all" timeout="20s"/>
</actions>
</resource-agent>
XML
}}

score() {{
{score}
}}

update() {{
    attrd_updater -n "${{OCF_RESKEY_name:-{attribute}}}" -U "$(score)" -d 5s >/dev/null 2>&1
}}

case "$1" in
meta-data) meta_data; exit $OCF_SUCCESS ;;
validate-all) exit $OCF_SUCCESS ;;
start) mkdir -p /run/ostara && touch "$STATE" && update; exit $OCF_SUCCESS ;;
stop) rm -f "$STATE"; attrd_updater -n "${{OCF_RESKEY_name:-{attribute}}}" -D >/dev/null 2>&1
      exit $OCF_SUCCESS ;;
monitor|status) [ -f "$STATE" ] || exit $OCF_NOT_RUNNING; update; exit $OCF_SUCCESS ;;
*) exit $OCF_ERR_UNIMPLEMENTED ;;
esac
"""

_LNET_SCORE = """    answered=0
    for nid in $OCF_RESKEY_host_list; do
        lctl ping "$nid" >/dev/null 2>&1 && answered=$((answered + 1))
    done
    echo $((answered * ${OCF_RESKEY_multiplier:-1}))"""

_LUSTRE_SCORE = """    if [ "$(lctl get_param -n health_check 2>/dev/null)" = "healthy" ]; then echo 1; else echo 0; fi"""

_PDU = """#!/bin/sh
# fence_apc_snmp of the Ostara virtual rack on {host}: the PDU's outlets are the rack's
# (simulator/realcluster/agents.py). Options come as fenced passes them (key=value on stdin)
# or on the command line. Pacemaker's controller asks for the metadata as hacluster, who cannot
# run the appliance's Python: the real agent's metadata, kept at boot, is read here.
case " $* " in *" metadata "*|*"=metadata "*) exec cat {metadata} ;; esac
export PYTHONPATH={pythonpath}
if [ $# -eq 0 ]; then
    options=$(cat)
    case "$options" in *action=metadata*|*option=metadata*) exec cat {metadata} ;; esac
    printf '%s\n' "$options" | {python} -m simulator.realcluster pdu --rack {rack} --from-host {host}
    exit $?
fi
exec {python} -m simulator.realcluster pdu --rack {rack} --from-host {host} "$@"
"""


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, 0o755)


def install(
    rack_root: Path, host: str, ocf_dir: Path = OCF_DIR, sbin: Path = Path("/usr/sbin")
) -> None:
    """Write the agents (inside the server's namespaces: into its overlays)."""
    bin_dir = shlex.quote(str(procfs.host_root(rack_root, host) / "bin"))
    header = {"bin": bin_dir, "host": host}
    _write(ocf_dir / "Lustre", _HEADER.format(name="ocf:lustre:Lustre", **header) + _LUSTRE)
    _write(
        ocf_dir / "healthLNET",
        _HEADER.format(name="ocf:lustre:healthLNET", **header)
        + _HEALTH.format(name="healthLNET", attribute="pingd", score=_LNET_SCORE,
                         what="Keeps a node attribute: how many LNet peers answer lctl ping."),
    )  # fmt: skip
    _write(
        ocf_dir / "healthLUSTRE",
        _HEADER.format(name="ocf:lustre:healthLUSTRE", **header)
        + _HEALTH.format(name="healthLUSTRE", attribute="lustred", score=_LUSTRE_SCORE,
                         what="Keeps a node attribute: 1 while Lustre's health_check is healthy."),
    )  # fmt: skip
    _write(
        sbin / "fence_apc_snmp",
        _PDU.format(host=shlex.quote(host), rack=shlex.quote(str(rack_root)),
                    python=shlex.quote(sys.executable), metadata=METADATA, pythonpath=shlex.quote(str(REPO_ROOT))),
    )  # fmt: skip
