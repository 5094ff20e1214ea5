"""Work of the health app across objects, in four parts:

- ``appliance``: the state of the appliance's own services (database, Redis, InfluxDB, workers);
- ``evaluation``: facts from the inventory and InfluxDB, the rules, the cached colours and
  their history;
- ``charts``: the time series and distributions behind the dashboard's charts;
- ``retention``: deleting the history older than the retention setting.
"""

from __future__ import annotations

from portal.health.services.appliance import (
    ServiceState,
    check_all,
    check_database,
    check_influxdb,
    check_redis,
    check_workers,
)

__all__ = [
    "ServiceState",
    "check_all",
    "check_database",
    "check_influxdb",
    "check_redis",
    "check_workers",
]
