"""Where an OST's time goes: at the array, or on its server (DESIGN.md §7).

An OST is slow for its clients when its I/O takes long at the server (its service time: the
`read`/`write` latencies of its `stats`). That time is the array's answer plus the server's own
part. The array says how long it takes for the OST's volume (SANtricity's analysed volume
statistics), so the two can be told apart:

- slow at the array: the volume answers slowly at the array (a drive that retries, a
  controller path in trouble); the OSS waits, it is not busy;
- a busy OSS: its CPU is busy, or all its OSTs are slow while the array answers quickly;
- slow at the server: this OST alone is slow at its server while the array answers quickly
  (the path between them: multipath, the SAS link, the block queue).

Plain functions on numbers; the numbers are read by ``services.slowness``.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

# A volume that answers in this much or more at the array is slow, whatever its neighbours
# do (a healthy E-series volume answers in a few ms; a whole slow array is slow too).
SLOW_AT_ARRAY_MS = 20.0
# ... and so is one that answers this many times slower than the array's other volumes, once
# it takes at least SLOWER_THAN_OTHERS_MIN_MS.
SLOWER_THAN_OTHERS = 3.0
SLOWER_THAN_OTHERS_MIN_MS = 10.0
# An OST whose service time at the server is this many times the array's answer and at least
# SLOW_AT_ARRAY_MS is slow on the server's side.
SERVER_SIDE_FACTOR = 3.0

SLOW_AT_ARRAY = "slow_at_array"
BUSY_OSS = "busy_oss"
SLOW_AT_SERVER = "slow_at_server"
NORMAL = "normal"
UNKNOWN = "unknown"


@dataclass(frozen=True)
class VolumeLatency:
    """A volume's mean operations per second and latencies at the array over a window."""

    array: str
    volume: str
    volume_group: str
    read_iops: float = 0.0
    write_iops: float = 0.0
    read_ms: float = 0.0
    write_ms: float = 0.0

    @property
    def iops(self) -> float:
        return self.read_iops + self.write_iops

    @property
    def ms(self) -> float:
        """Reads and writes weighed by how many of each it answered (their mean when idle)."""
        if self.iops > 0:
            return (self.read_iops * self.read_ms + self.write_iops * self.write_ms) / self.iops
        return (self.read_ms + self.write_ms) / 2


def volume_group_ms(volumes: list[VolumeLatency]) -> float | None:
    """The latency of a group's volumes together (weighed by their operations)."""
    if not volumes:
        return None
    total = sum(v.iops for v in volumes)
    if total > 0:
        return sum(v.ms * v.iops for v in volumes) / total
    return statistics.fmean(v.ms for v in volumes)


def typical_ms(values: list[float]) -> float | None:
    """The others' typical figure: their median (one slow neighbour does not move it)."""
    return statistics.median(values) if values else None


def service_ms(first: dict, last: dict) -> float | None:
    """An OST's mean service time (ms) between two readings of its counters (``read_usecs``,
    ``write_usecs``, ``read_calls``, ``write_calls``); None without I/O or after a restart."""
    usecs = calls = 0.0
    for direction in ("read", "write"):
        before, after = first.get(f"{direction}_usecs"), last.get(f"{direction}_usecs")
        count_before, count_after = first.get(f"{direction}_calls"), last.get(f"{direction}_calls")
        if None in (before, after, count_before, count_after):
            continue
        if after < before or count_after < count_before:
            return None  # the counters restarted (a failover, a remount)
        usecs += after - before
        calls += count_after - count_before
    if calls <= 0:
        return None
    return usecs / calls / 1000.0


@dataclass(frozen=True)
class Diagnosis:
    """Why an OST is slow, or that it is not, in a storage administrator's words."""

    verdict: str  # one of the constants above
    text: str
    target: str
    server: str
    volume: str = ""
    volume_group: str = ""
    array: str = ""
    array_ms: float | None = None
    others_ms: float | None = None
    service_ms: float | None = None
    other_osts_ms: float | None = None
    cpu_percent: float | None = None

    def as_dict(self) -> dict:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


def _ms(value: float) -> str:
    return f"{value:.0f} ms" if value >= 10 else f"{value:.1f} ms"


def _cpu(value: float | None) -> str:
    return "CPU unknown" if value is None else f"CPU {value:.0f} %"


def slow_at_array(array_ms: float, others_ms: float | None) -> bool:
    if array_ms >= SLOW_AT_ARRAY_MS:
        return True
    return (
        others_ms is not None
        and array_ms >= SLOWER_THAN_OTHERS_MIN_MS
        and array_ms >= SLOWER_THAN_OTHERS * others_ms
    )


def _slow_at_server(service: float | None, array_ms: float) -> bool:
    return (
        service is not None
        and service >= SLOW_AT_ARRAY_MS
        and service >= SERVER_SIDE_FACTOR * max(array_ms, 0.1)
    )


def diagnose(
    *,
    target: str,
    server: str,
    volume: str,
    volume_group: str,
    array: str,
    array_ms: float | None,
    others_ms: float | None,
    service: float | None,
    other_osts_ms: float | None,
    cpu_percent: float | None,
    cpu_busy_percent: float,
) -> Diagnosis:
    """The verdict on one OST: ``array_ms`` its volume(s) at the array, ``others_ms`` the
    array's other volumes, ``service`` its service time at ``server``, ``other_osts_ms`` that
    server's other OSTs', ``cpu_percent`` the server's busy CPU (busy from ``cpu_busy_percent``)."""
    known = {
        "target": target,
        "server": server,
        "volume": volume,
        "volume_group": volume_group,
        "array": array,
        "array_ms": array_ms,
        "others_ms": others_ms,
        "service_ms": service,
        "other_osts_ms": other_osts_ms,
        "cpu_percent": cpu_percent,
    }
    busy = cpu_percent is not None and cpu_percent >= cpu_busy_percent
    oss = f"the OSS {server}" if server else "its OSS"
    at_server = f"; its service time at {server} is {_ms(service)}" if service is not None else ""
    if array_ms is None:
        if busy:
            return Diagnosis(
                BUSY_OSS,
                f"{oss} is busy ({_cpu(cpu_percent)}); the array has no figures for "
                f"volume group {volume_group} in this window{at_server}",
                **known,
            )
        return Diagnosis(
            UNKNOWN,
            f"The array has no figures for volume group {volume_group} in this window "
            f"(its collector reports once a minute){at_server}",
            **known,
        )
    named = (
        f"volume {volume} ({volume_group})"
        if volume and volume != volume_group
        else f"volume group {volume_group}"
    )
    others = f" (others {_ms(others_ms)})" if others_ms is not None else ""
    if slow_at_array(array_ms, others_ms):
        load = [_cpu(cpu_percent)] if cpu_percent is not None else []
        if other_osts_ms is not None:
            load.append(f"its other OSTs {_ms(other_osts_ms)}")
        if busy:
            oss_state = f"is busy too ({', '.join(load)})"
        else:
            oss_state = "is not busy" + (f" ({', '.join(load)})" if load else "")
        return Diagnosis(
            SLOW_AT_ARRAY,
            f"Slow at the array: {named} answers in {_ms(array_ms)} at the array{others}; "
            f"{oss} {oss_state}{at_server}",
            **known,
        )
    answers = f"the array answers in {_ms(array_ms)} for {named}"
    all_slow = _slow_at_server(service, array_ms) and _slow_at_server(other_osts_ms, array_ms)
    if busy or all_slow:
        why = _cpu(cpu_percent) if busy else f"its other OSTs take {_ms(other_osts_ms or 0)}"
        return Diagnosis(
            BUSY_OSS, f"{oss[0].upper()}{oss[1:]} is busy ({why}), {answers}{at_server}", **known
        )
    if _slow_at_server(service, array_ms):
        return Diagnosis(
            SLOW_AT_SERVER,
            f"Slow on the server's side: the service time at {server} is {_ms(service or 0)} "
            f"while {answers}, and {oss} is not busy ({_cpu(cpu_percent)}): look at its paths "
            f"to the array (multipath) and its block queue",
            **known,
        )
    return Diagnosis(
        NORMAL,
        f"Neither the array nor the OSS is slow: {answers}{at_server}; "
        f"{server or 'its OSS'}: {_cpu(cpu_percent)}",
        **known,
    )
