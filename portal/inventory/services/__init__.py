"""The inventory's services, by what they do: saving a plan (``plans``), the plan a built pair's
rows hold (``derived``), the ansible inventory of pairs (``ansible``), the arrays' REST
collector (``arrays``) and what the rack reports (``observations``). Callers import them from
here."""

from portal.inventory.services.ansible import ansible_inventory
from portal.inventory.services.arrays import (
    ArrayAccessError,
    pin_certificates,
    rest_arrays,
    take_from_virtual_rack,
)
from portal.inventory.services.cluster_keys import authkey_name, pair_authkey
from portal.inventory.services.derived import RowsDisagree, pair_plan, pair_spec
from portal.inventory.services.observations import (
    DriveMap,
    drive_location,
    drive_state,
    group_state,
    record_observations,
)
from portal.inventory.services.plans import (
    inventory_conflicts,
    plan_for_inventory,
    preview_plans,
    same_bmc_credentials,
    same_monitor_credentials,
    save_plan,
    save_plans,
    sync_catalogue,
)

__all__ = [
    "ArrayAccessError",
    "DriveMap",
    "RowsDisagree",
    "ansible_inventory",
    "authkey_name",
    "drive_location",
    "drive_state",
    "group_state",
    "inventory_conflicts",
    "pair_authkey",
    "pair_plan",
    "pair_spec",
    "plan_for_inventory",
    "preview_plans",
    "pin_certificates",
    "record_observations",
    "rest_arrays",
    "same_bmc_credentials",
    "same_monitor_credentials",
    "save_plan",
    "save_plans",
    "sync_catalogue",
    "take_from_virtual_rack",
]
