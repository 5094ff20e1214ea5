"""The commands a virtual server has on its PATH: name as typed -> module of simulator.commands.

Kept apart from the command modules so that the rack (which installs them) and the commands
(which open the rack) import it without importing each other."""

from __future__ import annotations

MODULES = {
    "mkfs.lustre": "mkfs_lustre",
    "tunefs.lustre": "tunefs_lustre",
    "mount": "mount",
    "mount.lustre": "mount",
    "umount": "umount",
    "lctl": "lctl",
    "lnetctl": "lnetctl",
    "lfs": "lfs",
    "obdfilter-survey": "obdfilter_survey",
    "ipmitool": "ipmitool",
    "fence_apc_snmp": "fence_apc_snmp",
    "cibadmin": "pacemaker",
    "crm_mon": "pacemaker",
    "crm_resource": "pacemaker",
    "crm_attribute": "pacemaker",
    "SMcli": "smcli",
    "multipath": "multipath",
    "corosync-cfgtool": "corosync_cfgtool",
    # Only the cluster stack's units (corosync.yml enables and starts them).
    "systemctl": "systemctl",
}
