"""Hand-written accounting of a small filesystem in the test InfluxDB, the usage tests' world.

scratch over two hours (``T0`` = two hours ago, ``T1`` = a minute ago), in KiB:

- user 1000 (alice): OST0000 100 -> 200 GiB, OST0001 10 GiB, MDT0000 4 MiB and 1000 -> 3000
  files; hard limits 1 TiB and 10,000 files.
- user 1001 (bob): OST0000 300 GiB, OST0001 50 GiB, 500 files; no limits, no growth.
- user 1002 (carol): OST0001 20 -> 30 GiB, 10 files; soft 25 GiB, hard 40 GiB, in grace for
  three more days.
- user 1003 (dave): OST0001 5 GiB, 20 files; soft 4 GiB, hard 6 GiB, grace ended an hour ago.
- group 100 = alice and bob's data (no limits), group 200 = carol and dave's; project 42 all.

OST0001 fails over between the two points (oss02 first, oss01 last): each target is counted
once. The OSTs' own `inodes` (objects) are written too and must not count as files. An OST
pool's limits (``flash``) are not the owner's quota. The OSTs hold 500 and 100 GiB of 1 TiB.

The health tests' virtual rack serves the acceptance test (``test_usage_on_virtual_rack``).
"""

from __future__ import annotations

import time

import pytest

from portal import influxdb as influx
from portal.health.tests.conftest import metrics_db, rack_inventory, virtual_rack  # noqa: F401
from sensors.lineproto import line, series

GIB = 2**20  # KiB
TIB = 2**30
MIB4 = 4096


def owner_point(t: int, target: str, server: str, kind: str, owner: int, kbytes, inodes) -> str:
    tags = {"fs": "scratch", "target": target, "server": server, "kind": kind, "id": str(owner)}
    return line(series("owner_usage", tags), {"kbytes": kbytes, "inodes": inodes}, t * 10**9)


def limit_point(t: int, kind: str, owner: int, pool: str = "0x0", **limits) -> str:
    fields = {
        f"{unit}_{key}": 0
        for unit in ("kbytes", "inodes")
        for key in ("hard", "soft", "granted", "time")
    }
    fields.update(limits)
    tags = {"fs": "scratch", "server": "mds01", "pool": pool, "kind": kind, "id": str(owner)}
    return line(series("owner_quota", tags), fields, t * 10**9)


# (OST0000 first, last), (OST0001 first, last), MDT files (first, last): per user.
USERS = {
    1000: ((100 * GIB, 200 * GIB), (10 * GIB, 10 * GIB), (1000, 3000)),
    1001: ((300 * GIB, 300 * GIB), (50 * GIB, 50 * GIB), (500, 500)),
    1002: ((0, 0), (20 * GIB, 30 * GIB), (10, 10)),
    1003: ((0, 0), (5 * GIB, 5 * GIB), (20, 20)),
}
GROUP_OF = {1000: 100, 1001: 100, 1002: 200, 1003: 200}


def accounting_lines(t0: int, t1: int, now: int) -> list[str]:
    lines = []
    for at, which, ost1_server in ((t0, 0, "oss02"), (t1, 1, "oss01")):
        totals: dict[tuple[str, int], list[float]] = {}
        for user, (ost0, ost1, files) in USERS.items():
            values = {"OST0000": ost0[which], "OST0001": ost1[which]}
            owners = [("user", user), ("group", GROUP_OF[user]), ("project", 42)]
            for target, kbytes in values.items():
                if not kbytes:
                    continue
                server = "oss01" if target == "OST0000" else ost1_server
                for kind, owner in owners:
                    key = (target, kind, owner)
                    totals.setdefault(key, [server, 0, 0])
                    totals[key][1] += kbytes
                    totals[key][2] += 77  # objects on an OST: not the owner's files
            for kind, owner in owners:
                key = ("MDT0000", kind, owner)
                totals.setdefault(key, ["mds01", 0, 0])
                totals[key][1] += MIB4
                totals[key][2] += files[which]
        for (target, kind, owner), (server, kbytes, inodes) in totals.items():
            lines.append(owner_point(at, target, server, kind, owner, kbytes, inodes))
    lines += [
        limit_point(t1, "user", 1000, kbytes_hard=TIB, inodes_hard=10_000),
        limit_point(t1, "user", 1000, pool="flash", kbytes_hard=GIB, kbytes_soft=GIB),
        limit_point(
            t1,
            "user",
            1002,
            kbytes_hard=40 * GIB,
            kbytes_soft=25 * GIB,
            kbytes_time=now + 3 * 86400,
        ),
        limit_point(
            t1, "user", 1003, kbytes_hard=6 * GIB, kbytes_soft=4 * GIB, kbytes_time=now - 3600
        ),
        limit_point(t1, "user", 0, kbytes_time=604800, inodes_time=604800),  # the grace periods
    ]
    for target, used, server in (("OST0000", 500 * GIB, "oss01"), ("OST0001", 100 * GIB, "oss01")):
        tags = {"fs": "scratch", "target": target, "server": server}
        fields = {"kbytes_total": TIB, "kbytes_free": TIB - used, "kbytes_avail": TIB - used}
        lines.append(line(series("ost", tags), fields, t1 * 10**9))
    return lines


@pytest.fixture
def accounting(rack_inventory, metrics_db):  # noqa: F811
    """The accounting above written; returns (T0, T1, now)."""
    now = int(time.time())
    t0, t1 = now - 7200, now - 60
    influx.write_lines(accounting_lines(t0, t1, now), precision="n")
    return t0, t1, now
