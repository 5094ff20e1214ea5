"""Work of the health app across objects, in these parts:

- ``appliance``: the state of the appliance's own services (database, Redis, InfluxDB, workers);
- ``metrics``: the newest points of the sensors, from InfluxDB;
- ``facts``: those points and the inventory as the rules' facts, and the inventory following
  the rack;
- ``evaluation``: the rules run on the facts, the cached colours and their history;
- ``charts``: the time series and distributions behind the dashboard's charts;
- ``retention``: deleting the history older than the retention setting;
- ``slowness``: is an OST slow at the array or is its OSS busy (``rules.slowness`` judges);
- ``array_events``: the arrays' Major Event Log entries about an object since a moment.
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
